"""Teams and collectives inside @numba.cuda.jit kernels on the gpu backend:
barrier, sync, reduce, reducescatter, fcollect, alltoall, broadcast (each
with _warp and _block forms, called by every thread of the scope with the
same arguments), team_my_pe and team_n_pes, with NVSHMEM4Py's device
argument orders and the cpu target's sizes (_collectives.py). They call the
device library's team functions (device.cuh), which find the team's
members in the device team table; only one block (warp, thread) per PE may
be in a collective on a team at a time, as in NVSHMEM."""

from numba import types
from numba.core.errors import TypingError
from numba.cuda.extending import overload

from . import _collectives as K
from . import _scoped as S
from . import _cuda
from ._cuda import _pair, data_address, declare, views_contiguous

u64, i32 = types.uint64, types.int32
_TEAM = i32(u64, i32)
_PUSH = i32(u64, i32, u64, u64, u64, i32)
_REDUCE = i32(u64, i32, u64, u64, u64, i32, i32)
_SCOPES = ("", "_warp", "_block")
# numba-cuda's bfloat16 (arrays of ml_dtypes.bfloat16) is named __nv_bfloat16
_DTYPES = dict(K._DTYPES, __nv_bfloat16=K._symmem.DTYPE_CODES["bfloat16"])

_DEVICE = {
    "team_my_pe": declare("team_my_pe", _TEAM),
    "team_n_pes": declare("team_n_pes", _TEAM),
    "too_small": declare("too_small", i32(u64, i32, u64)),
}
for _scope in _SCOPES:
    for _name, _sig in (
        ("barrier", _TEAM),
        ("sync", _TEAM),
        ("fcollect", _PUSH),
        ("alltoall", _PUSH),
        ("broadcast", _PUSH),
        ("reduce", _REDUCE),
        ("reducescatter", _REDUCE),
    ):
        _DEVICE[_name + _scope] = declare(_name + _scope, _sig)


def cuda_overload_literal(function):
    """A CUDA-target overload that sees string constants as literals (op)."""
    return overload(function, target="cuda", prefer_literal=True)


def _as_team(team):
    """A Teams member or a team handle, as the int32 handle."""


@overload(_as_team, target="cuda")
def _as_team_typed(team):
    if isinstance(team, types.IntEnumMember):
        return lambda team: types.int32(team.value)
    if isinstance(team, types.Integer):
        return lambda team: types.int32(team)


def _check_team(call, team):
    if not isinstance(team, (types.IntEnumMember, types.Integer)):
        raise TypingError(f"{call}: team must be a Teams member or a team handle, got {team}")


def _sync(name):
    fn = _DEVICE[name]

    @cuda_overload_literal(S.STUBS[name])
    def typed(team):
        _check_team(name, team)
        st = _cuda.state_address(name)
        return lambda team: fn(st, _as_team(team))


def _reduce(name, per_member):
    fn, too_small, n_pes = _DEVICE[name], _DEVICE["too_small"], _DEVICE["team_n_pes"]

    @cuda_overload_literal(S.STUBS[name])
    def typed(team, dst, src, op):
        _check_team(name, team)
        _pair(name, dst, src)
        base = name.split("_")[0]
        dtype, code = K._code(base, dst, _DTYPES, "dst"), K._op_code(base, dst, op)
        st = _cuda.state_address(name)

        def impl(team, dst, src, op):
            views_contiguous(st, dst, src, 1)  # team is argument 0
            t = _as_team(team)
            n = dst.size if per_member else min(dst.size, src.size)
            members = n_pes(st, t)
            if per_member and members > 0 and src.size < n * members:
                too_small(st, 2, types.uint64(n * members * src.itemsize))
            fn(st, t, data_address(dst), data_address(src), types.uint64(n), dtype, code)

        return impl


def _push(name, per_member):
    """fcollect (src.size elements from each member) and alltoall
    (dst.size // members to each member)."""
    fn, too_small, n_pes = _DEVICE[name], _DEVICE["too_small"], _DEVICE["team_n_pes"]

    @cuda_overload_literal(S.STUBS[name])
    def typed(team, dst, src):
        _check_team(name, team)
        _pair(name, dst, src)
        st = _cuda.state_address(name)

        def impl(team, dst, src):
            views_contiguous(st, dst, src, 1)  # team is argument 0
            t = _as_team(team)
            members = n_pes(st, t)
            n = src.size
            if per_member:
                n = dst.size // members if members > 0 else 0
                if members > 0 and src.size < n * members:
                    too_small(st, 2, types.uint64(n * members * src.itemsize))
            if members > 0 and dst.size < n * members:
                too_small(st, 1, types.uint64(n * members * dst.itemsize))
            fn(st, t, data_address(dst), data_address(src), types.uint64(n * dst.itemsize), 0)

        return impl


def _broadcast(name):
    fn = _DEVICE[name]

    @cuda_overload_literal(S.STUBS[name])
    def typed(team, dst, src, root=0):
        _check_team(name, team)
        _pair(name, dst, src)
        st = _cuda.state_address(name)

        def impl(team, dst, src, root=0):
            views_contiguous(st, dst, src, 1)  # team is argument 0
            nbytes = min(dst.size, src.size) * dst.itemsize
            fn(
                st,
                _as_team(team),
                data_address(dst),
                data_address(src),
                types.uint64(nbytes),
                types.int32(root),
            )

        return impl


def _team_query(function, name):
    fn = _DEVICE[name]

    @cuda_overload_literal(function)
    def typed(team):
        _check_team(name, team)
        st = _cuda.state_address(name)
        return lambda team: fn(st, _as_team(team))


for _scope in _SCOPES:
    _sync("barrier" + _scope)
    _sync("sync" + _scope)
    _reduce("reduce" + _scope, False)
    _reduce("reducescatter" + _scope, True)
    _push("fcollect" + _scope, False)
    _push("alltoall" + _scope, True)
    _broadcast("broadcast" + _scope)
_team_query(K.team_my_pe, "team_my_pe")
_team_query(K.team_n_pes, "team_n_pes")
