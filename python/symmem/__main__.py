"""python -m symmem info: the version and every environment variable symmem reads."""
import os
import sys

from symmem import _symmem

# How info groups the table's rows: (heading, the applies_to values under it).
_SECTIONS = (
    ("set by you", ("all", "cpu", "gpu")),
    ("set by python -m symmem.run for each PE", ("launcher",)),
    ("read from other launchers", ("torchrun", "Open MPI", "Slurm", "MPICH")),
)


def info():
    print(f"symmem {_symmem.VERSION} (OpenSHMEM {_symmem.OPENSHMEM_SPEC_VERSION})")
    rows = _symmem.env_table()
    for heading, groups in _SECTIONS:
        print(f"\nenvironment variables {heading}:")
        for name, default, applies_to, help_text in rows:
            if applies_to not in groups:
                continue
            value = os.environ.get(name)
            shown = f"{value} (set)" if value else (default or "(unset)")
            print(f"  {name:28} {shown:12} [{applies_to}]")
            print(f"  {'':28} {help_text}")
    return 0


def main(argv):
    if argv[:1] in ([], ["info"]):
        return info()
    print("usage: python -m symmem info      (launch PEs with python -m symmem.run)",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
