"""Compiles CuTe DSL kernels that make every symmem.device.cute call for
every dtype (at thread scope; at every scope for SCOPED_DTYPES: the scope
does not depend on the dtype), for sm_90a, on one engine, with no GPU
(test_cute_mlir.py runs it in a subprocess: the engine is fixed per
process). The kernels are only compiled, never run: the calls are traced,
linked with the engine's bitcode and assembled by ptxas, which proves the
names, the argument types and the link, not the behaviour (tests/gpu/
cute_device.py checks that on GPUs).

    python tests/python/cute_compile.py symmem|nvshmem [NVSHMEM_BITCODE [--names]]

With --names (the NVSHMEM engine: linking its bitcode takes minutes a
kernel) the kernels are only traced (CUTE_DSL_DRYRUN) and every NVSHMEM
function they call is looked up among the bitcode's definitions
(llvmlite): the names and the dtypes' variants, not the link.

Prints "compiled N kernels" (or "traced N kernels ...") and exits 0, or the
error and exits 1."""

import os
import sys
import time

NAMES_ONLY = "--names" in sys.argv
if NAMES_ONLY:
    sys.argv.remove("--names")
    os.environ["CUTE_DSL_DRYRUN"] = "1"  # read when cutlass is imported

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

import symmem._device_host as host
import symmem.device.cute as dev
from symmem.device import _library_calls as L
from symmem.device.cute import _engine, _externs, _values

ENGINE = sys.argv[1]
if len(sys.argv) > 2:
    host.find_device_bitcode_library = lambda *a, **k: sys.argv[2]
_engine._engine = ENGINE
_engine.state = lambda call: 0x7F0000001000  # no init here: any address compiles
SCOPES = ("", "_warp", "_block")
SCOPED_DTYPES = ("float32", "int8")  # every dtype at thread scope, these at every scope
ATOMIC_INTS = ("int32", "int64", "uint32", "uint64")


def every_call(dtype, dst, src, sig, word):
    """Trace-time Python: one call of everything that takes dtype."""
    pe = (dev.my_pe() + 1) % dev.n_pes()
    for scope in SCOPES if dtype in SCOPED_DTYPES else ("",):
        for name in ("put", "put_nbi", "get", "get_nbi"):
            getattr(dev, name + scope)(dst, src, pe)
        for name in ("put_signal", "put_signal_nbi"):
            getattr(dev, name + scope)(dst, src, sig, 1, dev.SIGNAL_ADD, pe)
        for name in ("fcollect", "alltoall"):
            getattr(dev, name + scope)(dev.Teams.TEAM_WORLD, dst, src)
        getattr(dev, "broadcast" + scope)(0, dst, src, 0)
        for op in L.REDUCE_OPS:
            if op in L.BITWISE_OPS and dtype in _values.FLOATS:
                continue
            getattr(dev, "reduce" + scope)(0, dst, src, op)
            getattr(dev, "reducescatter" + scope)(0, dst, src, op)
    dev.p(dst, dev.g(src, pe), pe)
    peer = dev.get_peer_tensor(dst, pe)
    peer[0] = src[0]
    if dtype not in _values.FLOATS and (ENGINE == "symmem" or dtype not in ("int8", "uint8")):
        dev.wait_until(dst, dev.CMP_EQ, 1)  # NVSHMEM has no 8-bit waits
    if dtype in ATOMIC_INTS or dtype in ("float32", "float64"):
        for name, args in L.ATOMIC_ARGS.items():
            if dtype not in ATOMIC_INTS and name not in L.ATOMICS_FLOAT:
                continue
            if ENGINE == "nvshmem" and dtype in _values.FLOATS and "add" in name:
                continue  # NVSHMEM has no float adds (the own engine has)
            getattr(dev, name)(dst, *([1] * len(args)), pe)


def no_dtype_calls(sig):
    pe = (dev.my_pe() + 1) % dev.n_pes()
    dev.signal_op(sig, 2, dev.SIGNAL_SET, pe)
    dev.signal_wait(sig, dev.CMP_GE, 1)
    dev.quiet()
    dev.fence()
    dev.team_my_pe(dev.Teams.TEAM_WORLD)
    dev.team_n_pes(0)
    for scope in SCOPES:
        getattr(dev, "barrier_all" + scope)()
        getattr(dev, "sync_all" + scope)()
        getattr(dev, "barrier" + scope)(0)
        getattr(dev, "sync" + scope)(0)
    dev.ask_smem(dev.SmemAmount.SMEM_RECOMMENDED)
    dev.release_smem()


DTYPE = None


@cute.kernel
def kernel(dst: cute.Tensor, src: cute.Tensor, sig: cute.Tensor):
    every_call(DTYPE, dst, src, sig, None)


@cute.kernel
def plain(sig: cute.Tensor):
    no_dtype_calls(sig)


@cute.jit
def launch(dst: cute.Tensor, src: cute.Tensor, sig: cute.Tensor):
    kernel(dst, src, sig).launch(grid=(1, 1, 1), block=(128, 1, 1))


@cute.jit
def launch_plain(sig: cute.Tensor):
    plain(sig).launch(grid=(1, 1, 1), block=(128, 1, 1))


CALLED = set()  # NVSHMEM's functions the kernels call
_declare_nvshmem = _externs.nvshmem


def _recording(symbol, ret, params):
    CALLED.add(symbol)
    return _declare_nvshmem(symbol, ret, params)


_externs.nvshmem = _recording


def missing_from_bitcode(path):
    import llvmlite.binding as llvm

    with open(path, "rb") as f:
        module = llvm.parse_bitcode(f.read())
    defined = {fn.name for fn in module.functions if not fn.is_declaration}
    return sorted(CALLED - defined)


def main():
    count, t0 = 0, time.time()
    sig = make_fake_compact_tensor(cutlass.Uint64, (1,))
    cute.compile(launch_plain, sig, options="--gpu-arch sm_90a")
    count += 1
    global DTYPE
    for name, t in _values.DTYPES.items():
        DTYPE = name
        a, b = make_fake_compact_tensor(t, (256,)), make_fake_compact_tensor(t, (256,))
        try:
            cute.compile(launch, a, b, sig, options="--gpu-arch sm_90a")
        except Exception as error:
            print(f"{ENGINE} {name}: {error}")
            return 1
        count += 1
    if NAMES_ONLY:
        missing = missing_from_bitcode(sys.argv[2])
        if missing:
            print(f"not in {sys.argv[2]}: {missing}")
            return 1
        print(
            f"traced {count} kernels on the {ENGINE} engine: all {len(CALLED)} NVSHMEM "
            f"functions they call are in its bitcode ({time.time() - t0:.0f} s)"
        )
        return 0
    print(f"compiled {count} kernels on the {ENGINE} engine in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
    sys.exit(main())
