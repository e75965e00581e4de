"""symmem.device.cute's 14 atomics, NVSHMEM4Py's names and argument orders
((dest, [cond,] [value,] pe)), on the first element of dest: int32, int64,
uint32 and uint64, and float32 and float64 for fetch, set, swap, add and
fetch_add. Relaxed, at system scope, as NVSHMEM's. symmem's engine has one
device function per width (symmem_dev_atomic32 / 64) taking the op by
number (_library_calls.ATOMIC_OPS); NVSHMEM's has one per type and op."""

import cutlass

from symmem.device import _library_calls as L
from symmem.device._dsl_docs import build

from . import _engine as E
from . import _externs as X
from . import _values as V
from ._rma import NV_TYPES

_I32 = cutlass.Int32


def _dtype(name, dest):
    dtype = V.dtype_name(name, "dest", dest)
    allowed = L.ATOMIC_INTS + (("float32", "float64") if name in L.ATOMICS_FLOAT else ())
    if dtype not in allowed:
        raise TypeError(f"{name}: dest has dtype {dtype}; it takes {', '.join(allowed)}")
    return dtype


def _nv_symbol(name, dtype):
    kind = name[len("atomic_") :]
    type_name = NV_TYPES[dtype]
    if type_name == "int64" and kind in ("add", "fetch_add", "inc", "fetch_inc"):
        type_name = "long"  # NVSHMEM's bitcode has these only as long (the same type here)
    return f"nvshmem_{type_name}_atomic_{kind}"


def _atomic(name):
    value_args = L.ATOMIC_ARGS[name]  # (), ("value",) or ("cond", "value")
    returns = name in L.ATOMICS_RETURNING

    def run(dest, cond, value, pe):
        dtype = _dtype(name, dest)
        t = V.DTYPES[dtype]
        if E.configure(name) == "symmem":
            op = L.ATOMIC_OPS[name]
            if op == L.ATOMIC_OPS["atomic_add"] and dtype in V.FLOATS:
                op = L.FLOAT_ADD
            one = 1 if name in ("atomic_inc", "atomic_fetch_inc") else 0
            word = cutlass.Uint64 if V.width(dest) == 8 else cutlass.Uint32
            v = V.bits(value, dtype) if value is not None else V.u64(one)
            c = V.bits(cond, dtype) if cond is not None else V.u64(0)
            fn = X.own("atomic64" if V.width(dest) == 8 else "atomic32")
            old = fn(E.state(name), V.address(dest), _I32(op), word(v), word(c), V.i32(pe))
            return V.from_bits(old, dtype) if returns else None
        if dtype in V.FLOATS and name in ("atomic_add", "atomic_fetch_add"):
            raise TypeError(
                f"{name}: NVSHMEM's device library has no {dtype} add "
                "(SYMMEM_CUTE_ENGINE=symmem has one)"
            )
        params, args = ["ptr"], [V.address(dest)]
        for given in (cond, value):
            if given is not None:
                params.append(t)
                args.append(t(given))
        old = X.nvshmem(_nv_symbol(name, dtype), t if returns else None, params + [_I32])(
            *args, V.i32(pe)
        )
        return t(old) if returns else None

    if value_args == ():

        def call(dest, pe):
            return run(dest, None, None, pe)
    elif value_args == ("value",):

        def call(dest, value, pe):
            return run(dest, None, value, pe)
    else:

        def call(dest, cond, value, pe):
            return run(dest, cond, value, pe)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = build(
        "cute",
        name,
        ["dest", *value_args, "pe"],
        returns="the element's old value." if returns else None,
    )
    return call


CALLS = {name: _atomic(name) for name in L.ATOMIC_ARGS}
