"""The enumerations of the NVSHMEM4Py API, with the same names and values.
Teams, SignalOp and ComparisonType are built from the C library's own
constants (the C module's tables); InitStatus is the package's."""
from enum import IntEnum

from symmem import _symmem

Teams = IntEnum("Teams", _symmem.TEAMS, module=__name__)
SignalOp = IntEnum("SignalOp", _symmem.SIGNAL_OPS, module=__name__)
ComparisonType = IntEnum("ComparisonType", _symmem.COMPARISONS, module=__name__)


class InitStatus(IntEnum):
    STATUS_NOT_INITIALIZED = 0
    STATUS_IS_BOOTSTRAPPED = 1
    STATUS_IS_INITIALIZED = 2
    STATUS_LIMITED_MPG = 3
    STATUS_FULL_MPG = 4
    STATUS_INVALID = 5
