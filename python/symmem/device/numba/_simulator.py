"""The device names inside numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1)
on the cpu backend: an @numba.cuda.jit program runs unchanged, each CUDA
thread a Python thread, and each device call a Python function over
symmem's host calls on the NumPy arrays behind the kernel's arguments.

What a GPU kernel can call, the simulator can (RMA, signals, waits, the 14
atomics, quiet, fence, barrier_all, sync_all, my_pe, n_pes, the team
barriers and collectives with the device calls' counts, team_my_pe,
team_n_pes, get_peer_array, ask_smem, give_smem, release_smem, with
their scopes; get_multicast_array raises, saying why). Scopes mean
what they mean on the GPU: every simulated thread of the warp (block) calls
the `_warp` (`_block`) form with the same arguments; they meet, the first
thread makes the host call, and they meet again, so nobody goes on before
it is done. A thread-scope barrier_all is one barrier per call (calls of
several threads of a PE are made one after another).

Two things of the simulator change (install()):
- It copies every NumPy array a kernel gets and writes the copy back after
  the kernel, so peers would write into a copy and the write-back would
  overwrite what they stored. A symmetric array (on the symmetric heap) is
  passed as it is, as a CuPy array is to a GPU kernel; others are still
  copied.
- The stubs (_stubs.py) run the functions below when called in a simulated
  kernel's thread.
The simulator runs a launch's blocks one after another: a kernel whose
block waits for a later block of the same launch (on any PE) waits until
SYMMEM_TIMEOUT, where a GPU would have run both at once."""

import threading

import numpy as np

import symmem
from symmem import _symmem
from symmem._capabilities import SMEM_BYTES

from . import _stubs

_SCOPED = (
    "put",
    "get",
    "put_nbi",
    "get_nbi",
    "put_signal",
    "put_signal_nbi",
    "barrier_all",
    "sync_all",
    "barrier",
    "sync",
    "reduce",
    "reducescatter",
    "fcollect",
    "alltoall",
    "broadcast",
)
_ONE_AT_A_TIME = threading.Lock()  # a PE's barriers: several threads' calls one by one
_WARPS = threading.Lock()


