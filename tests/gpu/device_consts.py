"""The constant device state (device.cuh's symmem_device_consts) in modules
that link symmem's device library, on 2+ GPUs. Every PE reads the copy in
its loaded modules back and checks it against what the host knows, and
checks the data its kernels delivered:
- a Numba kernel's module is attached when numba-cuda loads it: magic, PE,
  the heap's span, and where every peer's heap is mapped here (each delta
  against get_peer_array's address);
- an allocation after the load widens the span in the loaded module, and a
  kernel put into it delivers;
- finalize writes magic 0 into it (its calls then take the slow path and
  fail, named); a second init writes it back, and the same compiled kernel
  delivers into the new heap;
- a user's cubin over device.cuh gets it from library_init, and keeps the
  last copy after library_finalize (it is no longer written).
Run: python -m symmem.run -n 2 tests/gpu/device_consts.py"""

import symmem.device.numba as dev  # before numba.cuda: puts back np.row_stack on NumPy 2.5

import numba
import numpy as np
from cuda.bindings import driver
from numba import cuda

import symmem as nvshmem
from symmem import _device_host, _symmem

numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
cuda.select_device(_symmem.launcher()["local_rank"] % len(cuda.gpus))
MAGIC = 0x3156454D4D4D5953

attached = []  # what numba-cuda's load hook passed (it may call a hook twice a load)
_attach = _device_host.attach_loaded


def recording_attach(library, handle):
    attached.append((library, handle))
    _attach(library, handle)


_device_host.attach_loaded = recording_attach


def consts(library, handle):
    """The module's symmem_device_consts as a dict."""
    if library:
        err, at, size = driver.cuLibraryGetGlobal(driver.CUlibrary(handle), b"symmem_device_consts")
    else:
        err, at, size = driver.cuModuleGetGlobal(driver.CUmodule(handle), b"symmem_device_consts")
    assert err == driver.CUresult.CUDA_SUCCESS, err
    words = np.zeros(size // 8, dtype=np.uint64)
    (err,) = driver.cuMemcpyDtoH(words, at, size)
    assert err == driver.CUresult.CUDA_SUCCESS, err
    pes = words[1:2].view(np.int32)
    peers = int(words[5:6].view(np.int32)[0])
    return {
        "magic": int(words[0]),
        "my_pe": int(pes[0]),
        "n_pes": int(pes[1]),
        "heap_base": int(words[2]),
        "heap_end": int(words[3]),
        "peers": peers,
        "delta": [int(d) for d in words[6 : 6 + peers]],
    }


def check_consts(library, handle, arrays, tag):
    c = consts(library, handle)
    assert c["magic"] == MAGIC and (c["my_pe"], c["n_pes"]) == (me, n), f"PE {me} {tag}: {c}"
    assert c["peers"] == n, f"PE {me} {tag}: {c['peers']} peers"
    for a in arrays:
        start = a.data.ptr
        span = f"[{c['heap_base']:#x}, {c['heap_end']:#x})"
        assert c["heap_base"] <= start and start + a.nbytes <= c["heap_end"], (
            f"PE {me} {tag}: [{start:#x}, +{a.nbytes}) not in {span}"
        )
        for pe in range(n):
            peer = nvshmem.get_peer_array(a, pe).data.ptr
            assert c["delta"][pe] == peer - start, (
                f"PE {me} {tag}: delta[{pe}] {c['delta'][pe]:#x}, host says {peer - start:#x}"
            )
    return c


@cuda.jit
def put_next(dst, src, pe):
    dev.put(dst, src, pe)
    dev.quiet()


def put_round(dst, tag):
    src = cuda.to_device(np.arange(dst.size, dtype=np.int64) + 1000 * (me + 1))
    dst[:] = -1
    nvshmem.barrier_all()
    put_next[1, 1](cuda.as_cuda_array(dst), src, nxt)
    cuda.synchronize()
    nvshmem.barrier_all()
    want = np.arange(dst.size, dtype=np.int64) + 1000 * (prv + 1)
    got = dst.get()
    assert np.array_equal(got, want), f"PE {me} {tag}: got {got[:4]}..., want {want[:4]}..."


nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n

# ---- a Numba kernel's module, attached when loaded ----
first = nvshmem.array((4,), dtype="int64")
put_round(first, "first put")
assert len(set(attached)) == 1, f"PE {me}: modules loaded: {attached}"
library, handle = attached[0]
check_consts(library, handle, [first], "after the load")

# ---- an allocation after the load ----
later = nvshmem.array((1 << 17,), dtype="int64")  # 1 MiB, past the span the module was given
check_consts(library, handle, [first, later], "after a later malloc")
put_round(later, "put into a later allocation")

# ---- finalize, then a second init ----
nvshmem.free_array(first)
nvshmem.free_array(later)
nvshmem.finalize()
assert consts(library, handle)["magic"] == 0, f"PE {me}: magic left after finalize"
nvshmem.init()
again = nvshmem.array((8,), dtype="int64")
check_consts(library, handle, [again], "after the second init")
put_round(again, "put after the second init")
assert len(set(attached)) == 1, f"PE {me}: the module was loaded again: {attached}"

# ---- a user's cubin over device.cuh, through library_init ----
try:
    from cuda.core import Device, Program, ProgramOptions
except ImportError:  # cuda.core before 0.4
    from cuda.core.experimental import Device, Program, ProgramOptions
arch = "sm_{}{}".format(*Device().compute_capability)
code = (
    open(nvshmem.find_device_library()).read()
    + r"""
extern "C" __global__ void p_next(symmem_u64 st, symmem_u64 dst, long long v, int pe)
{ symmem_dev_p(st, dst, (symmem_u64)v, 8, pe); }
"""
)
obj = Program(code, code_type="c++", options=ProgramOptions(arch=arch)).compile("cubin")
user = int(obj.handle)
assert consts(True, user)["magic"] == 0, f"PE {me}: a module nobody attached has the state"
nvshmem.library_init(obj)
check_consts(True, user, [again], "after library_init")
nvshmem.library_finalize(obj)
end = consts(True, user)["heap_end"]
bigger = nvshmem.array((1 << 18,), dtype="int64")
assert consts(True, user)["heap_end"] == end, f"PE {me}: written after library_finalize"
check_consts(library, handle, [again, bigger], "the numba module, beside")

nvshmem.free_array(again)
nvshmem.free_array(bigger)
nvshmem.finalize()
print(f"PE {me} OK (device consts)")
