"""The enumerations of the NVSHMEM4Py API, with the same names and values.
Teams, SignalOp and ComparisonType are built from the C library's own
constants (the C module's tables); InitStatus, ThreadSupport and SmemAmount
are the package's, with NVSHMEM's values.

Teams is an IntEnum of the predefined teams (numba compiles its members into
device code), and also, as NVSHMEM4Py's MutableEnum-based Teams is, a
registry of the teams this PE made by name: Teams.<name>, Teams[name],
name in Teams, Teams.keys() / values() / items(). Iterating gives the
predefined members, then each live team made here (each with .name)."""
from enum import EnumMeta, IntEnum

from symmem import _symmem

_INT_MAX = 2**31 - 1  # NVSHMEM's enums end in INT_MAX sentinels


class _TeamsType(EnumMeta):
    """The metaclass that adds the teams made at run time (_made) to the
    predefined members; a name never shadows a predefined one (_teams checks)."""
    _made: dict = {}  # name -> Team, filled and emptied by symmem._teams

    def __getattr__(cls, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            made = _TeamsType._made.get(name)
            if made is None:
                raise AttributeError(f"Teams has no member or live team named {name!r}") from None
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


def _int_enum(name, members, metaclass=EnumMeta):
    namespace = metaclass.__prepare__(name, (IntEnum,))
    for key, value in members.items():
        namespace[key] = value
    namespace["__module__"] = __name__
    return metaclass(name, (IntEnum,), namespace)


Teams = _int_enum("Teams", _symmem.TEAMS, _TeamsType)
SignalOp = IntEnum("SignalOp", _symmem.SIGNAL_OPS, module=__name__)
ComparisonType = IntEnum("ComparisonType", _symmem.COMPARISONS, module=__name__)


class InitStatus(IntEnum):
    STATUS_NOT_INITIALIZED = 0
    STATUS_IS_BOOTSTRAPPED = 1
    STATUS_IS_INITIALIZED = 2
    STATUS_LIMITED_MPG = 3
    STATUS_FULL_MPG = 4
    STATUS_INVALID = 5


class ThreadSupport(IntEnum):
    """NVSHMEM's thread levels (nvshmemx_thread_support_t): query_thread()."""
    THREAD_SINGLE = 0
    THREAD_FUNNELED = 1
    THREAD_SERIALIZED = 2
    THREAD_MULTIPLE = 3
    THREAD_TYPE_SENTINEL = _INT_MAX


class SmemAmount(IntEnum):
    """What ask_smem() is asked for (nvshmemx_smem_amount_t)."""
    SMEM_RECOMMENDED = 0
    SMEM_MINIMUM = 1
    SMEM_BARRIERS_ONLY = 2
    MAX = _INT_MAX
