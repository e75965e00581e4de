"""The GPU code symmem compiles at run time compiles, for sm_90, as the gpu
backend hands it over: every program of src/backends/gpu/kernels/ as
tools/embed.py embeds it (the own collectives: reduce.cu for every dtype
and op, move.cu; the PTX of atomics.ptx and put_signal.ptx; the NVSHMEM
atomics where NVSHMEM's headers are here) and the device library, both the
package's one-file copy of device.cuh (NVRTC, no include path, as
symmem.device.numba compiles it) and include/symmem/ as a CUDA C user
includes it (nvcc). Needs no GPU: a small C program prints the strings the
backend would pass, and NVRTC (of a CUDA toolkit or the CUDA wheel), ptxas
and nvcc compile them. Each test skips, saying why, where its compiler is
missing (docs/testing.md)."""

import ctypes
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "src" / "backends" / "gpu" / "kernels"
ARCH = "sm_90"
DTYPES = 13  # symmem_dtype_t: bool, int8..uint64, float16, bfloat16, float32, float64
FLOATS = range(9, 13)
OPS = 7  # symmem_reduce_op_t: sum, min, max, prod, and, or, xor (the last 3 bitwise)
PROGRAMS = (
    "atomics_ptx",
    "put_signal_ptx",
    "move_cu",
    "nvshmem_atomics_cu",
    "reduce_cu",
    "signal_wait_cu",
)

