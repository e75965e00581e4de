"""The warp and block forms of put, get, put_signal, the barriers and the
collectives. On the cpu target a PE is one thread, so each runs its
thread-scope function; on the gpu (_cuda.py) each calls the library's
scoped function. STUBS maps every name, thread scope included, to its
Python object."""

from . import _collectives, _rma, _sync
from ._collectives import overload_literal
from ._stubs import stub

_COPY, _SIGNAL = "dst, src, pe", "dst, src, sig_addr, signal, sig_op, pe"
_BASE = {  # name: (thread-scope function, parameters)
    "put": (_rma.put, _COPY),
    "get": (_rma.get, _COPY),
    "put_nbi": (_rma.put_nbi, _COPY),
    "get_nbi": (_rma.get_nbi, _COPY),
    "put_signal": (_rma.put_signal, _SIGNAL),
    "put_signal_nbi": (_rma.put_signal_nbi, _SIGNAL),
    "barrier_all": (_sync.barrier_all, ""),
    "sync_all": (_sync.sync_all, ""),
    "barrier": (_collectives.barrier, "team"),
    "sync": (_collectives.sync, "team"),
    "reduce": (_collectives.reduce, "team, dst, src, op"),
    "reducescatter": (_collectives.reducescatter, "team, dst, src, op"),
    "fcollect": (_collectives.fcollect, "team, dst, src"),
    "alltoall": (_collectives.alltoall, "team, dst, src"),
    "broadcast": (_collectives.broadcast, "team, dst, src, root=0"),
}


def _thread_scope_on_cpu(function, base, params):
    """An overload of function that calls base with the same arguments."""
    args = ", ".join(p.split("=")[0] for p in params.split(", ")) if params else ""
    namespace = {"base": base}
    exec(
        f"def typed({params}):\n"
        f"    def impl({params}):\n"
        f"        return base({args})\n"
        f"    return impl\n",
        namespace,
    )
    overload_literal(function)(namespace["typed"])


STUBS = {name: base for name, (base, _) in _BASE.items()}
for _name, (_base, _params) in _BASE.items():
    for _scope in ("_warp", "_block"):
        _function = stub(_name + _scope, _params)
        _thread_scope_on_cpu(_function, _base, _params)
        STUBS[_name + _scope] = _function
