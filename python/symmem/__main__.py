"""python -m symmem info: the version and the environment variables."""
import os
import sys

from symmem import _symmem


def info():
    print(f"symmem {_symmem.VERSION} (OpenSHMEM {_symmem.OPENSHMEM_SPEC_VERSION})")
    print("environment variables:")
    for name, default, help_text in _symmem.env_table():
        value = os.environ.get(name)
        shown = f"{value} (set)" if value else (default or "(unset)")
        print(f"  {name:24} {shown}")
        print(f"  {'':24} {help_text}")
    return 0


def main(argv):
    if argv[:1] in ([], ["info"]):
        return info()
    print("usage: python -m symmem info      (launch PEs with python -m symmem.run)",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