PRINTER = (
    r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "programs.h"
int main(int argc, char **argv)
{
    static char out[65536];
    if (argc > 2) { /* reduce DTYPE OP */
        if (symmem__gpu_reduce_cu(atoi(argv[1]), atoi(argv[2]), out, sizeof(out)) != 0) return 1;
        fputs(out, stdout);
        return 0;
    }
"""
    + "".join(
        f'    if (strcmp(argv[1], "{name}") == 0) fputs(symmem__gpu_kernel_{name}, stdout);\n'
        for name in PROGRAMS
    )
    + """    return 0;
}
"""
)


def _tool(name):
    for base in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if base and os.access(os.path.join(base, "bin", name), os.X_OK):
            return os.path.join(base, "bin", name)
    return shutil.which(name)


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
PTXAS = _tool("ptxas")
NVCC = _tool("nvcc")
needs_nvrtc = pytest.mark.skipif(NVRTC is None, reason="no NVRTC here (a CUDA toolkit or wheel)")


def load_embed():
    spec = importlib.util.spec_from_file_location("symmem_embed", ROOT / "tools" / "embed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


embed = load_embed()


@pytest.fixture(scope="module")
def printer(tmp_path_factory):
    """A program that prints what the gpu backend hands NVRTC or the driver:
    kernels/programs.c with the strings tools/embed.py makes."""
    folder = tmp_path_factory.mktemp("kernels")
    exe = folder / "print_source"
    (folder / "print_source.c").write_text(PRINTER)
    (folder / "kernel_sources.c").write_text(embed.kernel_sources())
    cc = sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc"
    subprocess.run(
        [
            cc,
            "-std=gnu11",
            "-Wall",
            "-Werror",
            "-I",
            str(ROOT / "include"),
            "-I",
            str(KERNELS),
            "-o",
            str(exe),
            str(folder / "print_source.c"),
            str(KERNELS / "programs.c"),
            str(folder / "kernel_sources.c"),
        ],
        check=True,
    )

    def source(*args):
        return subprocess.run([str(exe), *map(str, args)], capture_output=True, check=True).stdout

    return source


def compile_with_nvrtc(source, options, name=b"source.cu", ptx=None):
    """NVRTC's log; '' when the source compiled, and then warnings are
    errors too. ptx: a list that gets the PTX."""
    program = ctypes.c_void_p()
    assert NVRTC.nvrtcCreateProgram(ctypes.byref(program), source, name, 0, None, None) == 0
    array = (ctypes.c_char_p * len(options))(*options)
    status = NVRTC.nvrtcCompileProgram(program, len(options), array)
    size = ctypes.c_size_t()
    NVRTC.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    NVRTC.nvrtcGetProgramLog(program, log)
    if status == 0 and ptx is not None:
        NVRTC.nvrtcGetPTXSize(program, ctypes.byref(size))
        text = ctypes.create_string_buffer(size.value)
        NVRTC.nvrtcGetPTX(program, text)
        ptx.append(text.value)
    NVRTC.nvrtcDestroyProgram(ctypes.byref(program))
    if status == 0:
        return log.value.decode(errors="replace").strip()
    return log.value.decode(errors="replace") or f"status {status}"


# The backend's options (own_collectives.c), for a real architecture: NVRTC
# then runs ptxas too.
OWN_OPTIONS = [f"-arch={ARCH}".encode(), b"-std=c++17"]
# The same for the virtual architecture: NVRTC makes the same PTX and stops
# there, before ptxas (about half of the time of a compile).
PTX_OPTIONS = [f"-arch=compute_{ARCH[3:]}".encode(), b"-std=c++17"]
# NVRTC's C++ front end only (templates instantiated, static_asserts
# checked): 0.03 against 1.1 s for a reduce variant. (-Xnvvm -opt=0, PTX
# without the optimizer, is fast too, but NVRTC 13.0 keeps that option for
# the process's later compiles: the spill checks below then saw spills.)
SYNTAX_OPTIONS = PTX_OPTIONS + [b"-fdevice-syntax-only"]


def test_every_program_is_embedded_as_its_file_reads(printer):
    # The C strings hold each file's text with the project headers it
    # includes inlined, byte for byte (escapes, tabs, quotes).
    names = {os.path.basename(p).replace(".", "_") for p in embed.program_files()}
    assert names == set(PROGRAMS)
    for path in embed.program_files():
        name = os.path.basename(path).replace(".", "_")
        text = printer(name).decode()
        assert text == embed.flatten(path), name
        assert not [
            line
            for line in text.splitlines()
            if line.startswith('#include "') and "nvshmem" not in line
        ], name


@needs_nvrtc
@pytest.mark.parametrize("dtype", range(DTYPES))
def test_the_own_reduce_compiles_for_every_op_of_a_dtype(printer, dtype):
    # Every op through NVRTC's front end, where the C++ of the dtype and the
    # op meet; the first (sum) to PTX and on through ptxas for sm_90 too:
    # what ptxas decides (registers, spills, shared memory) follows the dtype's element
    # and accumulator, and the op is one combine instruction. The next test
    # assembles 7 more pairs and checks their registers and spills.
    for op in range(OPS):
        if dtype in FLOATS and op >= 4:
            with pytest.raises(subprocess.CalledProcessError):
                printer(dtype, op)  # a bitwise op on a float dtype is refused
            continue
        options = OWN_OPTIONS if op == 0 else SYNTAX_OPTIONS
        log = compile_with_nvrtc(printer(dtype, op), options)
        assert log == "", f"dtype {dtype}, op {op}:\n{log}"


@needs_nvrtc
@pytest.mark.skipif(PTXAS is None, reason="no ptxas here (a CUDA toolkit)")
@pytest.mark.parametrize("dtype, op", [(11, 0), (10, 0), (9, 2), (12, 3), (1, 6), (8, 1), (0, 5)])
def test_the_own_reduce_kernels_fit_their_launch_bounds_without_spills(
    printer, tmp_path, dtype, op
):
    # 512 threads a block (SYMMEM_COLL_THREADS): at most 128 registers a
    # thread, and what does not fit spills to local memory, which the loops
    # over up to 8 PEs' packs must not.
    ptx = []  # the PTX of OWN_OPTIONS (the same bytes), which ptxas below assembles
    log = compile_with_nvrtc(printer(dtype, op), PTX_OPTIONS, ptx=ptx)
    assert log == "", log
    (tmp_path / "reduce.ptx").write_bytes(ptx[0])
    result = subprocess.run(
        [
            PTXAS,
            f"-arch={ARCH}",
            "-v",
            str(tmp_path / "reduce.ptx"),
            "-o",
            str(tmp_path / "reduce.cubin"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    kernels = {}
    for part in result.stderr.split("Compiling entry function '")[1:]:
        name = part.split("'", 1)[0]
        spills = [int(x) for x in re.findall(r"(\d+) bytes spill (?:stores|loads)", part)]
        registers = re.search(r"Used (\d+) registers", part)
        kernels[name] = (sum(spills), int(registers.group(1)) if registers else 0)
    assert set(kernels) == {
        "one_shot",
        "two_shot",
        "ll_reduce",
        "push_one_shot",
        "push_two_shot",
    }, result.stderr
    for name, (spilled, registers) in kernels.items():
        assert spilled == 0 and registers <= 128, (
            f"{name}: {spilled} bytes spilled, {registers} registers\n{result.stderr}"
        )


@needs_nvrtc
def test_the_own_byte_movers_and_sync_compile(printer):
    source = printer("move_cu")
    for name in (b"move16", b"move8", b"move4", b"move2", b"move1", b"sync_only"):
        assert name in source
    log = compile_with_nvrtc(source, OWN_OPTIONS)
    assert log == "", log


@needs_nvrtc
def test_the_symmem_engine_s_signal_wait_compiles(printer):
    source = printer("signal_wait_cu")
    assert b"signal_wait" in source
    log = compile_with_nvrtc(source, OWN_OPTIONS)
    assert log == "", log


# What cuda_vmm_abi.h declares, against cuda.h: the sizes of the structs the
# symmem engine hands the driver, and every number it names.
VMM_ABI_CHECK = r"""
#include <stddef.h>
#include <cuda.h>
#include "cuda_vmm_abi.h"
_Static_assert(sizeof(cu_mem_prop_t) == sizeof(CUmemAllocationProp), "prop");
_Static_assert(offsetof(cu_mem_prop_t, location) == offsetof(CUmemAllocationProp, location), "l");
_Static_assert(offsetof(cu_mem_prop_t, flags) == offsetof(CUmemAllocationProp, allocFlags), "f");
_Static_assert(sizeof(cu_mem_access_t) == sizeof(CUmemAccessDesc), "access");
_Static_assert(sizeof(cu_mem_handle_t) == sizeof(CUmemGenericAllocationHandle), "handle");
"""
VMM_ABI_NUMBERS = [
    "CU_MEM_ALLOCATION_TYPE_PINNED",
    "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR",
    "CU_MEM_LOCATION_TYPE_DEVICE",
    "CU_MEM_ACCESS_FLAGS_PROT_READWRITE",
    "CU_MEM_ALLOC_GRANULARITY_RECOMMENDED",
    "CU_STREAM_NON_BLOCKING",
    "CU_DEVICE_ATTRIBUTE_PCI_BUS_ID",
    "CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID",
    "CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID",
    "CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED",
]


@pytest.mark.skipif(
    NVCC is None
    or not os.path.exists(os.path.join(os.path.dirname(NVCC), "..", "include", "cuda.h")),
    reason="no cuda.h here (a CUDA toolkit)",
)
def test_the_vmm_abi_matches_cuda_h(tmp_path):
    # cuda.h's enumerators and cuda_vmm_abi.h's macros share names: each
    # number is compared through an enum of cuda.h's value, read before the
    # macro is defined.
    include = os.path.join(os.path.dirname(NVCC), "..", "include")
    numbers = "".join(f"enum {{ CUDA_{n} = {n} }};\n" for n in VMM_ABI_NUMBERS)
    checks = "".join(f'_Static_assert(CUDA_{n} == {n}, "{n}");\n' for n in VMM_ABI_NUMBERS)
    source = VMM_ABI_CHECK.replace(
        '#include "cuda_vmm_abi.h"', numbers + '#include "cuda_vmm_abi.h"'
    )
    (tmp_path / "check.c").write_text(
        source + "CUDA_ERROR_CHECK\n".replace("CUDA_ERROR_CHECK", checks)
    )
    cc = sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc"
    result = subprocess.run(
        [
            cc,
            "-std=gnu11",
            "-c",
            "-I",
            include,
            "-I",
            str(KERNELS.parent),
            "-o",
            str(tmp_path / "check.o"),
            str(tmp_path / "check.c"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(PTXAS is None, reason="no ptxas here (a CUDA toolkit)")
@pytest.mark.parametrize("name, kernels", [("atomics_ptx", 14), ("put_signal_ptx", 4)])
def test_the_ptx_modules_assemble(printer, tmp_path, name, kernels):
    source = printer(name)
    assert source.count(b".visible .entry ") == kernels
    (tmp_path / "module.ptx").write_bytes(source)
    result = subprocess.run(
        [
            PTXAS,
            f"-arch={ARCH}",
            str(tmp_path / "module.ptx"),
            "-o",
            str(tmp_path / "module.cubin"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


@needs_nvrtc
def test_the_nvshmem_atomics_compile_against_nvshmem_s_headers(printer):
    headers = [
        p
        for p in glob.glob(
            str(Path(sysconfig.get_paths()["purelib"]) / "nvidia" / "nvshmem" / "include")
        )
    ]
    cuda = [
        d for d in ("/usr/local/cuda/include", "/usr/local/cuda/include/cccl") if os.path.isdir(d)
    ]
    if not headers or len(cuda) < 2:
        pytest.skip("needs the nvidia-nvshmem wheel's headers and a CUDA toolkit's")
    options = [
        f"-arch={ARCH}".encode(),
        b"-rdc=true",
        b"-std=c++17",
        f"-I{headers[0]}".encode(),
    ] + [f"-I{d}".encode() for d in cuda]
    log = compile_with_nvrtc(printer("nvshmem_atomics_cu"), options)
    assert log == "", log


@needs_nvrtc
def test_the_package_s_device_library_compiles_with_no_include_path():
    # symmem.device.numba's options (_library.py), and the plain ones a
    # CuPy RawKernel user's NVRTC takes.
    text = embed.package_copy(os.path.join("include", "symmem", "device.cuh")).encode()
    for options in (
        [f"-arch={ARCH}".encode(), b"-rdc=true", b"-dlto"],
        [f"-arch={ARCH}".encode(), b"-rdc=true"],
    ):
        log = compile_with_nvrtc(text, options, b"symmem_device.cu")
        assert log == "", f"{options}:\n{log}"


@pytest.mark.skipif(NVCC is None, reason="no nvcc here (a CUDA toolkit)")
def test_nvcc_compiles_a_kernel_including_symmem_device_cuh(tmp_path):
    # A CUDA C user's way: -I include, #include <symmem/device.cuh>; nvcc
    # checks device_layout.h's offsets on the host and the device.
    source = tmp_path / "user.cu"
    source.write_text(
        '#include <symmem/device.cuh>\n'
        'extern "C" __global__ void k(symmem_u64 st, symmem_u64 x)\n'
        '{ symmem_dev_put_block(st, x, x + 8, 8, 1); symmem_dev_barrier_all(st); }\n'
    )
    result = subprocess.run(
        [
            NVCC,
            f"-arch={ARCH}",
            "-rdc=true",
            "-c",
            "-I",
            str(ROOT / "include"),
            "-o",
            str(tmp_path / "user.o"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
