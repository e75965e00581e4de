"""symmem.device.cute's teams and collectives: team_my_pe, team_n_pes,
barrier_all, sync_all, barrier, sync, reduce, reducescatter, fcollect,
alltoall, broadcast, each collective with _warp and _block forms called by
every thread of the scope with the same arguments. NVSHMEM4Py's device
argument orders and sizes: reduce and broadcast min(size(dst), size(src))
elements, reducescatter size(dst) per member, fcollect size(src) from each
member, alltoall size(dst) // team_n_pes(team) to each member. op is a
string known when the kernel is traced ("sum", "min", "max", "prod", and
for integers "and", "or", "xor"). One block (warp, thread) per PE may be
in a collective on a team at a time, as in NVSHMEM."""

import cutlass

from symmem.device import _library_calls as L
from symmem.device._dsl_docs import build

from . import _engine as E
from . import _externs as X
from . import _values as V
from ._rma import NV_TYPES, nv_name

_U64, _I32 = cutlass.Uint64, cutlass.Int32
_NV_SYNC = {
    "barrier_all": "barrier_all",
    "sync_all": "sync_all",
    "barrier": "barrier",
    "sync": "team_sync",
}


def _team_query(name):
    def call(team):
        if E.configure(name) == "symmem":
            return X.own(name)(E.state(name), V.i32(team))
        return X.nvshmem("nvshmem_" + name, _I32, [_I32])(V.i32(team))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = build("cute", name, ["team"], returns="int32")
    return call


team_my_pe = _team_query("team_my_pe")
team_n_pes = _team_query("team_n_pes")


def _sync(name, scope, with_team):
    full = name + scope
    nv = nv_name(scope, _NV_SYNC[name])

    def run(team_args):
        if E.configure(full) == "symmem":
            X.own(full)(E.state(full), *team_args)
        else:
            X.nvshmem(nv, None, [_I32] * len(team_args))(*team_args)

    if with_team:

        def call(team):
            run((V.i32(team),))

        params = ["team"]
    else:

        def call():
            run(())

        params = []
    call.__name__ = call.__qualname__ = full
    call.__doc__ = build("cute", full, params, waits=True)
    return call


def _reduce(name, scope, per_member):
    full = name + scope

    def call(team, dst, src, op):
        dtype = V.same_dtype(full, dst, src)
        if op not in L.REDUCE_OPS:
            raise TypeError(f"{full}: op {op!r} is not one of {', '.join(L.REDUCE_OPS)}")
        if op in L.BITWISE_OPS and dtype in V.FLOATS:
            raise TypeError(f"{full}: op {op!r} takes integers, not {dtype}")
        n = V.u64(V.count(dst) if per_member else V.smaller(V.count(dst), V.count(src)))
        if E.configure(full) == "symmem":
            X.own(full)(
                E.state(full),
                V.i32(team),
                V.address(dst),
                V.address(src),
                n,
                V.i32(L.DTYPE_CODES[dtype]),
                V.i32(L.REDUCE_OPS[op]),
            )
        else:
            nv = nv_name(scope, f"{NV_TYPES[dtype]}_{op}_{name}")
            X.nvshmem(nv, _I32, [_I32, "ptr", "ptr", _U64])(
                V.i32(team), V.address(dst), V.address(src), n
            )

    call.__name__ = call.__qualname__ = full
    call.__doc__ = build("cute", full, ["team", "dst", "src", "op"], waits=True)
    return call


def _members(call, team):
    """team_n_pes(team) in the kernel, as Uint64."""
    if E.configure(call) == "symmem":
        return V.u64(X.own("team_n_pes")(E.state(call), V.i32(team)))
    return V.u64(X.nvshmem("nvshmem_team_n_pes", _I32, [_I32])(V.i32(team)))


def _push(name, scope):
    """fcollect, alltoall and broadcast: the device library counts bytes,
    NVSHMEM elements."""
    full = name + scope

    def run(team, dst, src, root):
        dtype = V.same_dtype(full, dst, src)
        if name == "fcollect":
            n = V.u64(V.count(src))
        elif name == "alltoall":
            n = V.u64(V.count(dst)) // _members(full, team)
        else:
            n = V.u64(V.smaller(V.count(dst), V.count(src)))
        if E.configure(full) == "symmem":
            X.own(full)(
                E.state(full),
                V.i32(team),
                V.address(dst),
                V.address(src),
                n * V.width(dst),
                V.i32(root),
            )
            return
        nv = nv_name(scope, f"{NV_TYPES[dtype]}_{name}")
        args = [V.i32(team), V.address(dst), V.address(src), n]
        params = [_I32, "ptr", "ptr", _U64]
        if name == "broadcast":
            args.append(V.i32(root))
            params.append(_I32)
        X.nvshmem(nv, _I32, params)(*args)

    if name == "broadcast":

        def call(team, dst, src, root=0):
            run(team, dst, src, root)

        params = ["team", "dst", "src", "root"]
    else:

        def call(team, dst, src):
            run(team, dst, src, 0)

        params = ["team", "dst", "src"]
    call.__name__ = call.__qualname__ = full
    call.__doc__ = build("cute", full, params, waits=True)
    return call


CALLS = {"team_my_pe": team_my_pe, "team_n_pes": team_n_pes}
for _scope in L.SCOPES:
    for _name, _team in (
        ("barrier_all", False),
        ("sync_all", False),
        ("barrier", True),
        ("sync", True),
    ):
        CALLS[_name + _scope] = _sync(_name, _scope, _team)
    CALLS["reduce" + _scope] = _reduce("reduce", _scope, False)
    CALLS["reducescatter" + _scope] = _reduce("reducescatter", _scope, True)
    for _name in ("fcollect", "alltoall", "broadcast"):
        CALLS[_name + _scope] = _push(_name, _scope)
