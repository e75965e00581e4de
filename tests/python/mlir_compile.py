"""Compiles numba-cuda-mlir kernels that make every
symmem.device.numba_cuda_mlir call (float32 at every scope; the typed
calls for a few dtypes of each kind: each kernel takes 15-60 s here) to
LTO-IR for sm_90 and links
each with symmem's device library into a cubin (cuda.core's Linker,
nvJitLink), with no GPU: numba-cuda-mlir asks the driver for the GPU's
compute capability, so this sets its cached answer (sm_90) first.
test_cute_mlir.py runs it in a subprocess. Compiled, never run: it proves
names, types and the link, not behaviour (tests/gpu/mlir_device.py does).

    python tests/python/mlir_compile.py

Prints "compiled and linked N kernels" and exits 0, or the error and exits 1."""

import sys
import time

import numba_cuda_mlir.tools as tools

tools._cached_cc = (9, 0)  # what the driver would say on an H100

from cuda.core import Linker, LinkerOptions, ObjectCode  # noqa: E402
from numba_cuda_mlir import cuda, types  # noqa: E402

import symmem.device.numba_cuda_mlir as dev  # noqa: E402
from symmem.device._ltoir import ltoir  # noqa: E402
from symmem.device.numba_cuda_mlir import _calls, _collectives  # noqa: E402


def _state(call):
    return 0x7F0000001000  # no init here: any address compiles


_calls.state_address = _collectives.state_address = _state


def scoped(dst, src, sig, i64):
    pe = (dev.my_pe() + 1) % dev.n_pes()
    dev.put(dst, src, pe)
    dev.put_nbi(dst, src, pe)
    dev.get(dst, src, pe)
    dev.get_nbi(dst, src, pe)
    dev.put_warp(dst, src, pe)
    dev.put_nbi_warp(dst, src, pe)
    dev.get_warp(dst, src, pe)
    dev.get_nbi_warp(dst, src, pe)
    dev.put_block(dst, src, pe)
    dev.put_nbi_block(dst, src, pe)
    dev.get_block(dst, src, pe)
    dev.get_nbi_block(dst, src, pe)
    dev.put_signal(dst, src, sig, 1, dev.SIGNAL_SET, pe)
    dev.put_signal_nbi_warp(dst, src, sig, 1, dev.SIGNAL_ADD, pe)
    dev.put_signal_block(dst, src, sig, 1, dev.SIGNAL_SET, pe)
    dev.signal_op(sig, 2, dev.SIGNAL_SET, pe)
    dev.signal_wait(sig, dev.CMP_GE, 1)
    dev.wait_until(i64, dev.CMP_EQ, 4)
    dev.quiet()
    dev.fence()
    dev.barrier_all()
    dev.barrier_all_warp()
    dev.sync_all_block()
    dev.barrier(dev.Teams.TEAM_WORLD)
    dev.sync_warp(0)
    dev.barrier_block(0)
    dev.reduce(0, dst, src, "sum")
    dev.reduce_warp(0, dst, src, "min")
    dev.reducescatter_block(0, dst, src, "max")
    dev.fcollect(0, dst, src)
    dev.alltoall_warp(0, dst, src)
    dev.broadcast_block(0, dst, src, 1)
    dev.team_my_pe(0)
    dev.team_n_pes(dev.Teams.TEAM_WORLD)


def typed(dst, src, sig, i64):
    pe = (dev.my_pe() + 1) % dev.n_pes()
    dev.put_block(dst, src, pe)
    dev.p(dst, dev.g(src, pe), pe)
    dev.reduce_block(0, dst, src, "sum")
    dev.broadcast(0, dst, src, 0)


def atomics(dst, src, sig, i64):
    pe = (dev.my_pe() + 1) % dev.n_pes()
    dev.atomic_set(dst, dev.atomic_fetch(src, pe), pe)
    dev.atomic_swap(dst, 1, pe)
    dev.atomic_add(dst, 1, pe)
    dev.atomic_fetch_add(dst, 1, pe)


def int_atomics(dst, src, sig, i64):
    pe = (dev.my_pe() + 1) % dev.n_pes()
    dev.atomic_inc(dst, pe)
    dev.atomic_compare_swap(dst, 1, 2, pe)
    dev.atomic_fetch_inc(dst, pe)
    dev.atomic_and(dst, 1, pe)
    dev.atomic_fetch_and(dst, 1, pe)
    dev.atomic_or(dst, 1, pe)
    dev.atomic_fetch_or(dst, 1, pe)
    dev.atomic_xor(dst, 1, pe)
    dev.atomic_fetch_xor(dst, 1, pe)
    dev.reduce(0, dst, src, "xor")


def build(kernel, dtype):
    sig = (dtype[::1], dtype[::1], types.uint64[::1], types.int64[::1])
    code, _ = cuda.compile(kernel, sig, device=False, abi="numba", output="ltoir", cc=(9, 0))
    objects = [
        ObjectCode.from_ltoir(code, name="kernel"),
        ObjectCode.from_ltoir(ltoir("sm_90"), name="symmem_device"),
    ]
    options = LinkerOptions(arch="sm_90", link_time_optimization=True)
    return len(bytes(Linker(*objects, options=options).link("cubin").code))


def main():
    t0, count = time.time(), 0
    plan = [(scoped, types.float32)]
    plan += [(typed, t) for t in (types.int8, types.uint16, types.float16, types.float64)]
    plan += [(atomics, t) for t in (types.uint64, types.float32)]
    plan += [(int_atomics, types.int32)]
    for kernel, dtype in plan:
        try:
            build(kernel, dtype)
        except Exception as error:
            print(f"{kernel.__name__} {dtype}: {type(error).__name__}: {error}")
            return 1
        count += 1
    print(f"compiled and linked {count} kernels in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
