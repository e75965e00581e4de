"""The warp and block forms of put, get, put_signal and the barriers. On the
cpu target a PE is one thread, so each is its thread-scope function; on the
gpu (_cuda.py) each calls the library's scoped function. STUBS maps every
name, thread scope included, to its Python object."""
from . import _rma, _sync
from ._stubs import cpu_overload, stub

_PARAMS = {"put": "dst, src, pe", "get": "dst, src, pe", "put_nbi": "dst, src, pe",
           "get_nbi": "dst, src, pe",
           "put_signal": "dst, src, sig_addr, signal, sig_op, pe",
           "put_signal_nbi": "dst, src, sig_addr, signal, sig_op, pe",
           "barrier_all": "", "sync_all": ""}
_BASE = {"put": _rma.put, "get": _rma.get, "put_nbi": _rma.put_nbi, "get_nbi": _rma.get_nbi,
         "put_signal": _rma.put_signal, "put_signal_nbi": _rma.put_signal_nbi,
         "barrier_all": _sync.barrier_all, "sync_all": _sync.sync_all}


def _thread_scope_on_cpu(function, base, params):
    if params == "":
        cpu_overload(function)(lambda: (lambda: base()))
    elif params == "dst, src, pe":
        cpu_overload(function)(
            lambda dst, src, pe: (lambda dst, src, pe: base(dst, src, pe)))
    else:
        cpu_overload(function)(
            lambda dst, src, sig_addr, signal, sig_op, pe:
            (lambda dst, src, sig_addr, signal, sig_op, pe:
             base(dst, src, sig_addr, signal, sig_op, pe)))


STUBS = dict(_BASE)
for _name, _params in _PARAMS.items():
    for _scope in ("_warp", "_block"):
        _function = stub(_name + _scope, _params)
        _thread_scope_on_cpu(_function, _BASE[_name], _params)
        STUBS[_name + _scope] = _function
