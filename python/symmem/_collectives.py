"""Collectives over a team: every member calls them in the same order.

Counts come from src: reduce and broadcast move src's elements; fcollect
gathers team_n_pes(team) blocks of src's size; alltoall and reducescatter
split src into team_n_pes(team) equal blocks. dst may be larger."""
import time

from symmem import _symmem
from symmem._errors import invalid
from symmem._teams import _team_int

_KINDS = {"reduce": 0, "reducescatter": 1, "alltoall": 2, "fcollect": 3, "broadcast": 4}
REDUCE_OPS = ("sum", "min", "max", "prod", "and", "or", "xor")

# NVSHMEM's dtype names, as collective_on_buffer takes them.
_DTYPE_NAMES = {"half": "float16", "float": "float32", "double": "float64", "char": "int8",
                "schar": "int8", "short": "int16", "int": "int32", "long": "int64",
                "longlong": "int64", "uchar": "uint8", "ushort": "uint16", "uint": "uint32",
                "ulong": "uint64", "ulonglong": "uint64", "size": "uint64", "ptrdiff": "int64"}


_OP_CODES = {name: code for code, name in enumerate(REDUCE_OPS)}


def _op_code(op, call):
    code = _OP_CODES.get(op) if isinstance(op, str) else None
    if code is not None:
        return code
    name = getattr(op, "name", op)
    name = name.lower() if isinstance(name, str) else name
    if name not in REDUCE_OPS:
        raise invalid(f"{call}: op={op!r} is not one of {', '.join(REDUCE_OPS)}")
    return REDUCE_OPS.index(name)


def _run(kind, team, dst, src, op=None, root=0, stream=None, dtype=None):
    handle = _team_int(team, kind)
    code = _op_code(op, kind) if kind in ("reduce", "reducescatter") else 0
    if isinstance(root, bool) or not isinstance(root, int):
        raise invalid(f"{kind}: root={root!r} must be an int")
    _symmem.collective(_KINDS[kind], handle, dst, src, code, root, stream, dtype)


# reduce, reducescatter, alltoall, fcollect and broadcast are the C module's
# own functions (symmem.reduce, ...): a collective is a hot call, and every
# check is in C.
reduce = _symmem.reduce
reducescatter = _symmem.reducescatter
alltoall = _symmem.alltoall
fcollect = _symmem.fcollect
broadcast = _symmem.broadcast


def collective_on_buffer(coll, team, dest, src, dtype=None, op=None, root=0, stream=None,
                         enable_timing=False):
    """A collective on raw Buffers with an explicit dtype; returns the time it
    took in ms when enable_timing is set, else 0."""
    if coll not in _KINDS:
        raise invalid(f"collective_on_buffer: coll={coll!r} is not one of {', '.join(_KINDS)}")
    name = None if dtype is None else _DTYPE_NAMES.get(str(dtype), str(dtype))
    started = time.perf_counter()
    _run(coll, team, dest, src, op=op, root=root, stream=stream, dtype=name)
    return (time.perf_counter() - started) * 1e3 if enable_timing else 0.0


__all__ = ["reduce", "reducescatter", "alltoall", "fcollect", "broadcast", "collective_on_buffer"]
