"""data_address(arr): the address of an array's first element as uint64,
inside numba-cuda-mlir kernels, which the device library's calls take. A
lowering of symmem's own (the memref's aligned pointer plus its offset,
numba-cuda-mlir's memref_data_pointer, then ptrtoint), as
symmem.device.numba's data_address intrinsic is for numba-cuda: the package
reaches C through the extension and kernels, never through ctypes or cffi
(test_layout.py)."""

from numba_cuda_mlir import types
from numba_cuda_mlir._mlir.dialects import llvm
from numba_cuda_mlir._mlir.extras import types as T
from numba_cuda_mlir.extending import lower_builtin, refresh_registries, type_callable
from numba_cuda_mlir.lowering_utilities import memref_data_pointer


def data_address(arr):
    """The address of arr's first element (uint64), in kernels."""
    raise TypeError("data_address: for numba-cuda-mlir kernels")


@type_callable(data_address)
def _typer(context):
    def typer(arr):
        if isinstance(arr, types.Array):
            return types.uint64
        return None

    return typer


@lower_builtin(data_address, types.Array)
def _lower(builder, target, args, kwargs):
    (array,) = builder.load_vars(args)
    builder.store_var(target, llvm.ptrtoint(res=T.i64(), arg=memref_data_pointer(array)))


refresh_registries()
