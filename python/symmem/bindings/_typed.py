"""NVSHMEM's typed calls on raw addresses, made from tables: <type>_atomic_<op>
(dest, [cond,] [value,] pe) and <type>_<collective>_on_stream(team, dest,
src, n, [pe_root,] stream), for the types NVSHMEM4Py's bindings have each
in. Each is the symmem call of the same meaning over the memory at the
addresses; n counts elements as NVSHMEM does (per PE for alltoall and
fcollect, of the result for reducescatter)."""

from symmem import NvshmemInvalid, _symmem
from symmem.bindings._heap import memory_at

_AMO_INT = (
    "uint",
    "ulong",
    "ulonglong",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "int",
    "long",
    "longlong",
    "size",
    "ptrdiff",
)
_AMO_BITS = ("uint", "ulong", "ulonglong", "int32", "uint32", "int64", "uint64")
_COLL = (
    "bfloat16",
    "half",
    "float",
    "double",
    "char",
    "short",
    "schar",
    "int",
    "long",
    "longlong",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "size",
)

# op -> the types NVSHMEM4Py has it for
ATOMICS = {
    "atomic_inc": _AMO_INT,
    "atomic_fetch_inc": _AMO_INT,
    "atomic_compare_swap": _AMO_INT,
    **{
        op: _AMO_INT + ("float", "double")
        for op in ("atomic_fetch", "atomic_add", "atomic_set", "atomic_swap", "atomic_fetch_add")
    },
    **{
        op: _AMO_BITS
        for op in (
            "atomic_and",
            "atomic_or",
            "atomic_xor",
            "atomic_fetch_and",
            "atomic_fetch_or",
            "atomic_fetch_xor",
        )
    },
}
REDUCE_OPS = ("max", "min", "sum")


def _numpy_name(name):
    return _symmem.DTYPE_ALIASES.get(name, name)


def _atomic(op, type_name):
    symmem_op = getattr(_symmem, op)
    dtype = _numpy_name(type_name)
    call = f"{type_name}_{op}"

    def atomic(dest, *args):
        """args: [cond,] [value,] pe, as NVSHMEM orders them."""
        return symmem_op(memory_at(dest, 1, dtype, call, "dest"), *args)

    atomic.__name__ = atomic.__qualname__ = call
    return atomic


def _collective(kind, type_name, op=None):
    dtype = _numpy_name(type_name)
    call = f"{type_name}_{op + '_' if op else ''}{kind}_on_stream"
    # (elements of dest, of src) per n, with p the team's size
    sizes = {
        "reduce": lambda n, p: (n, n),
        "reducescatter": lambda n, p: (n, n * p),
        "alltoall": lambda n, p: (n * p, n * p),
        "fcollect": lambda n, p: (n * p, n),
        "broadcast": lambda n, p: (n, n),
    }[kind]

    def collective(team, dest, src, n, *rest):
        """rest: [pe_root,] stream."""
        try:
            npes = _symmem.team_n_pes(team)
        except NvshmemInvalid:
            npes = 1  # the collective below refuses the team, naming itself
        ndest, nsrc = sizes(n, npes)
        args = (
            team,
            memory_at(dest, ndest, dtype, call, "dest"),
            memory_at(src, nsrc, dtype, call, "src"),
        )
        if kind == "broadcast":
            _symmem.broadcast(*args, *rest)  # rest: pe_root, stream (its errors name broadcast)
        elif op is not None:
            getattr(_symmem, kind)(*args, op, *rest)
        else:
            getattr(_symmem, kind)(*args, *rest)

    collective.__name__ = collective.__qualname__ = call
    return collective


def functions():
    """name -> function, every typed call."""
    made = {}
    for op, types in ATOMICS.items():
        for type_name in types:
            made[f"{type_name}_{op}"] = _atomic(op, type_name)
    for type_name in _COLL:
        for kind in ("alltoall", "broadcast", "fcollect"):
            made[f"{type_name}_{kind}_on_stream"] = _collective(kind, type_name)
        for kind in ("reduce", "reducescatter"):
            for op in REDUCE_OPS:
                made[f"{type_name}_{op}_{kind}_on_stream"] = _collective(kind, type_name, op)
    return made
