"""Collectives over a team: every member calls them in the same order.

Counts come from src: reduce and broadcast move src's elements; fcollect
gathers team_n_pes(team) blocks of src's size; alltoall and reducescatter
split src into team_n_pes(team) equal blocks. dst may be larger.

reduce, reducescatter, alltoall, fcollect and broadcast are the C module's
own functions: a collective is a hot call, and every check is in C, as are
the names of the ops (REDUCE_OPS) and of the dtypes (NVSHMEM's included)."""

import time

from symmem import _symmem

REDUCE_OPS = _symmem.REDUCE_OPS

reduce = _symmem.reduce
reducescatter = _symmem.reducescatter
alltoall = _symmem.alltoall
fcollect = _symmem.fcollect
broadcast = _symmem.broadcast


def collective_on_buffer(
    coll, team, dest, src, dtype=None, op=None, root=0, stream=None, enable_timing=False
):
    """Run the collective named coll, on raw Buffers with an explicit dtype.

    NVSHMEM4Py's call: collective over team, as the named call is.

    Args:
        coll: "reduce", "reducescatter", "alltoall", "fcollect" or
            "broadcast".
        team: the team (a Teams member or a Team).
        dest: symmetric memory for the result (a Buffer, array or tensor).
        src: symmetric memory to read.
        dtype: the elements' dtype, as a name: symmem's ("float32") or
            NVSHMEM's ("float", "int", "longlong", ...); None: dest's and
            src's own (a Buffer's is uint8).
        op: for reduce and reducescatter: 'sum', 'min', 'max', 'prod',
            'and', 'or' or 'xor'.
        root: for broadcast: the root's number in team.
        stream: None (complete on return), or a CUDA stream (gpu).
        enable_timing: True to measure the call.

    Returns:
        The time the call took in milliseconds with enable_timing, else 0.0.

    Raises:
        NvshmemInvalid: coll is not one of the five; dtype is not a dtype
            name symmem knows; or anything the named collective raises
            (reduce(), ...).
        NvshmemError: a PE it waits for died, SYMMEM_TIMEOUT seconds
            passed, or the backend failed.

    Example:
        >>> n = symmem.n_pes()
        >>> src, dst = symmem.buffer(8), symmem.buffer(8 * n)
        >>> np.frombuffer(src, dtype=np.float32)[:] = 1.5  # cpu backend
        >>> ms = symmem.collective_on_buffer("fcollect", symmem.Teams.TEAM_WORLD,
        ...                                  dst, src, dtype="float", enable_timing=True)
        >>> ms > 0
        True
        >>> np.frombuffer(dst, dtype=np.float32).tolist() == [1.5] * (2 * n)
        True
        >>> symmem.free(src); symmem.free(dst)
    """
    started = time.perf_counter()
    _symmem.collective(coll, team, dest, src, dtype, op, root, stream)
    return (time.perf_counter() - started) * 1e3 if enable_timing else 0.0


__all__ = ["reduce", "reducescatter", "alltoall", "fcollect", "broadcast", "collective_on_buffer"]
