"""ask_smem, give_smem, release_smem and get_multicast_array inside
@numba.cuda.jit kernels on the gpu backend (the names and why: _smem.py)."""

from numba.cuda.extending import overload

from symmem._capabilities import SMEM_BYTES

from . import _smem


@overload(_smem.ask_smem, target="cuda")
def _ask_smem(flag):
    _smem.check_flag(flag)
    return lambda flag: SMEM_BYTES


@overload(_smem.give_smem, target="cuda")
def _give_smem(smem):
    _smem.check_smem(smem)
    return lambda smem: None


@overload(_smem.release_smem, target="cuda")
def _release_smem():
    return lambda: None


@overload(_smem.get_multicast_array, target="cuda")
def _get_multicast_array(team, array):
    raise _smem.refuse_multicast(team, array)
