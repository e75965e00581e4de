"""symmem.device.triton without a GPU: every public function compiles on
both engines (Triton compiles for sm_90 on any machine; the NVSHMEM engine
where the nvidia-nvshmem wheel's bitcode is found), the compile-time errors
name the call, and the Python side refuses what it cannot pass. Skipped
where Triton is not installed; the GPU runs are tests/gpu/triton_device.py
(test_gpu.py)."""

import contextlib
import re
import subprocess
import tempfile

import numpy as np
import pytest

triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import symmem  # noqa: E402
import symmem.device.triton as sdt  # noqa: E402
from symmem.bench import triton_kernels as bench  # noqa: E402
from symmem.device.triton import _api, _own, _runtime  # noqa: E402


def _bitcode():
    try:
        return symmem.find_device_bitcode_library()
    except (symmem.NvshmemError, symmem.NvshmemInvalid):
        return None


ENGINES = [
    "symmem",
    pytest.param(
        "nvshmem",
        marks=pytest.mark.skipif(
            _bitcode() is None, reason="no NVSHMEM device bitcode (the nvidia-nvshmem wheel)"
        ),
    ),
]


@contextlib.contextmanager
def _engine(name):
    """The engine's constexprs as configure() sets them, with made-up
    device addresses (nothing runs)."""
    saved = _api.ENGINE, _own.CONSTS, _own.STATE
    _api.ENGINE = _api.NVSHMEM if name == "nvshmem" else _api.OWN
    _own.STATE, _own.CONSTS = tl.constexpr(0x7F0000001000), tl.constexpr(0x7F0000001080)
    try:
        yield
    finally:
        _api.ENGINE, _own.CONSTS, _own.STATE = saved


def _compile(engine, fn, signature, constexprs=None, **options):
    if engine == "nvshmem":
        options["extern_libs"] = {"libnvshmem_device": _bitcode()}
    with _engine(engine):
        return triton.compile(
            ASTSource(fn=fn, signature=signature, constexprs=constexprs or {}),
            target=GPUTarget("cuda", 90, 32),
            options=options,
        )


def _compile_error(*args):
    """The messages of the error compiling raises, and of the errors it was
    raised from (Triton names the kernel's line, then the cause)."""
    with pytest.raises(Exception) as info:
        _compile(*args)
    messages, error = [], info.value
    while error is not None:
        messages.append(str(error))
        error = error.__cause__ or error.__context__
    return "\n".join(messages)


@triton.jit
def every_rma_call(dst, src, sig, n, pe):
    sdt.put(dst, src, n, pe)
    sdt.get(dst, src, n, pe)
    sdt.put_nbi(dst, src, n, pe)
    sdt.get_nbi(dst, src, n, pe)
    sdt.putmem_block(dst, src, n * 4, pe)
    sdt.getmem_block(dst, src, n * 4, pe)
    sdt.putmem_nbi_block(dst, src, n * 4, pe)
    sdt.getmem_nbi_block(dst, src, n * 4, pe)
    sdt.putmem_signal_block(dst, src, n * 4, sig, 1, sdt.SIGNAL_ADD, pe)
    sdt.putmem_signal_nbi_block(dst, src, n * 4, sig, 1, sdt.SIGNAL_SET, pe)
    sdt.signal_op(sig, 3, sdt.SIGNAL_ADD, pe)
    got = sdt.signal_wait_until(sig, sdt.CMP_GE, 2)
    sdt.wait_until(sig, sdt.CMP_NE, 0)
    sdt.fence()
    sdt.quiet()
    sdt.p(dst, sdt.g(src, pe) + sdt.my_pe() + sdt.n_pes() + got.to(tl.float32), pe)
    tl.store(sdt.remote_ptr(dst, pe) + tl.arange(0, 4), tl.load(src + tl.arange(0, 4)))


@triton.jit
def every_collective(dst, src, n, team):
    sdt.barrier_all()
    sdt.sync_all()
    sdt.barrier(team)
    sdt.sync(team)
    sdt.alltoall(team, dst, src, n)
    sdt.fcollect(team, dst, src, n)
    sdt.broadcast(team, dst, src, n, 0)
    sdt.reduce(team, dst, src, n, "sum")
    sdt.reduce(team, dst, src, n, "min")
    tl.store(dst, sdt.team_my_pe(team) + sdt.team_n_pes(team))


