"""A value's bits in a uint64 and back, inside numba-cuda-mlir kernels, for
the device library's p, g and atomics (which move words): through a
one-element local array viewed as an unsigned integer of the same width
(numba-cuda-mlir lowers Array.view; it has no scalar bitcast to call)."""

from numba_cuda_mlir import cuda, types
from numba_cuda_mlir.extending import overload, typing_registry

_UNSIGNED = {8: types.uint8, 16: types.uint16, 32: types.uint32, 64: types.uint64}


def to_bits(elem, value):
    """value converted to the type elem, its bits in a uint64."""


def from_bits(elem, word):
    """The elem value whose bits are the low ones of word."""


@overload(to_bits, inline="always", typing_registry=typing_registry)
def _to_bits(elem, value):
    ty = elem.dtype if isinstance(elem, types.Array) else elem
    word = _UNSIGNED[ty.bitwidth]

    def impl(elem, value):
        tmp = cuda.local.array(1, ty)
        tmp[0] = value
        return types.uint64(tmp.view(word)[0])

    return impl


@overload(from_bits, inline="always", typing_registry=typing_registry)
def _from_bits(elem, word):
    ty = elem.dtype if isinstance(elem, types.Array) else elem
    unsigned = _UNSIGNED[ty.bitwidth]

    def impl(elem, word):
        tmp = cuda.local.array(1, unsigned)
        tmp[0] = unsigned(word)
        return tmp.view(ty)[0]

    return impl
