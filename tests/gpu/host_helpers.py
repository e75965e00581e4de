"""NVSHMEM4Py's host helpers for device code on the gpu backend, with real cuda.core
modules: every PE checks what its kernels did.
- symmem's device library: a CUDA C kernel over device.cuh
  (find_device_library), compiled by NVRTC through cuda.core, put through
  library_init (its ObjectCode) and module_init (a CUmodule of the same
  cubin), which write the constant device state into it (its contents:
  tests/gpu/device_consts.py); each PE's kernel p's into the next PE.
- NVSHMEM's device library: a module holding `nvshmemi_device_lib_version_d`
  and `nvshmemi_device_state_d` (what libnvshmem_device.bc defines) gets
  NVSHMEM's device state from module_init (mype and npes read back), and
  one with another NVSHMEM version is refused with NvshmemError; on the
  symmem engine, which has no NVSHMEM, module_init of such a module raises
  NotImplementedError naming SYMMEM_GPU_ENGINE=nvshmem.
- finalize counts: a second finalize of a handle raises.
Run: python -m symmem.run -n 2 tests/gpu/host_helpers.py"""

import numpy as np

import symmem as nvshmem
import symmem.device
from symmem import NvshmemKernelObject as K, _symmem

try:
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
except ImportError:  # cuda.core before 0.4
    from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch
from cuda.bindings import driver, runtime

# PEs may share a GPU (the symmem engine): the launcher's local rank, modulo
device = Device(_symmem.launcher()["local_rank"] % runtime.cudaGetDeviceCount()[1])
device.set_current()
nvshmem.init(device=device)
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
assert nvshmem.get_version().backend == "gpu", nvshmem.get_version()
arch = "sm_{}{}".format(*device.compute_capability)


def expect(exc, words, fn, *args):
    try:
        fn(*args)
    except exc as error:
        assert all(w in str(error) for w in words), f"PE {me}: {error!r} lacks {words}"
        return
    raise AssertionError(f"PE {me}: {fn.__name__}{args} raised no {exc.__name__}")


def compile_cubin(code):
    return Program(code, code_type="c++", options=ProgramOptions(arch=arch)).compile("cubin")


def as_module(obj):
    """The same cubin loaded as a CUmodule (the current context: the primary one)."""
    err, module = driver.cuModuleLoadData(obj.code)
    assert err == driver.CUresult.CUDA_SUCCESS, err
    return module


# ---- symmem's device library ----
KERNEL = (
    open(nvshmem.find_device_library()).read()
    + r"""
extern "C" __global__ void p_next(symmem_u64 st, symmem_u64 dst, long long value, int pe)
{
    symmem_dev_p(st, dst, (symmem_u64)value, 8, pe);
    symmem_dev_quiet(st);
}
"""
)
obj = compile_cubin(KERNEL)
lib = K.from_obj(obj)
assert lib.kind == "library", lib
nvshmem.library_init(lib)
nvshmem.library_init(lib)  # counted: two finalizes are due
dst = nvshmem.array((1,), dtype="int64")
dst[:] = -1
nvshmem.barrier_all()
stream = device.create_stream()
launch(
    stream,
    LaunchConfig(grid=1, block=1),
    obj.get_kernel("p_next"),
    np.uint64(symmem.device.state_address()),
    np.uint64(dst.data.ptr),
    np.int64(100 + me),
    np.int32(nxt),
)
stream.sync()
nvshmem.barrier_all()
assert int(dst.get()[0]) == 100 + prv, f"PE {me}: got {dst.get()}, expected {100 + prv}"
nvshmem.library_finalize(lib)
nvshmem.library_finalize(lib)
expect(
    nvshmem.NvshmemInvalid,
    ["library_finalize: lib=", "is not initialised"],
    nvshmem.library_finalize,
    lib,
)
expect(
    nvshmem.NvshmemInvalid,
    ["module_init: mod=", "is a CUlibrary, not a CUmodule"],
    nvshmem.module_init,
    obj,
)

module = as_module(obj)
nvshmem.module_init(K.from_cuda_bindings(module))
nvshmem.module_finalize(int(module))  # the same handle, as a plain int
expect(
    nvshmem.NvshmemInvalid,
    ["module_finalize: mod=", "is not initialised"],
    nvshmem.module_finalize,
    module,
)

# ---- NVSHMEM's device library: module_init copies NVSHMEM's device state in ----
NVSHMEM_LIKE = r"""
extern "C" __constant__ int nvshmemi_device_lib_version_d[3] = {%d, %d, %d};
// NVSHMEM copies its nvshmemi_device_host_state_t (776 bytes in 3.4) here: room to spare
extern "C" __constant__ int nvshmemi_device_state_d[8192];
extern "C" __global__ void touch(int *out)
{
    out[0] = nvshmemi_device_state_d[1] + nvshmemi_device_lib_version_d[0];
}
"""


def state_ints(module):
    err, address, size = driver.cuModuleGetGlobal(module, b"nvshmemi_device_state_d")
    assert err == driver.CUresult.CUDA_SUCCESS, err
    words = np.zeros(3, dtype=np.int32)
    (err,) = driver.cuMemcpyDtoH(words, address, words.nbytes)
    assert err == driver.CUresult.CUDA_SUCCESS, err
    return words.tolist()


if nvshmem.get_version().engine == "symmem":
    # no NVSHMEM to fill its state: refused, naming the engine that has it
    nv_module = other = as_module(compile_cubin(NVSHMEM_LIKE % (3, 4, 5)))
    expect(
        NotImplementedError,
        ["module_init: mod=", "links NVSHMEM's device library", "SYMMEM_GPU_ENGINE=nvshmem"],
        nvshmem.module_init,
        nv_module,
    )
else:
    version = nvshmem.get_version().libnvshmem_version
    major, minor, patch = (int(x) for x in version.split("."))
    nv_module = as_module(compile_cubin(NVSHMEM_LIKE % (major, minor, patch)))
    assert state_ints(nv_module) == [0, 0, 0]
    nvshmem.module_init(K.from_cuda_bindings(nv_module))
    _, mype, npes = state_ints(nv_module)  # the head of nvshmemi_device_host_state_t
    assert (mype, npes) == (me, n), f"PE {me}: state has mype {mype}, npes {npes}"
    nvshmem.module_finalize(K.from_cuda_bindings(nv_module))
    expect(nvshmem.NvshmemInvalid, ["is not initialised"], nvshmem.module_finalize, nv_module)

    other = as_module(compile_cubin(NVSHMEM_LIKE % (major + 1, 0, 0)))
    expect(
        nvshmem.NvshmemError,
        ["module_init: mod=", "links NVSHMEM's device library", "nvshmemx_cumodule_init failed"],
        nvshmem.module_init,
        other,
    )
    expect(nvshmem.NvshmemInvalid, ["is not initialised"], nvshmem.module_finalize, other)

for m in {module, nv_module, other}:
    driver.cuModuleUnload(m)
nvshmem.free_array(dst)
nvshmem.finalize()
expect(
    nvshmem.NvshmemInvalid, ["library_init: symmem is not initialized"], nvshmem.library_init, obj
)
print(f"PE {me} OK (host helpers)", flush=True)
