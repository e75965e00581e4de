"""The enumerations of the NVSHMEM4Py API, with the same names and values.

Each member is written out here, so that type checkers know it
(`nvshmem.SignalOp.SIGNAL_SET` checks under mypy); the values of Teams,
SignalOp and ComparisonType are the C library's own, and this module refuses
to import where they differ from the C module's tables (_symmem.TEAMS,
SIGNAL_OPS, COMPARISONS), so the two can never drift apart. InitStatus,
ThreadSupport and SmemAmount are the package's, with NVSHMEM's values.

Teams is an IntEnum of the predefined teams (numba compiles its members into
device code), and also, as NVSHMEM4Py's MutableEnum-based Teams is, a
registry of the teams this PE made by name: Teams.<name>, Teams[name],
name in Teams, Teams.keys() / values() / items(). Iterating gives the
predefined members, then each live team made here (each with .name)."""

from enum import EnumMeta, IntEnum
from typing import TYPE_CHECKING

from symmem import _symmem

_INT_MAX = 2**31 - 1  # NVSHMEM's enums end in INT_MAX sentinels


class _TeamsType(EnumMeta):
    """The metaclass that adds the teams made at run time (_made) to the
    predefined members; a name never shadows a predefined one (_teams checks)."""

    _made: dict = {}  # name -> Team, filled and emptied by symmem._teams

    if not TYPE_CHECKING:  # type checkers see the members only: a misspelt one is an error

        def __getattr__(cls, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                made = _TeamsType._made.get(name)
                if made is None:
                    raise AttributeError(
                        f"Teams has no member or live team named {name!r}"
                    ) from None
                return made

    def __getitem__(cls, key):
        if isinstance(key, cls):  # `for t in Teams: Teams[t]` in both spellings
            return key
        if isinstance(key, str) and key in _TeamsType._made:
            return _TeamsType._made[key]
        return super().__getitem__(key)

    def __contains__(cls, item):
        if isinstance(item, str):
            return item in cls._member_map_ or item in _TeamsType._made
        if isinstance(item, int) and not isinstance(item, bool):
            return any(int(team) == item for team in cls.values())
        return False

    def __iter__(cls):
        yield from super().__iter__()
        yield from list(_TeamsType._made.values())

    def __len__(cls):
        return len(cls._member_map_) + len(_TeamsType._made)

    def keys(cls):
        return [*cls._member_map_, *_TeamsType._made]

    def values(cls):
        return list(cls)

    def items(cls):
        return list(zip(cls.keys(), cls.values()))


class Teams(IntEnum, metaclass=_TeamsType):
    """The predefined teams (NVSHMEM's team handles), and the teams this PE made.

    Pass a member wherever a call takes a team; numba compiles members into
    device code. The teams this PE made by name (team_split_strided,
    team_split_2d, team_init) are found here too while they live:
    `Teams.<name>` and `Teams[name]` give the Team, `name in Teams` says
    whether one lives, and keys() / values() / items() list the predefined
    members, then the made teams. Type checkers know the predefined members
    only: look a made team up with `Teams[name]`.

    Attributes:
        TEAM_INVALID: -1, the handle a PE outside a new team gets.
        TEAM_WORLD: 0, every PE.
        TEAM_SHARED: 1, the PEs whose memory this PE loads and stores directly
            (cpu backend: every PE of the host).
        TEAM_NODE: 2, the PEs of this host.
        TEAM_SAME_MYPE_NODE: 3, the PEs with this PE's number in their node
            (cpu backend: this PE alone).
        TEAM_SAME_GPU: 4, the PEs on this PE's GPU (cpu backend: this PE alone).
        TEAM_GPU_LEADERS: 5, the first PE of each GPU (cpu backend: every PE).

    Raises:
        AttributeError: `Teams.<name>` where no member or live team has the name.
        KeyError: `Teams[name]` likewise.

    Example:
        >>> import symmem as nvshmem
        >>> int(nvshmem.Teams.TEAM_WORLD), nvshmem.Teams["TEAM_NODE"].value
        (0, 2)
        >>> "TEAM_SHARED" in nvshmem.Teams
        True
    """

    TEAM_INVALID = -1
    TEAM_WORLD = 0
    TEAM_SHARED = 1
    TEAM_NODE = 2
    TEAM_SAME_MYPE_NODE = 3
    TEAM_SAME_GPU = 4
    TEAM_GPU_LEADERS = 5


class SignalOp(IntEnum):
    """How put_signal, put_signal_nbi and signal_op update the signal word.

    Attributes:
        SIGNAL_SET: 9, the signal word becomes signal_val.
        SIGNAL_ADD: 10, signal_val is added to the signal word (atomically).

    Example:
        >>> import symmem as nvshmem
        >>> nvshmem.SignalOp.SIGNAL_ADD == 10
        True

        On 2 PEs, PE 0 adds 1 to PE 1's flag after its data::

            nvshmem.put_signal(dst, src, flag, 1, nvshmem.SignalOp.SIGNAL_ADD, 1)
    """

    SIGNAL_SET = 9
    SIGNAL_ADD = 10


class ComparisonType(IntEnum):
    """The comparison that signal_wait, wait_until and test apply
    (`ivar <cmp> value`).

    Attributes:
        CMP_EQ: 0, equal.
        CMP_NE: 1, not equal.
        CMP_GT: 2, greater than.
        CMP_LE: 3, less than or equal.
        CMP_LT: 4, less than.
        CMP_GE: 5, greater than or equal.

    Example:
        >>> import symmem as nvshmem
        >>> [c.name for c in nvshmem.ComparisonType][:2]
        ['CMP_EQ', 'CMP_NE']

        Wait until this PE's flag is at least 1::

            nvshmem.signal_wait(flag, 1, nvshmem.ComparisonType.CMP_GE)
    """

    CMP_EQ = 0
    CMP_NE = 1
    CMP_GT = 2
    CMP_LE = 3
    CMP_LT = 4
    CMP_GE = 5


class InitStatus(IntEnum):
    """Where this process stands in NVSHMEM's life cycle: init_status().

    Attributes:
        STATUS_NOT_INITIALIZED: 0, before init() and after finalize().
        STATUS_IS_BOOTSTRAPPED: 1, the PEs found each other; the heap is not
            set up yet.
        STATUS_IS_INITIALIZED: 2, init() returned: every call may be made.
        STATUS_LIMITED_MPG: 3, NVSHMEM's limited multi-process-per-GPU mode.
        STATUS_FULL_MPG: 4, NVSHMEM's full multi-process-per-GPU mode.
        STATUS_INVALID: 5, NVSHMEM's sentinel.

    Example:
        >>> import symmem as nvshmem
        >>> nvshmem.init_status() is nvshmem.InitStatus.STATUS_NOT_INITIALIZED
        True
    """

    STATUS_NOT_INITIALIZED = 0
    STATUS_IS_BOOTSTRAPPED = 1
    STATUS_IS_INITIALIZED = 2
    STATUS_LIMITED_MPG = 3
    STATUS_FULL_MPG = 4
    STATUS_INVALID = 5


class ThreadSupport(IntEnum):
    """NVSHMEM's thread levels (nvshmemx_thread_support_t): what query_thread()
    returns.

    Attributes:
        THREAD_SINGLE: 0, one thread of the process calls symmem.
        THREAD_FUNNELED: 1, only the thread that called init() calls symmem.
        THREAD_SERIALIZED: 2, any thread, one at a time.
        THREAD_MULTIPLE: 3, any thread, at the same time.
        THREAD_TYPE_SENTINEL: 2**31 - 1, NVSHMEM's sentinel.

    Example:
        >>> import symmem as nvshmem
        >>> nvshmem.ThreadSupport.THREAD_MULTIPLE > nvshmem.ThreadSupport.THREAD_SINGLE
        True
    """

    THREAD_SINGLE = 0
    THREAD_FUNNELED = 1
    THREAD_SERIALIZED = 2
    THREAD_MULTIPLE = 3
    THREAD_TYPE_SENTINEL = _INT_MAX


class SmemAmount(IntEnum):
    """What ask_smem() is asked for (nvshmemx_smem_amount_t): the shared
    memory a kernel's collectives need.

    Attributes:
        SMEM_RECOMMENDED: 0, the amount that runs them fastest.
        SMEM_MINIMUM: 1, the least they run with.
        SMEM_BARRIERS_ONLY: 2, enough for barriers alone.
        MAX: 2**31 - 1, NVSHMEM's sentinel.

    Example:
        >>> import symmem as nvshmem
        >>> int(nvshmem.SmemAmount.SMEM_MINIMUM)
        1
    """

    SMEM_RECOMMENDED = 0
    SMEM_MINIMUM = 1
    SMEM_BARRIERS_ONLY = 2
    MAX = _INT_MAX


def _check_against_c(enum, table, c_name):
    """enum's members must be the C module's table (the C library's constants)."""
    declared = {name: int(member) for name, member in enum.__members__.items()}
    if declared != dict(table):
        raise ImportError(
            f"symmem._enums.{enum.__name__} declares {declared}, but the C "
            f"module's _symmem.{c_name} is {dict(table)}: python/symmem/_enums.py "
            "must follow include/symmem/symmem.h (or rebuild the C module)"
        )


_check_against_c(Teams, _symmem.TEAMS, "TEAMS")
_check_against_c(SignalOp, _symmem.SIGNAL_OPS, "SIGNAL_OPS")
_check_against_c(ComparisonType, _symmem.COMPARISONS, "COMPARISONS")
