"""Build-time copies of the GPU code: the one place that turns the CUDA and
PTX files that compilers and editors read into what the builds ship.

- kernels OUT.c: every program of src/backends/gpu/kernels/ (each .cu and
  .ptx file, with the project headers it includes inlined) as a C string,
  symmem__gpu_kernel_<name>_<ext>, for the gpu backend, which hands it to
  NVRTC or the driver at run time (kernels/programs.h declares them). The
  Makefile writes build/gen/kernel_sources.c, setup.py its own in
  build-python/.
- package: the package's copies of the headers that live in include/ and
  src/: python/symmem/device/device.cuh (include/symmem/device.cuh with the
  headers it includes inlined, so NVRTC compiles it with no include path:
  symmem.find_device_library()) and python/symmem/bench/nvshmem_abi.h.
  setup.py writes them on every build, an editable one too; git ignores
  them.

Standard library only: setup.py runs it from an unpacked sdist.

    python3 tools/embed.py kernels build/gen/kernel_sources.c
    python3 tools/embed.py package
"""

import argparse
import os
import re
import sys
from glob import glob

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = os.path.join(ROOT, "include")
KERNELS = os.path.join(ROOT, "src", "backends", "gpu", "kernels")
PACKAGE_COPIES = {  # the package's copy -> what it is made from
    os.path.join("python", "symmem", "device", "device.cuh"): os.path.join(
        "include", "symmem", "device.cuh"
    ),
    os.path.join("python", "symmem", "bench", "nvshmem_abi.h"): os.path.join(
        "src", "backends", "gpu", "nvshmem_abi.h"
    ),
}
_INCLUDE_LINE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[^\n]*\n?', re.M)


def flatten(path, done=None):
    """The text of path with every `#include "name"` that names a project
    file (beside the including file, or under include/) replaced by that
    file's text, each file once; other includes (NVSHMEM's, the system's)
    stay as they are, for the compiler."""
    done = set() if done is None else done
    done.add(os.path.realpath(path))
    here = os.path.dirname(path)

    def inline(match):
        for base in (here, INCLUDE):
            found = os.path.join(base, match.group(1))
            if os.path.isfile(found):
                break
        else:
            return match.group(0)
        if os.path.realpath(found) in done:
            return ""
        return flatten(found, done)

    with open(path, encoding="utf-8") as f:
        return _INCLUDE_LINE.sub(inline, f.read())


def c_string(text):
    """text as a C string literal, one source line per line."""

    def escape(char):
        if char in '\\"':
            return "\\" + char
        if char == "\t":
            return "\\t"
        if char == "?":  # no trigraphs
            return "\\?"
        if " " <= char <= "~":
            return char
        return "".join(f"\\{byte:03o}" for byte in char.encode())

    lines = text.splitlines(keepends=True) or [""]
    return "\n".join(
        '    "'
        + "".join(map(escape, line.rstrip("\n")))
        + ("\\n" if line.endswith("\n") else "")
        + '"'
        for line in lines
    )


def program_files():
    """The programs the gpu backend compiles or loads, by name."""
    return sorted(glob(os.path.join(KERNELS, "*.cu")) + glob(os.path.join(KERNELS, "*.ptx")))


def symbol(path):
    return "symmem__gpu_kernel_" + os.path.basename(path).replace(".", "_")


def kernel_sources():
    """The C file that defines every program as a string."""
    parts = [
        "/* Made by tools/embed.py from src/backends/gpu/kernels/ (edit those files);\n"
        " * declared in kernels/programs.h. */\n"
    ]
    for path in program_files():
        parts.append(
            f"\n/* {os.path.relpath(path, ROOT)} */\n"
            f"const char {symbol(path)}[] =\n{c_string(flatten(path))};\n"
        )
    return "".join(parts)


def write(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def write_if_changed(path, text):
    """Writes text to path unless it holds it already (its time stays)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    write(path, text)


def package_copy(source):
    """What the package ships for source (a path under ROOT)."""
    if source.endswith(".cuh"):
        return (
            f"/* Made from {source} and the headers it includes by tools/embed.py\n"
            f" * (edit those files). */\n" + flatten(os.path.join(ROOT, source))
        )
    with open(os.path.join(ROOT, source), encoding="utf-8") as f:
        return f.read()


def write_package_copies():
    for copy, source in PACKAGE_COPIES.items():
        write_if_changed(os.path.join(ROOT, copy), package_copy(source))


def parse_args(argv):
    """The command and its OUT from argv (without the program); -h/--help
    prints the usage, anything else unknown is refused."""
    parser = argparse.ArgumentParser(
        prog="tools/embed.py",
        description=__doc__.rsplit("\n\n", 1)[0],  # all but the usage lines
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    kernels = commands.add_parser("kernels", help="write the gpu backend's programs as C strings")
    kernels.add_argument("out", metavar="OUT.c", help="the C file to write")
    commands.add_parser("package", help="write the package's copies of the headers")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    if args.command == "kernels":
        write(args.out, kernel_sources())  # newer than what make saw change
    else:
        write_package_copies()


if __name__ == "__main__":
    main(sys.argv[1:])
