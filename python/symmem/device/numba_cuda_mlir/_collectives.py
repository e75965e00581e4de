"""symmem.device.numba_cuda_mlir's teams and collectives (team_my_pe,
team_n_pes, barrier, sync, reduce, reducescatter, fcollect, alltoall,
broadcast; each collective with _warp and _block forms called by every
thread of the scope with the same arguments), get_peer_array and
get_multicast_array. NVSHMEM4Py's device argument orders and sizes, as in
symmem.device.numba (_cuda_collectives.py): reduce and broadcast
min(dst.size, src.size) elements, reducescatter dst.size per member,
fcollect src.size from each member, alltoall dst.size // team_n_pes(team)
to each member; op a literal string. One block (warp, thread) per PE in a
collective on a team at a time, as in NVSHMEM."""

from numba_cuda_mlir import types
from numba_cuda_mlir.extending import overload, typing_registry
from numba_cuda_mlir.numba_cuda.core.errors import TypingError

from symmem._multicast import multicast_unavailable_reason
from symmem.device import _library_calls as L

from ._calls import register, stub
from ._address import data_address
from ._library import DEVICE, require_array, require_pair, state_address, width

u64, i32 = types.uint64, types.int32


def as_team(team):
    """A Teams member or a team handle, as the int32 handle."""


@overload(as_team, inline="always", typing_registry=typing_registry)
def _as_team(team):
    if isinstance(team, types.IntEnumMember):
        return lambda team: i32(team.value)
    if isinstance(team, types.Integer):
        return lambda team: i32(team)
    raise TypingError(f"team must be a Teams member or a team handle, got {team}")


def _literal_op(call, dst, op):
    if not isinstance(op, types.StringLiteral):
        raise TypingError(
            f"{call}: op must be a literal string such as \"sum\" "
            f"(one of {', '.join(L.REDUCE_OPS)}), got {op}"
        )
    name = op.literal_value
    if name not in L.REDUCE_OPS:
        raise TypingError(f"{call}: op {name!r} is not one of {', '.join(L.REDUCE_OPS)}")
    if name in L.BITWISE_OPS and isinstance(dst.dtype, types.Float):
        raise TypingError(f"{call}: op {name!r} takes integers, not {dst.dtype}")
    return L.REDUCE_OPS[name]


def _team_fn(name, returns=None, waits=False):
    stub(name, ["team"], returns=returns, waits=waits)
    fn = DEVICE[name]

    @register(name)
    def typed(team):
        st = state_address(name)
        return lambda team: fn(u64(st), as_team(team))


def _reduce(name, device_name, per_member):
    stub(name, ["team", "dst", "src", "op"], waits=True)
    fn = DEVICE[device_name]

    @overload(STUB_OF(name), inline="always", typing_registry=typing_registry, prefer_literal=True)
    def typed(team, dst, src, op):
        require_pair(name, dst, src)
        code = _literal_op(name, dst, op)
        dtype = L.DTYPE_CODES.get(str(dst.dtype))
        if dtype is None:
            raise TypingError(f"{name}: dst has dtype {dst.dtype}, which {name} does not take")
        st = state_address(name)

        def impl(team, dst, src, op):
            n = u64(dst.size)
            if not per_member:
                m = u64(src.size)
                if m < n:
                    n = m
            fn(
                u64(st),
                as_team(team),
                data_address(dst),
                data_address(src),
                n,
                i32(dtype),
                i32(code),
            )

        return impl


def _push(name, device_name, kind):
    params = ["team", "dst", "src"] + (["root"] if kind == "broadcast" else [])
    stub(name, params, waits=True)
    fn, n_pes = DEVICE[device_name], DEVICE["team_n_pes"]

    def typed_common(dst, src):
        require_pair(name, dst, src)
        return state_address(name), width(dst)

    if kind == "broadcast":

        @register(name)
        def typed(team, dst, src, root=0):
            st, w = typed_common(dst, src)

            def impl(team, dst, src, root=0):
                n = u64(dst.size)
                m = u64(src.size)
                if m < n:
                    n = m
                fn(
                    u64(st),
                    as_team(team),
                    data_address(dst),
                    data_address(src),
                    n * u64(w),
                    i32(root),
                )

            return impl
    else:

        @register(name)
        def typed(team, dst, src):
            st, w = typed_common(dst, src)

            def impl_fcollect(team, dst, src):
                fn(
                    u64(st),
                    as_team(team),
                    data_address(dst),
                    data_address(src),
                    u64(src.size) * u64(w),
                    i32(0),
                )

            def impl_alltoall(team, dst, src):
                t = as_team(team)
                members = u64(n_pes(u64(st), t))
                n = u64(0)
                if members > 0:
                    n = u64(dst.size) // members
                fn(u64(st), t, data_address(dst), data_address(src), n * u64(w), i32(0))

            return impl_alltoall if kind == "alltoall" else impl_fcollect


def STUB_OF(name):
    from ._calls import STUBS

    return STUBS[name]


_team_fn("team_my_pe", returns="int32")
_team_fn("team_n_pes", returns="int32")
for _scope in L.SCOPES:
    _team_fn("barrier" + _scope, waits=True)
    _team_fn("sync" + _scope, waits=True)
    _reduce("reduce" + _scope, "reduce" + _scope, False)
    _reduce("reducescatter" + _scope, "reducescatter" + _scope, True)
    for _kind in ("fcollect", "alltoall", "broadcast"):
        _push(_kind + _scope, _kind + _scope, _kind)

stub("get_peer_array", ["array", "pe"], returns="an array over PE pe's copy.")
stub("get_multicast_array", ["team", "array"], returns="never: see Raises.")


@register("get_peer_array")
def _get_peer_array(array, pe):
    require_array("get_peer_array", "array", array)
    raise TypingError(
        "get_peer_array: not yet in numba-cuda-mlir kernels (numba-cuda-mlir "
        "0.6 has no way for symmem to make an array at another address without "
        "cffi); use put/get, or symmem.device.numba's get_peer_array"
    )


@register("get_multicast_array")
def _get_multicast_array(team, array):
    raise TypingError(multicast_unavailable_reason("get_multicast_array"))
