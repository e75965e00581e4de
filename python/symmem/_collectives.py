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


def collective_on_buffer(coll, team, dest, src, dtype=None, op=None, root=0, stream=None,
                         enable_timing=False):
    """The collective named coll on raw Buffers with an explicit dtype ('float32',
    or NVSHMEM's 'float'); returns the time it took in ms when enable_timing is
    set, else 0."""
    started = time.perf_counter()
    _symmem.collective(coll, team, dest, src, dtype, op, root, stream)
    return (time.perf_counter() - started) * 1e3 if enable_timing else 0.0


__all__ = ["reduce", "reducescatter", "alltoall", "fcollect", "broadcast", "collective_on_buffer"]