@triton.jit
def every_atomic(d, v, pe):
    a = sdt.atomic_fetch(d, pe)
    sdt.atomic_set(d, v, pe)
    b = sdt.atomic_swap(d, v, pe)
    c = sdt.atomic_compare_swap(d, a, v, pe)
    e = sdt.atomic_fetch_add(d, v, pe)
    sdt.atomic_add(d, v, pe)
    f = sdt.atomic_fetch_inc(d, pe)
    sdt.atomic_inc(d, pe)
    g = sdt.atomic_fetch_and(d, v, pe) + sdt.atomic_fetch_or(d, v, pe)
    sdt.atomic_and(d, v, pe)
    sdt.atomic_or(d, v, pe)
    sdt.atomic_xor(d, v, pe)
    tl.store(d, a + b + c + e + f + g + sdt.atomic_fetch_xor(d, v, pe))


@triton.jit
def wait_on(ivar, v):
    sdt.wait_until(ivar, sdt.CMP_EQ, v)


@triton.jit
def mixed_put(dst, src, n, pe):
    sdt.put(dst, src, n, pe)


@triton.jit
def reduce_by(dst, src, n, OP: tl.constexpr):
    sdt.reduce(sdt.TEAM_WORLD, dst, src, n, OP)


@pytest.mark.parametrize("engine", ENGINES)
def test_every_call_compiles_on_the_engine(engine):
    rma = _compile(
        engine,
        every_rma_call,
        {"dst": "*fp32", "src": "*fp32", "sig": "*u64", "n": "i32", "pe": "i32"},
    )
    _compile(engine, every_collective, {"dst": "*bf16", "src": "*bf16", "n": "i32", "team": "i32"})
    for t in ("i32", "u32", "i64", "u64"):
        _compile(engine, every_atomic, {"d": f"*{t}", "v": "i32", "pe": "i32"})
    ptx = rma.asm["ptx"]
    if engine == "symmem":
        # the memory model in the code: acquire spins, release signal updates,
        # quiet's fence, and the error record's trap
        # and the constant table read as read-only memory
        for word in (
            "ld.acquire.sys",
            "atom.global.sys.release",
            "fence.sc.sys",
            "trap",
            "ld.global.nc",
        ):
            assert word in ptx, word
    else:
        # NVSHMEM's thread-scope calls run on thread 0 of the program
        assert "%tid.x" in ptx and "nvshmem" in ptx.lower()


COPY_CHUNKS = {
    "dst": "*u8",
    "src": "*u8",
    "chunk": "i64",
    "total": "i64",
    "pe": "i32",
    "reps": "i32",
    "slots": "i32",
    "GET": "constexpr",
}  # the bench's copy kernel


@pytest.mark.parametrize("engine", ENGINES)
def test_the_bench_s_kernels_compile_on_the_engine(engine):
    # python -m symmem.bench runs them only on GPUs (device_triton.py)
    for get in (False, True):
        _compile(engine, bench.copy_chunks.kernel, COPY_CHUNKS, {"GET": get})
        _compile(
            engine,
            bench.latency_loop.kernel,
            {
                "dst": "*u8",
                "src": "*u8",
                "pe": "i32",
                "count": "i32",
                "slots": "i32",
                "GET": "constexpr",
            },
            {"GET": get},
        )
        _compile(
            engine,
            bench.ping_pong.kernel,
            {
                "buf": "*u8",
                "src": "*u8",
                "sig": "*u64",
                "rounds": "i32",
                "peer": "i32",
                "FIRST": "constexpr",
            },
            {"FIRST": get},
        )


def _registers(kernel):
    """Registers a thread of the compiled kernel takes (Triton's ptxas -v)."""
    from triton.backends.nvidia.compiler import get_ptxas

    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as ptx:
        ptx.write(kernel.asm["ptx"])
        ptx.flush()
        out = subprocess.run(
            [get_ptxas(90).path, "-arch=sm_90a", "-v", ptx.name, "-o", "/dev/null"],
            capture_output=True,
            text=True,
            check=True,
        )
    return int(re.search(r"Used (\d+) registers", out.stdout + out.stderr).group(1))


def test_a_1024_thread_copy_leaves_room_for_two_programs_an_sm():
    # 65536 registers an SM: two programs of 1024 threads need <= 32 a
    # thread; past that a grid of 2 programs per SM runs at half occupancy
    for get in (False, True):
        kernel = _compile(
            "symmem", bench.copy_chunks.kernel, COPY_CHUNKS, {"GET": get}, num_warps=32
        )
        registers = _registers(kernel)
        assert registers <= 32, ("get" if get else "put", registers)


