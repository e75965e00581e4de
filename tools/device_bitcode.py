"""Builds device.bc: symmem's device library (the package's device.cuh) as
LLVM bitcode, which CuTe DSL kernels link through cute.extern
(symmem.device.cute's own engine: python/symmem/device/cute/_own.py).

CuTe DSL 4.x links LLVM bitcode only (NVRTC's LTO-IR is refused:
"Unsupported representation: ltoir"), and NVRTC cannot write bitcode, so
clang compiles the library here, with no CUDA headers: the few CUDA names
it uses come from include/symmem/device_clang.cuh. clang 14 is enough (it
targets sm_80 with PTX 7.5 features; CuTe's libNVVM links and inlines the
functions into kernels for sm_90 and later, checked with CuTe DSL 4.8.1).
setup.py runs this where clang is on PATH (or SYMMEM_CLANG names one); git
ignores the output. Standard library only.

    python3 tools/device_bitcode.py [OUT]     (default python/symmem/device/device.bc)
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "python", "symmem", "device", "device.bc")
HEADER = os.path.join(ROOT, "include", "symmem", "device.cuh")
PRELUDE = os.path.join(ROOT, "include", "symmem", "device_clang.cuh")
# The data layout CuTe's kernels (libNVVM's) carry: linking a module with
# clang's shorter spelling of the same layout makes every compile warn.
NVVM_LAYOUT = (
    "e-p:64:64:64-p3:32:32:32-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-"
    "i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-"
    "n16:32:64"
)
FLAGS = [
    "-x",
    "cuda",
    "--cuda-device-only",
    "--cuda-gpu-arch=sm_80",
    "-nocudainc",
    "-nocudalib",
    "--no-cuda-version-check",
    "-Xclang",
    "-target-feature",
    "-Xclang",
    "+ptx75",
    "-O2",
    "-emit-llvm",
    "-c",
    "-Wno-unknown-cuda-version",
]


def clang():
    """The clang to use, or None."""
    return os.environ.get("SYMMEM_CLANG") or shutil.which("clang")


def build(out=OUT, compiler=None):
    """Compiles device.cuh into out; raises CalledProcessError with clang's
    messages if it fails."""
    compiler = compiler or clang()
    if compiler is None:
        raise FileNotFoundError("no clang on PATH (set SYMMEM_CLANG)")
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "device.cu")
        with open(source, "w") as f:  # device.cuh finds its headers by #include "..."
            f.write(f'#include "{HEADER}"\n')
        tmp_out = os.path.join(tmp, "device.bc")
        subprocess.run(
            [
                compiler,
                *FLAGS,
                "-include",
                PRELUDE,
                "-I",
                os.path.join(ROOT, "include", "symmem"),
                source,
                "-o",
                tmp_out,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        _nvvm_layout(compiler, tmp_out, tmp)
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        shutil.copyfile(tmp_out, out)
    return out


def _nvvm_layout(compiler, bitcode, tmp):
    """Rewrites bitcode's data layout to NVVM_LAYOUT, where llvm-dis and
    llvm-as of clang's version are at hand (else it stays: CuTe links it
    all the same, warning about the layouts)."""
    folder = os.path.dirname(os.path.realpath(shutil.which(compiler) or compiler))
    tools = [
        os.path.join(folder, t) if os.path.exists(os.path.join(folder, t)) else shutil.which(t)
        for t in ("llvm-dis", "llvm-as")
    ]
    if None in tools:
        return
    text = os.path.join(tmp, "device.ll")
    try:
        subprocess.run([tools[0], bitcode, "-o", text], check=True, capture_output=True)
        with open(text) as f:
            lines = [
                f'target datalayout = "{NVVM_LAYOUT}"\n'
                if line.startswith("target datalayout")
                else line
                for line in f
            ]
        with open(text, "w") as f:
            f.writelines(lines)
        subprocess.run([tools[1], text, "-o", bitcode], check=True, capture_output=True)
    except subprocess.CalledProcessError:
        pass  # the bitcode clang wrote is still there


def parse_args(argv):
    """OUT from argv (argv[0] is the program); -h/--help prints the usage,
    and a word that looks like an option is refused, never taken for OUT."""
    parser = argparse.ArgumentParser(
        prog="tools/device_bitcode.py",
        description=__doc__.rsplit("\n\n", 1)[0],  # all but the usage line
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "out",
        nargs="?",
        default=OUT,
        metavar="OUT",
        help="where to write the bitcode (default: %s)" % os.path.relpath(OUT, ROOT),
    )
    return parser.parse_args(argv[1:])


def main(argv):
    out = parse_args(argv).out
    try:
        print(build(out))
    except subprocess.CalledProcessError as error:
        sys.stderr.write(error.stderr)
        return 1
    except FileNotFoundError as error:
        sys.stderr.write(f"device_bitcode: {error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
