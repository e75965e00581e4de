"""symmem.device.cute's one-sided calls: put and get (thread, warp and block
scope, blocking and _nbi), p and g, put_signal, signal_op, signal_wait,
wait_until, quiet, fence, my_pe and n_pes. NVSHMEM4Py's names and argument
orders (nvshmem.core.device.cute); arguments are cute.Tensor views of
symmetric memory, counts min(size(dst), size(src)) elements of one dtype.

Each call is plain Python that CuTe runs while it traces the kernel: it
emits one call of the engine's device function (_engine.py): symmem's
device library (symmem_dev_*, the state block's address first) or NVSHMEM's
(nvshmem_* / nvshmemx_*). Blocking and _nbi puts are the same call on
symmem's engine (its puts complete at quiet, a barrier or a signal)."""

import cutlass

from symmem import _symmem
from symmem.device import _library_calls as L
from symmem.device._dsl_docs import build

from . import _engine as E
from . import _externs as X
from . import _values as V

# NVSHMEM's type names in its typed functions (nvshmem_<T>_p, ...): the
# vocabulary's, for every dtype but bool (which NVSHMEM's typed calls lack)
NV_TYPES = {d: nv for d, nv in _symmem.DTYPE_NVSHMEM_NAMES.items() if d != "bool"}
_U64, _I32 = cutlass.Uint64, cutlass.Int32


def nv_name(scope, stem):
    """NVSHMEM's name of a call: nvshmem_<stem> at thread scope, else
    nvshmemx_<stem>_<scope>."""
    return f"nvshmemx_{stem}{scope}" if scope else f"nvshmem_{stem}"


def _copy(name, scope, get, nbi):
    own = ("get" if get else "put") + scope
    nv = nv_name(scope, ("get" if get else "put") + "mem" + ("_nbi" if nbi else ""))

    def call(dst, src, pe):
        V.same_dtype(name, dst, src)
        nbytes = V.u64(V.smaller(V.count(dst), V.count(src))) * V.width(dst)
        if E.configure(name) == "symmem":
            X.own(own)(E.state(name), V.address(dst), V.address(src), nbytes, V.i32(pe))
        else:
            X.nvshmem(nv, None, ["ptr", "ptr", _U64, _I32])(
                V.address(dst), V.address(src), nbytes, V.i32(pe)
            )

    call.__name__ = call.__qualname__ = name
    call.__doc__ = build("cute", name, ["dst", "src", "pe"])
    return call


def _put_signal(name, scope, nbi):
    nv = nv_name(scope, "putmem_signal" + ("_nbi" if nbi else ""))

    def call(dst, src, sig_addr, signal, sig_op, pe):
        V.same_dtype(name, dst, src)
        V.signal_word(name, sig_addr)
        nbytes = V.u64(V.smaller(V.count(dst), V.count(src))) * V.width(dst)
        args = (
            V.address(dst),
            V.address(src),
            nbytes,
            V.address(sig_addr),
            V.u64(signal),
            V.i32(sig_op),
            V.i32(pe),
        )
        if E.configure(name) == "symmem":
            X.own("put_signal" + scope)(E.state(name), *args)
        else:
            X.nvshmem(nv, None, ["ptr", "ptr", _U64, "ptr", _U64, _I32, _I32])(*args)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = build("cute", name, ["dst", "src", "sig_addr", "signal", "sig_op", "pe"])
    return call


CALLS = {}
for _scope in L.SCOPES:
    for _get in (False, True):
        for _nbi in (False, True):
            _name = ("get" if _get else "put") + ("_nbi" if _nbi else "") + _scope
            CALLS[_name] = _copy(_name, _scope, _get, _nbi)
    for _nbi in (False, True):
        _name = "put_signal" + ("_nbi" if _nbi else "") + _scope
        CALLS[_name] = _put_signal(_name, _scope, _nbi)


