"""Issue 48's first two faults on GPU memory, every PE checking what it got:
CuPy arrays of one shape in C and in Fortran order are refused, never
copied transposed; views that leave CuPy's chain of memory (as_strided over
the same memory, cp.from_dlpack, cp.asarray of a __cuda_array_interface__,
torch.from_dlpack) reach their allocation while it lives and are refused
once it is freed, even where a newer allocation has its address.
Run: python -m symmem.run -n 2 tests/gpu/orders_and_views.py"""

import gc

import cupy as cp
import torch

import symmem as nvshmem

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
assert nvshmem.get_version().backend == "gpu", nvshmem.get_version()
nxt, prv = (me + 1) % n, (me - 1) % n
W = nvshmem.Teams.TEAM_WORLD
C_ORDER, F_ORDER = "C order (row-major)", "Fortran order (column-major)"
checks = []


def check(name, cond):
    assert cond, f"PE {me}: {name} failed"
    checks.append(name)


def refused(name, words, fn, *args):
    try:
        fn(*args)
    except nvshmem.NvshmemInvalid as error:
        missing = [word for word in words if word not in str(error)]
        assert not missing, f"PE {me}: {name}: {str(error)!r} lacks {missing}"
        checks.append(name)
        return
    raise AssertionError(f"PE {me}: {name} was not refused")


def grid(pe):
    """PE pe's 3x3 values: 100, 101, ... on PE 0."""
    return (cp.arange(9, dtype=cp.int32) + 100 + 10 * pe).reshape(3, 3)


# 1. C and Fortran order: refused, nothing written; same orders element-wise
c = nvshmem.array((3, 3), dtype="int32")
c2 = nvshmem.array((3, 3), dtype="int32")
f = nvshmem.array((3, 3), dtype="int32", morder="F")
f2 = nvshmem.array((3, 3), dtype="int32", morder="F")
check("morder F is Fortran", f.flags.f_contiguous and not f.flags.c_contiguous)
c[:], f[:], c2[:], f2[:] = grid(me), grid(me), -1, -1
nvshmem.barrier_all()
transposed = ["transposed", f"[pe {me}]"]
refused(
    "put C <- F",
    [f"put: dst is in {C_ORDER} but src is in {F_ORDER}", *transposed],
    nvshmem.put,
    c2,
    f,
    nxt,
)
refused(
    "put F <- C",
    [f"put: dst is in {F_ORDER} but src is in {C_ORDER}", *transposed],
    nvshmem.put,
    f2,
    c,
    nxt,
)
refused("get C <- F", ["get:", *transposed], nvshmem.get, c2, f, nxt)
refused(
    "put C <- private F", ["put:", *transposed], nvshmem.put, c2, cp.asfortranarray(grid(me)), nxt
)
refused("put C <- .T", ["put:", *transposed], nvshmem.put, c2, c.T, nxt)
refused("reduce C <- F", ["reduce", *transposed], nvshmem.reduce, W, c2, f, "sum")
refused(
    "put on a stream C <- F",
    ["put:", *transposed],
    lambda: nvshmem.put(c2, f, nxt, stream=cp.cuda.Stream(non_blocking=True)),
)
nvshmem.barrier_all()
check("nothing written by a refusal", bool((c2 == -1).all() and (f2 == -1).all()))
nvshmem.barrier_all()  # every PE has looked before the next puts land
nvshmem.put(c2, c, nxt)
nvshmem.put(f2, f, nxt)
nvshmem.barrier_all()
check("put C <- C element-wise", bool((c2 == grid(prv)).all()))
check("put F <- F element-wise", bool((f2 == grid(prv)).all()))
nvshmem.barrier_all()  # every PE has looked before the reduce writes f2
nvshmem.reduce(W, f2, f, "sum")
check("reduce F <- F element-wise", bool((f2 == sum(grid(pe) for pe in range(n))).all()))


# 2. views that leave CuPy's chain: live ones work, stale ones are refused
class CudaInterface:  # __cuda_array_interface__ only, holding its array
    def __init__(self, arr):
        self.arr, self.__cuda_array_interface__ = arr, arr.__cuda_array_interface__


a = nvshmem.array((1000,), dtype="float32")
dst = nvshmem.array((1000,), dtype="float32")
a[:], dst[:] = me + 1, -1
views = {
    "as_strided": cp.lib.stride_tricks.as_strided(a, shape=(1000,), strides=(4,)),
    "cp.from_dlpack": cp.from_dlpack(a),
    "cp.asarray of __cuda_array_interface__": cp.asarray(CudaInterface(a)),
    "__cuda_array_interface__": CudaInterface(a),
    "torch.from_dlpack": torch.from_dlpack(a),
}
nvshmem.barrier_all()
for name, view in views.items():
    dst[:] = -1
    nvshmem.barrier_all()
    nvshmem.put(dst, view, nxt)
    nvshmem.barrier_all()
    check(f"a live {name} view as the source", bool((dst == prv + 1).all()))
    nvshmem.put(view, dst, me)  # the view as the destination: a's own values back
    nvshmem.barrier_all()
    check(f"a live {name} view as the destination", bool((a == prv + 1).all()))
    a[:] = me + 1
    nvshmem.barrier_all()

address = a.data.ptr
nvshmem.free_array(a)
del a  # only the views hold it now
newer = nvshmem.array((1000,), dtype="float32")
newer[:] = 7
nvshmem.barrier_all()
for name, view in views.items():
    refused(f"a stale {name} view as the source", ["put:", "freed"], nvshmem.put, dst, view, nxt)
    refused(
        f"a stale {name} view as the destination", ["put:", "freed"], nvshmem.put, view, dst, nxt
    )
nvshmem.barrier_all()
check("newer kept its values", bool((newer == 7).all()))
if newer.data.ptr == address:  # the case the check exists for
    checks.append("the newer allocation has the freed one's address")
del views, view
gc.collect()  # whatever cycles held a freed view
over_newer = cp.from_dlpack(newer)  # no freed Buffer there now: the live one
nvshmem.put(dst, over_newer, nxt)
nvshmem.barrier_all()
check(
    "cp.from_dlpack of the newer allocation once the stale views are gone", bool((dst == 7).all())
)

for arr in (c, c2, f, f2, dst, newer):
    nvshmem.free_array(arr)
nvshmem.finalize()
print(f"PE {me} OK (orders and views, {len(checks)} checks)")
