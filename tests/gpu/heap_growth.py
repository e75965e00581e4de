"""The symmem engine's heap (run with SYMMEM_GPU_ENGINE=symmem and
SYMMEM_SYMMETRIC_SIZE=3G, on any number of PEs, which may share a GPU):
get_version() names the engine and no NVSHMEM; arrays allocated one after
another make the heap grow, every PE's data moves between PEs in each, and
what an earlier array holds survives the growth; freed memory is reused;
an allocation beyond SYMMEM_SYMMETRIC_SIZE fails on every PE, naming it,
and the heap works on after it. Prints "PE k OK (heap growth)"."""

import cupy as cp

import symmem as nvshmem

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
version = nvshmem.get_version()
assert (version.backend, version.engine, version.libnvshmem_version) == ("gpu", "symmem", ""), (
    version
)
assert nvshmem.get_name() == f"symmem v{version.symmem_version}", nvshmem.get_name()


def fill(array, pe, salt):
    array[:] = cp.arange(array.size, dtype=array.dtype) * 3 + pe * 1000 + salt


def expect(array, pe, salt, what):
    want = cp.arange(array.size, dtype=array.dtype) * 3 + pe * 1000 + salt
    assert bool((array == want).all()), f"PE {me}: {what}: wrong data"


# a small array first, then ones that make the heap grow several times
first = nvshmem.array((1000,), dtype="int64")
fill(first, me, 7)
grown = []
for mib in (16, 48, 300, 900):
    src = nvshmem.array((mib << 18,), dtype="float32")  # mib MiB
    dst = nvshmem.array((mib << 18,), dtype="float32")
    fill(src, me, mib)
    dst[:] = -1
    cp.cuda.runtime.deviceSynchronize()
    nvshmem.barrier_all()
    nvshmem.put(dst, src, nxt)
    nvshmem.barrier_all()
    expect(dst, prv, mib, f"a put into the {mib} MiB array")
    got = cp.zeros_like(src)
    nvshmem.get(got, src, nxt)
    expect(got, nxt, mib, f"a get from the {mib} MiB array")
    grown.append((src, dst))
expect(first, me, 7, "the first array after the heap grew")
peer = nvshmem.get_peer_array(first, nxt)
expect(peer, nxt, 7, "a peer view of the first array after the heap grew")

# freed memory is reused: the same size comes back at the same address
src, dst = grown.pop()
where = src.data.ptr
nvshmem.free_array(dst)
nvshmem.free_array(src)
again = nvshmem.array((900 << 18,), dtype="float32")
assert again.data.ptr == where, f"PE {me}: freed memory was not reused"
nvshmem.free_array(again)

# beyond SYMMEM_SYMMETRIC_SIZE (3G): every PE fails, and the heap goes on
try:
    nvshmem.array((1 << 30,), dtype="float32")  # 4 GiB
except nvshmem.NvshmemError as error:
    assert "SYMMEM_SYMMETRIC_SIZE" in str(error), f"PE {me}: {error}"
else:
    raise AssertionError(f"PE {me}: an allocation beyond the limit succeeded")
last = nvshmem.array((1000,), dtype="int64")
fill(last, me, 9)
nvshmem.barrier_all()
nvshmem.put(first, last, nxt)
nvshmem.barrier_all()
expect(first, prv, 9, "a put after the failed allocation")
for src, dst in grown:
    nvshmem.free_array(dst)
    nvshmem.free_array(src)
nvshmem.free_array(last)
nvshmem.free_array(first)
nvshmem.finalize()
print(f"PE {me} OK (heap growth)", flush=True)
