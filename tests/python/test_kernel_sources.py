"""The CUDA C the gpu backend writes at run time compiles: the own
collectives (kernels/reduce_cu.c for every dtype and op, kernels/move_cu.c's
byte movers and sync), and the NVSHMEM
atomics (kernels/nvshmem_atomics_cu.c) where NVSHMEM's headers are here.
Needs no GPU: the generators run in a small C program, and NVRTC (of a CUDA
toolkit or the CUDA wheel) compiles what they print, with the options the
backend uses. A machine without NVRTC skips these tests."""
import ctypes
import glob
import os
import subprocess
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "src" / "backends" / "gpu" / "kernels"
DTYPES = 13  # symmem_dtype_t: bool, int8..uint64, float16, bfloat16, float32, float64
FLOATS = range(9, 13)
OPS = 7  # symmem_reduce_op_t: sum, min, max, prod, and, or, xor (the last 3 bitwise)

PRINTER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collectives.h"
#include "atomics.h"
int main(int argc, char **argv)
{
    static char out[65536];
    int failed = argc > 2   ? symmem__gpu_reduce_cu(atoi(argv[1]), atoi(argv[2]), out,
                                                    sizeof(out))
                 : argc > 1 ? symmem__gpu_move_cu(out, sizeof(out))
                            : symmem__gpu_nvshmem_atomics_cu(out, sizeof(out));
    if (failed) return 1;
    fputs(out, stdout);
    return 0;
}
"""


def _nvrtc():
    candidates = [os.environ.get("SYMMEM_NVRTC_LIB", "")]
    for base in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if base:
            candidates += sorted(glob.glob(f"{base}/lib*/libnvrtc.so.1[0-9]"))
    candidates += ["libnvrtc.so.13", "libnvrtc.so.12"]
    for name in filter(None, candidates):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


NVRTC = _nvrtc()
pytestmark = pytest.mark.skipif(NVRTC is None, reason="no NVRTC here (a CUDA toolkit or wheel)")


@pytest.fixture(scope="module")
def printer(tmp_path_factory):
    exe = tmp_path_factory.mktemp("kernels") / "print_source"
    source = exe.with_suffix(".c")
    source.write_text(PRINTER)
    cc = sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc"
    subprocess.run([cc, "-std=gnu11", "-I", str(ROOT / "include"), "-I", str(KERNELS),
                    "-o", str(exe), str(source), str(KERNELS / "reduce_cu.c"),
                    str(KERNELS / "meet_cu.c"), str(KERNELS / "move_cu.c"),
                    str(KERNELS / "nvshmem_atomics_cu.c")], check=True)
    return exe


def compile_with_nvrtc(source, options):
    """NVRTC's log; '' when the source compiled."""
    program = ctypes.c_void_p()
    assert NVRTC.nvrtcCreateProgram(ctypes.byref(program), source, b"source.cu", 0, None,
                                    None) == 0
    array = (ctypes.c_char_p * len(options))(*options)
    status = NVRTC.nvrtcCompileProgram(program, len(options), array)
    size = ctypes.c_size_t()
    NVRTC.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    NVRTC.nvrtcGetProgramLog(program, log)
    NVRTC.nvrtcDestroyProgram(ctypes.byref(program))
    return "" if status == 0 else log.value.decode(errors="replace") or f"status {status}"


@pytest.mark.parametrize("dtype", range(DTYPES))
def test_the_own_reduce_compiles_for_every_op_of_a_dtype(printer, dtype):
    for op in range(OPS):
        if dtype in FLOATS and op >= 4:
            assert subprocess.run([str(printer), str(dtype), str(op)]).returncode != 0, (
                f"a bitwise op {op} on float dtype {dtype} must be refused")
            continue
        source = subprocess.run([str(printer), str(dtype), str(op)], capture_output=True,
                                check=True).stdout
        log = compile_with_nvrtc(source, [b"-arch=compute_90", b"-std=c++17"])
        assert log == "", f"dtype {dtype}, op {op}:\n{log}"


def test_the_own_byte_movers_and_sync_compile(printer):
    source = subprocess.run([str(printer), "move"], capture_output=True, check=True).stdout
    for name in (b"move16", b"move8", b"move4", b"move2", b"move1", b"sync_only"):
        assert name in source
    log = compile_with_nvrtc(source, [b"-arch=compute_90", b"-std=c++17"])
    assert log == "", log


def test_the_nvshmem_atomics_compile_against_nvshmem_s_headers(printer):
    headers = [p for p in glob.glob(str(Path(sysconfig.get_paths()["purelib"]) / "nvidia" /
                                        "nvshmem" / "include"))]
    cuda = [d for d in ("/usr/local/cuda/include", "/usr/local/cuda/include/cccl")
            if os.path.isdir(d)]
    if not headers or len(cuda) < 2:
        pytest.skip("needs the nvidia-nvshmem wheel's headers and a CUDA toolkit's")
    source = subprocess.run([str(printer)], capture_output=True, check=True).stdout
    options = [b"-arch=compute_90", b"-rdc=true", b"-std=c++17",
               f"-I{headers[0]}".encode()] + [f"-I{d}".encode() for d in cuda]
    log = compile_with_nvrtc(source, options)
    assert log == "", log
