"""NVSHMEM4Py's raw device bindings (nvshmem.bindings.device) on symmem:
NVSHMEM's device functions under their C names, with pointers and counts,
for kernels of three DSLs:

    import symmem.bindings.device.numba              # @numba.cuda.jit kernels
    import symmem.bindings.device.numba_cuda_mlir    # numba-cuda-mlir's @cuda.jit
    import symmem.bindings.device.cute               # CuTe DSL's @cute.kernel

Each has every function of NVSHMEM4Py 0.4.1's module of that name, with its
names, argument orders and types (int32_put_block(dest, source, nelems, pe),
signal_wait_until(sig_addr, cmp, cmp_value), int_p(dest, value, pe), ...),
served by symmem's device library (device.cuh); CuTe's can also call
NVSHMEM's own device bitcode (SYMMEM_CUTE_ENGINE, as symmem.device.cute).
The functions are made from one table (_table.py) by a loop; a name symmem
cannot serve fails the kernel's compile with an error naming it and why.
symmem.device.numba (and .numba_cuda_mlir, .cute) is the friendlier layer
on arrays and tensors; docs/device.md says when to use which."""