def _array(arg):
    """The NumPy array a simulated kernel's array argument wraps."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray, FakeWithinKernelCUDAArray

    if isinstance(arg, FakeWithinKernelCUDAArray):
        arg = arg._item
    return arg._ary if isinstance(arg, FakeCUDAArray) else arg


def _pair(name, dst, src):
    dst, src = _array(dst), _array(src)
    if getattr(dst, "dtype", None) != getattr(src, "dtype", None):
        raise _symmem.invalid(
            f"{name}: dst has dtype {getattr(dst, 'dtype', None)} but src "
            f"has {getattr(src, 'dtype', None)}"
        )
    return dst, src


def _copy(host):
    def run(name, dst, src, pe):
        host(*_pair(name, dst, src), pe)

    return run


def _put_signal(host):
    def run(name, dst, src, sig_addr, signal, sig_op, pe):
        host(*_pair(name, dst, src), _array(sig_addr), signal, sig_op, pe)

    return run


def _signal_wait(name, sig_addr, cmp, cmp_value):
    sig = _array(sig_addr)
    symmem.signal_wait(sig, cmp_value, cmp)  # the host's order: value, then comparison
    return np.uint64(symmem.signal_fetch(sig))


def _with_arrays(host, arrays=1):
    """host with its first `arrays` arguments unwrapped."""

    def run(name, *args):
        return host(*[_array(a) for a in args[:arrays]], *args[arrays:])

    return run


def _one_at_a_time(run):
    """run, with calls of several threads of a PE made one after another."""

    def serial(*args):
        with _ONE_AT_A_TIME:
            return run(*args)

    return serial


# The device calls' counts (_collectives.py), as slices for the host calls,
# which count from src.
def _reduce(name, team, dst, src, op):
    dst, src = _pair(name, dst, src)
    n = min(dst.size, src.size)
    symmem.reduce(team, dst[:n], src[:n], op)


def _reducescatter(name, team, dst, src, op):
    dst, src = _pair(name, dst, src)
    symmem.reducescatter(team, dst, src[: dst.size * symmem.team_n_pes(team)], op)


def _fcollect(name, team, dst, src):
    symmem.fcollect(team, *_pair(name, dst, src))


def _alltoall(name, team, dst, src):
    dst, src = _pair(name, dst, src)
    members = symmem.team_n_pes(team)
    per = dst.size // members if members > 0 else 0
    symmem.alltoall(team, dst, src[: per * members])


def _broadcast(name, team, dst, src, root=0):
    dst, src = _pair(name, dst, src)
    n = min(dst.size, src.size)
    symmem.broadcast(team, dst[:n], src[:n], root)


def _get_peer_array(name, array, pe):
    return symmem.get_peer_array(_array(array), pe)


def _get_multicast_array(name, team, array):
    return symmem.get_multicast_array(team, _array(array))  # raises, saying why


def _ask_smem(name, flag):
    return SMEM_BYTES  # every amount, as in GPU kernels (_smem.py)


_THREAD = {
    "put": _copy(symmem.put),
    "get": _copy(symmem.get),
    "put_nbi": _copy(symmem.put_nbi),
    "get_nbi": _copy(symmem.get_nbi),
    "put_signal": _put_signal(symmem.put_signal),
    "put_signal_nbi": _put_signal(symmem.put_signal_nbi),
    "p": _with_arrays(symmem.p),
    "g": _with_arrays(symmem.g),
    "signal_op": _with_arrays(symmem.signal_op),
    "signal_wait": _signal_wait,
    "wait_until": _with_arrays(symmem.wait_until),
    "quiet": _with_arrays(symmem.quiet, 0),
    "fence": _with_arrays(symmem.fence, 0),
    "my_pe": _with_arrays(symmem.my_pe, 0),
    "n_pes": _with_arrays(symmem.n_pes, 0),
    "barrier_all": _one_at_a_time(lambda name: symmem.barrier_all()),
    "sync_all": _one_at_a_time(lambda name: symmem.sync_all()),
    "barrier": _one_at_a_time(lambda name, team: symmem.barrier(team)),
    "sync": _one_at_a_time(lambda name, team: symmem.sync(team)),
    "reduce": _one_at_a_time(_reduce),
    "reducescatter": _one_at_a_time(_reducescatter),
    "fcollect": _one_at_a_time(_fcollect),
    "alltoall": _one_at_a_time(_alltoall),
    "broadcast": _one_at_a_time(_broadcast),
    "team_my_pe": _with_arrays(symmem.team_my_pe, 0),
    "team_n_pes": _with_arrays(symmem.team_n_pes, 0),
    "get_peer_array": _get_peer_array,
    "get_multicast_array": _get_multicast_array,
    "ask_smem": _ask_smem,
    "give_smem": lambda name, smem: None,
    "release_smem": lambda name: None,
}
for _name in (
    "atomic_fetch",
    "atomic_set",
    "atomic_inc",
    "atomic_fetch_inc",
    "atomic_add",
    "atomic_fetch_add",
    "atomic_and",
    "atomic_fetch_and",
    "atomic_or",
    "atomic_fetch_or",
    "atomic_xor",
    "atomic_fetch_xor",
    "atomic_swap",
    "atomic_compare_swap",
):
    _THREAD[_name] = _with_arrays(getattr(symmem, _name))  # the same argument order


def _group(scope):
    """(whether this thread makes the call, how its warp or block meets)."""
    thread = threading.current_thread()
    if scope == "_block":
        return thread.thread_id == 0, thread.syncthreads
    manager = thread._manager
    warp = thread.thread_id // 32
    with _WARPS:
        warps = manager.__dict__.setdefault("_symmem_warps", {})
        if warp not in warps:  # the last warp of a block may be partial
            threads = int(np.prod(manager._block_dim))
            warps[warp] = threading.Barrier(min(32, threads - 32 * warp))
    return thread.thread_id % 32 == 0, warps[warp].wait


def _scoped(run, scope):
    def scoped(name, *args):
        first, meet = _group(scope)
        meet()  # every thread's earlier stores are done: as the GPU's scope barrier
        try:
            if first:
                run(name, *args)
        finally:
            meet()  # nobody goes on before the call is done

    return scoped


def _in_kernel():
    from numba.cuda.simulator.kernel import BlockThread

    return isinstance(threading.current_thread(), BlockThread)


def _symmetric(ary):
    """Whether a NumPy array lies on this PE's symmetric heap."""
    if not (isinstance(ary, np.ndarray) and _symmem.initialized()):
        return False
    return _symmem.find_allocation(ary.__array_interface__["data"][0]) is not None


def _pass_symmetric_arrays_as_they_are():
    from numba.cuda.simulator.cudadrv import devicearray

    copying = devicearray.auto_device
    if getattr(copying, "symmem", False):
        return

    def auto_device(ary, stream=0, copy=True):
        if _symmetric(ary):
            return devicearray.FakeCUDAArray(ary, stream=stream), False  # nothing to write back
        return copying(ary, stream=stream, copy=copy)

    auto_device.symmem = True
    devicearray.auto_device = auto_device  # args.py imports it at each launch


def install():
    """Makes the device names run in numba-cuda's simulated kernels."""
    _pass_symmetric_arrays_as_they_are()
    table = dict(_THREAD)
    for name in _SCOPED:
        for scope in ("_warp", "_block"):
            table[name + scope] = _scoped(table[name], scope)
    _stubs.SIMULATED.update(table)
    _stubs.in_simulated_kernel = _in_kernel