def p(dst, value, pe):
    dtype = V.dtype_name("p", "dst", dst)
    if E.configure("p") == "symmem":
        X.own("p")(
            E.state("p"), V.address(dst), V.bits(value, dtype), V.i32(V.width(dst)), V.i32(pe)
        )
    else:
        t = V.DTYPES[dtype]
        X.nvshmem(f"nvshmem_{NV_TYPES[dtype]}_p", None, ["ptr", t, _I32])(
            V.address(dst), t(value), V.i32(pe)
        )


def g(src, pe):
    dtype = V.dtype_name("g", "src", src)
    if E.configure("g") == "symmem":
        word = X.own("g")(E.state("g"), V.address(src), V.i32(V.width(src)), V.i32(pe))
        return V.from_bits(word, dtype)
    t = V.DTYPES[dtype]
    return t(X.nvshmem(f"nvshmem_{NV_TYPES[dtype]}_g", t, ["ptr", _I32])(V.address(src), V.i32(pe)))


def signal_op(sig_addr, signal, sig_op, pe):
    args = (V.address(sig_addr), V.u64(signal), V.i32(sig_op), V.i32(pe))
    if E.configure("signal_op") == "symmem":
        X.own("signal_op")(E.state("signal_op"), *args)
    else:
        X.nvshmem("nvshmemx_signal_op", None, ["ptr", _U64, _I32, _I32])(*args)


def signal_wait(sig_addr, cmp, cmp_value):
    if E.configure("signal_wait") == "symmem":
        return X.own("signal_wait")(
            E.state("signal_wait"), V.address(sig_addr), V.i32(cmp), V.u64(cmp_value)
        )
    return X.nvshmem("nvshmem_signal_wait_until", _U64, ["ptr", _I32, _U64])(
        V.address(sig_addr), V.i32(cmp), V.u64(cmp_value)
    )


def wait_until(ivar, cmp, cmp_value):
    dtype = V.dtype_name("wait_until", "ivar", ivar)
    if dtype in V.FLOATS:
        raise TypeError(f"wait_until: ivar must be an integer tensor, not {dtype}")
    if E.configure("wait_until") == "symmem":
        X.own("wait_until")(
            E.state("wait_until"),
            V.address(ivar),
            V.i32(L.DTYPE_CODES[dtype]),
            V.i32(cmp),
            cutlass.Int64(cmp_value),
        )
    else:
        # NVSHMEM's bitcode names its 16-bit waits short and ushort and has no 8-bit ones
        nv = {"int16": "short", "uint16": "ushort"}.get(dtype, NV_TYPES[dtype])
        if dtype in ("int8", "uint8"):
            raise TypeError(
                f"wait_until: NVSHMEM's device library has no {dtype} wait "
                "(SYMMEM_CUTE_ENGINE=symmem has one)"
            )
        t = V.DTYPES[dtype]
        X.nvshmem(f"nvshmem_{nv}_wait_until", None, ["ptr", _I32, t])(
            V.address(ivar), V.i32(cmp), t(cmp_value)
        )


def _no_args(name, nv):
    def call():
        if E.configure(name) == "symmem":
            return X.own(name)(E.state(name))
        return X.nvshmem(nv, _I32 if name in ("my_pe", "n_pes") else None, [])()

    call.__name__ = call.__qualname__ = name
    call.__doc__ = build("cute", name, [], returns="int32" if "pe" in name else None)
    return call


quiet = _no_args("quiet", "nvshmem_quiet")
fence = _no_args("fence", "nvshmem_fence")
my_pe = _no_args("my_pe", "nvshmem_my_pe")
n_pes = _no_args("n_pes", "nvshmem_n_pes")
p.__doc__ = build("cute", "p", ["dst", "value", "pe"])
g.__doc__ = build("cute", "g", ["src", "pe"], returns="the element, of src's type.")
signal_op.__doc__ = build("cute", "signal_op", ["sig_addr", "signal", "sig_op", "pe"])
signal_wait.__doc__ = build(
    "cute",
    "signal_wait",
    ["sig_addr", "cmp", "cmp_value"],
    returns="the signal's value (uint64) once it compares true.",
    waits=True,
)
wait_until.__doc__ = build("cute", "wait_until", ["ivar", "cmp", "cmp_value"], waits=True)