@pytest.mark.parametrize("engine", ENGINES)
def test_wait_until_takes_every_integer_width(engine):
    widths = ["i16", "u16", "i32", "u32", "i64", "u64"] + (
        ["i8", "u8"] if engine == "symmem" else []
    )
    for t in widths:
        _compile(engine, wait_on, {"ivar": f"*{t}", "v": "i32"})


@pytest.mark.skipif(_bitcode() is None, reason="no NVSHMEM device bitcode")
def test_nvshmem_s_missing_8_bit_wait_until_is_named_at_compile_time():
    error = _compile_error("nvshmem", wait_on, {"ivar": "*i8", "v": "i32"})
    assert "NVSHMEM has no wait_until for 8-bit integers (symmem's engine has)" in error


def test_a_put_between_element_types_is_refused_at_compile_time():
    error = _compile_error(
        "symmem", mixed_put, {"dst": "*fp32", "src": "*i32", "n": "i32", "pe": "i32"}
    )
    assert "put: dest and source must have the same element type" in error


@triton.jit
def reduce_in_place(x, n):
    sdt.reduce(sdt.TEAM_WORLD, x, x, n, "sum")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_reduce_in_place_compiles_on_the_engine(engine):
    # one array as dest and source: Triton 3.6 folded the own engine's
    # address comparison, and its coalescing pass failed an assertion
    for t in ("fp32", "bf16", "i32"):
        _compile(engine, reduce_in_place, {"x": f"*{t}", "n": "i32"})
        _compile(engine, reduce_in_place, {"x": f"*{t}", "n": "i32"}, num_warps=32)


def test_reduce_names_the_operations_it_has():
    for op in ("sum", "prod", "max", "min", "and", "or", "xor"):
        _compile(
            "symmem",
            reduce_by,
            {"dst": "*i32", "src": "*i32", "n": "i32", "OP": "constexpr"},
            {"OP": op},
        )
    error = _compile_error(
        "symmem",
        reduce_by,
        {"dst": "*i32", "src": "*i32", "n": "i32", "OP": "constexpr"},
        {"OP": "mean"},
    )
    assert "reduce: operation must be sum, prod, max, min, and, or or xor" in error


def test_requires_symmem_takes_only_a_triton_jit_function():
    with pytest.raises(TypeError) as info:
        sdt.requires_symmem(lambda x: x)
    assert "requires_symmem: expected a @triton.jit function, got function" in str(info.value)
    kernel = sdt.requires_symmem(wait_on)
    assert isinstance(kernel, sdt.SymmemKernel) and kernel.fn is wait_on.fn


class _DeviceArray:
    """What a CuPy array shows Triton: __cuda_array_interface__ and a dtype."""

    def __init__(self, address, dtype):
        self.dtype = np.dtype(dtype)
        self.__cuda_array_interface__ = {
            "data": (address, False),
            "shape": (4,),
            "typestr": self.dtype.str,
            "version": 3,
        }


def test_device_arrays_pass_as_typed_pointers():
    pointer = _runtime._argument(_DeviceArray(0x7F0000002000, "float32"))
    assert pointer.data_ptr() == 0x7F0000002000 and pointer.dtype == tl.float32
    assert _runtime._argument(5) == 5  # anything else is Triton's to take
    with pytest.raises(symmem.NvshmemInvalid) as info:
        _runtime._argument(_DeviceArray(0x7F0000002000, "complex64"))
    assert "a kernel argument of dtype 'complex64' has no Triton element type" in str(info.value)


def test_the_signal_and_comparison_values_are_nvshmem_s():
    assert (sdt.SIGNAL_SET, sdt.SIGNAL_ADD) == (
        int(symmem.SignalOp.SIGNAL_SET),
        int(symmem.SignalOp.SIGNAL_ADD),
    )
    for name in ("CMP_EQ", "CMP_NE", "CMP_GT", "CMP_LE", "CMP_LT", "CMP_GE"):
        assert getattr(sdt, name) == int(getattr(symmem.ComparisonType, name)), name


def test_triton_kernels_on_the_cpu_backend_are_refused_naming_the_backend(tmp_path):
    # NotImplementedError, as every gpu-only call on the cpu backend
    import subprocess
    import sys

    code = (
        "import symmem, symmem.device.triton as sdt\n"
        "symmem.init(backend='cpu')\n"
        "try:\n    sdt.configure()\n"
        "except NotImplementedError as e:\n    print('ERR', e)\n"
        "symmem.finalize()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert (
        "symmem.device.triton: Triton kernels need the gpu backend; the running backend is cpu"
    ) in result.stdout, result.stdout + result.stderr
    assert sdt.engine() is None  # nothing was fixed in this process either
