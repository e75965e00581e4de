"""Team barriers and collectives in njit code on the cpu backend, with
NVSHMEM4Py's device argument orders: barrier(team), sync(team),
reduce(team, dst, src, op), reducescatter(team, dst, src, op),
fcollect(team, dst, src), broadcast(team, dst, src, root=0),
alltoall(team, dst, src), team_my_pe(team), team_n_pes(team). `team` is a
Teams member or a team handle (an int); `op` a literal string ("sum",
"min", "max", "prod", "and", "or", "xor").

They are the C engine's collectives, called through the addresses the
extension exports, so every check of the host calls applies (symmetric
arguments, sizes, matching fingerprints on every member, timeouts, dead
peers) and a failure raises the host call's exception. Sizes, as in
NVSHMEM4Py: reduce the smaller array's elements; reducescatter dst.size
elements per member; fcollect src.size elements from each member; broadcast
the smaller array's elements; alltoall dst.size // team_n_pes(team)
elements per member."""

from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from symmem import _symmem

from . import _checks as C
from . import _errors as E
from . import _llvm as L
from ._stubs import require_pair, stub

# the C library's codes (include/symmem/vocabulary.h), by numba's names of
# the types: every dtype but bfloat16, which numba names otherwise
_OPS = {name: code for code, name in enumerate(_symmem.REDUCE_OPS)}
_DTYPES = {name: code for name, code in _symmem.DTYPE_CODES.items() if name != "bfloat16"}


def overload_literal(function):
    """A cpu-target overload that sees string constants as literals (op)."""
    return overload(
        function, target="cpu", prefer_literal=True, jit_options={"no_cpython_wrapper": True}
    )


@register_jitable
def _enum_team(team):
    return types.int32(team.value)


@register_jitable
def _int_team(team):
    return types.int32(team)


def _team_handle(call, team):
    """The jitted function turning team (a Teams member or an int) into an int32."""
    if isinstance(team, types.IntEnumMember):
        return _enum_team
    if isinstance(team, types.Integer):
        return _int_team
    raise TypingError(f"{call}: team must be a Teams member or a team handle, got {team}")


def _code(call, arr, table, what):
    code = table.get(str(arr.dtype))
    if code is None:
        raise TypingError(f"{call}: {what} has dtype {arr.dtype}, which {call} does not take")
    return code


def _op_code(call, dst, op):
    if not isinstance(op, types.StringLiteral):
        raise TypingError(
            f"{call}: op must be a literal string such as \"sum\" "
            f"(one of {', '.join(_OPS)}), got {op}"
        )
    code = _OPS.get(op.literal_value)
    if code is None:
        raise TypingError(f"{call}: op {op.literal_value!r} is not one of {', '.join(_OPS)}")
    if code >= 4 and not isinstance(dst.dtype, (types.Integer, types.Boolean)):
        raise TypingError(f"{call}: op {op.literal_value!r} takes integers, not {dst.dtype}")
    return code


@register_jitable
def _arrays(call, dst, src):
    """What the C engine cannot check: initialised first (the arrays' checks
    read the state block), contiguous arrays, and neither freed."""
    C.ready(call)
    C.contiguous(call, 0, dst)
    C.contiguous(call, 1, src)
    C.live(call, 0, L.parent_of(dst), L.data_address(dst))
    C.live(call, 1, L.parent_of(src), L.data_address(src))


@register_jitable
def _done(status):
    if status != 0:
        C.raise_status(status)


def _sync_overload(name, c_call):
    function = stub(name, "team")
    call = E.CALL[name]

    @overload_literal(function)
    def typed(team):
        handle = _team_handle(name, team)

        def impl(team):
            C.ready(call)
            L.fence_seq_cst()  # this PE's stores before the arrival (barrier's quiet)
            _done(c_call(handle(team)))

        return impl

    return function


def _reduce_overload(name, c_call, per_member):
    function = stub(name, "team, dst, src, op")
    call = E.CALL[name]

    @overload_literal(function)
    def typed(team, dst, src, op):
        require_pair(name, dst, src, copies=False)
        handle, dtype = _team_handle(name, team), _code(name, dst, _DTYPES, "dst")
        code = _op_code(name, dst, op)

        def impl(team, dst, src, op):
            _arrays(call, dst, src)
            n = dst.size if per_member else min(dst.size, src.size)
            _done(c_call(handle(team), L.data_address(dst), L.data_address(src), n, dtype, code))

        return impl

    return function


def _bytes_overload(name, c_call, count):
    function = stub(name, "team, dst, src")
    call = E.CALL[name]

    @overload_literal(function)
    def typed(team, dst, src):
        require_pair(name, dst, src)
        handle = _team_handle(name, team)

        def impl(team, dst, src):
            _arrays(call, dst, src)
            t = handle(team)
            nbytes = count(t, dst, src) * dst.itemsize
            _done(c_call(t, L.data_address(dst), L.data_address(src), nbytes))

        return impl

    return function


@register_jitable
def _each_src(team, dst, src):
    return src.size


@register_jitable
def _per_member(team, dst, src):
    n = L.c_team_n_pes(team)
    return dst.size // n if n > 0 else 0


barrier = _sync_overload("barrier", L.c_barrier)
sync = _sync_overload("sync", L.c_sync)
reduce = _reduce_overload("reduce", L.c_reduce, False)
reducescatter = _reduce_overload("reducescatter", L.c_reducescatter, True)
fcollect = _bytes_overload("fcollect", L.c_fcollect, _each_src)
alltoall = _bytes_overload("alltoall", L.c_alltoall, _per_member)
broadcast = stub("broadcast", "team, dst, src, root=0")
team_my_pe = stub("team_my_pe", "team")
team_n_pes = stub("team_n_pes", "team")


@overload_literal(broadcast)
def _broadcast(team, dst, src, root=0):
    require_pair("broadcast", dst, src)
    handle, call = _team_handle("broadcast", team), E.CALL["broadcast"]

    def impl(team, dst, src, root=0):
        _arrays(call, dst, src)
        nbytes = min(dst.size, src.size) * dst.itemsize
        _done(
            L.c_broadcast(
                handle(team), L.data_address(dst), L.data_address(src), nbytes, types.int32(root)
            )
        )

    return impl


def _team_query(function, c_call, name):
    @overload_literal(function)
    def typed(team):
        handle = _team_handle(name, team)
        return lambda team: c_call(handle(team))


_team_query(team_my_pe, L.c_team_my_pe, "team_my_pe")
_team_query(team_n_pes, L.c_team_n_pes, "team_n_pes")
