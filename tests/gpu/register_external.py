"""register_external_* on the gpu backend: CUDA VMM memory that the program
allocated itself becomes symmetric; a put into it lands on the peer, and
memory NVSHMEM cannot map is refused with a clear error. NVSHMEM maps it in
granules of NVSHMEM_CUMEM_GRANULARITY bytes (512 MiB unless set).
Run: NVSHMEM_CUMEM_GRANULARITY=2097152 python -m symmem.run -n 2 tests/gpu/register_external.py"""

import os

import cupy as cp
import numpy as np
import torch
from cuda.bindings import driver as cu

import symmem as nvshmem
import symmem.bindings as bindings


def checked(result):
    """cuda.bindings returns (CUresult, values...)."""
    error, *values = result if isinstance(result, tuple) else (result,)
    assert error == cu.CUresult.CUDA_SUCCESS, error
    return values[0] if len(values) == 1 else values


def vmm_alloc(nbytes, device):
    """nbytes (rounded up to the granularity) of CUDA VMM memory, shareable
    by POSIX file descriptor as NVSHMEM needs it."""
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = device
    prop.requestedHandleTypes = (
        cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    )
    granularity = checked(
        cu.cuMemGetAllocationGranularity(
            prop, cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
        )
    )
    size = -(-nbytes // granularity) * granularity
    handle = checked(cu.cuMemCreate(size, prop, 0))
    address = checked(cu.cuMemAddressReserve(size, granularity, 0, 0))
    checked(cu.cuMemMap(address, size, 0, handle, 0))
    access = cu.CUmemAccessDesc()
    access.location = prop.location
    access.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    checked(cu.cuMemSetAccess(address, size, [access], 1))
    return int(address), size, handle


def vmm_free(address, size, handle):
    checked(cu.cuMemUnmap(address, size))
    checked(cu.cuMemRelease(handle))
    checked(cu.cuMemAddressFree(address, size))


nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
device = cp.cuda.runtime.getDevice()
granule = int(os.environ.get("NVSHMEM_CUMEM_GRANULARITY", 512 << 20))
address, size, handle = vmm_alloc(granule, device)
count = size // 4
mine = cp.ndarray(
    (count,),
    dtype=cp.float32,
    memptr=cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(address, size, None), 0),
)
mine[:] = -1

# an array: the result is a CuPy array over the symmetric address
sym = nvshmem.register_external_array(mine)
assert isinstance(sym, cp.ndarray) and sym.shape == mine.shape and sym.dtype == mine.dtype
src = nvshmem.array((count,), dtype="float32")
src[:] = cp.arange(count, dtype=cp.float32) + 1000 * me
nvshmem.barrier_all()
nvshmem.put(sym, src, nxt)
nvshmem.barrier_all()
expected = np.arange(count, dtype=np.float32) + 1000 * prv
assert np.array_equal(cp.asnumpy(mine), expected), "the put did not land in the external memory"
assert np.array_equal(cp.asnumpy(sym), expected)
# collectives take it too
nvshmem.reduce(nvshmem.Teams.TEAM_WORLD, sym[:256], src[:256], "sum")
assert np.array_equal(
    cp.asnumpy(mine[:256]), sum(np.arange(256, dtype=np.float32) + 1000 * p for p in range(n))
)
# free() refuses it; unregister ends it
try:
    nvshmem.free(nvshmem.array_get_buffer(sym)[0])
    raise AssertionError("free() of registered memory did not raise")
except nvshmem.NvshmemInvalid as error:
    assert "unregister" in str(error), error
nvshmem.unregister_external_array(sym)
try:
    nvshmem.put(sym, src, nxt)
    raise AssertionError("put into unregistered memory did not raise")
except nvshmem.NvshmemInvalid as error:
    assert "symmetric" in str(error), error

# a torch tensor and a raw buffer over the same memory
view = torch.from_dlpack(mine).view(torch.int32)
tsym = nvshmem.register_external_tensor(view)
assert tsym.is_cuda and tsym.dtype == torch.int32 and tsym.shape == view.shape
tsym.fill_(me)
nvshmem.barrier_all()
assert nvshmem.g(tsym, nxt) == nxt
nvshmem.unregister_external_tensor(tsym)


class RawMemory:  # what cuda.core's Buffer offers: an address and a byte size
    handle, size = address, size


bsym = nvshmem.register_external_buffer(RawMemory())
assert bsym.size == size and bsym.device_id == device
nvshmem.unregister_external_buffer(bsym)
try:
    nvshmem.unregister_external_buffer(bsym)
    raise AssertionError("unregistering twice did not raise")
except nvshmem.NvshmemInvalid:
    pass

# NVSHMEM4Py's bindings: the same registration by address
for register in (
    lambda: bindings.buffer_register_symmetric(address, size, 0),
    lambda: bindings.buffer_register_symmetric_at_preferred_address(address, size, address, 0),
):
    mine[:] = -1
    at = register()
    over = cp.ndarray(
        (count,),
        dtype=cp.float32,
        memptr=cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(at, size, None), 0),
    )
    nvshmem.barrier_all()
    nvshmem.put(over, src, nxt)
    nvshmem.barrier_all()
    assert np.array_equal(cp.asnumpy(mine), expected), "a put by the bindings' address"
    try:
        bindings.buffer_unregister_symmetric(at, size - 1)
        raise AssertionError("unregistering with the wrong size did not raise")
    except nvshmem.NvshmemInvalid as error:
        assert "buffer_unregister_symmetric: size=" in str(error), error
    assert bindings.buffer_unregister_symmetric(at, size) == 0

# memory from cudaMalloc is not VMM memory, and both engines map whole
# granules: both are refused on every PE, before anything is mapped
GRANULE_WORDS = (
    "VMM granularity" if nvshmem.get_version().engine == "symmem" else "NVSHMEM_CUMEM_GRANULARITY"
)
plain = cp.zeros(size, dtype=cp.uint8)
for bad, words in (
    (plain, ["register_external_array", "not CUDA VMM memory"]),
    (mine[: count // 2], ["register_external_array", GRANULE_WORDS]),
):
    try:
        nvshmem.register_external_array(bad)
        raise AssertionError(f"registering {words[1]} did not raise")
    except nvshmem.NvshmemInvalid as error:
        assert all(word in str(error) for word in words), error
nvshmem.free_array(src)
nvshmem.barrier_all()
nvshmem.finalize()
vmm_free(address, size, handle)
print(f"PE {me} OK (register_external)")
