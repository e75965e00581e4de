"""The enumerations of the NVSHMEM4Py API, with the same names and values."""
from enum import IntEnum


class Teams(IntEnum):
    TEAM_INVALID = -1
    TEAM_WORLD = 0
    TEAM_SHARED = 1
    TEAM_NODE = 2
    TEAM_SAME_MYPE_NODE = 3
    TEAM_SAME_GPU = 4
    TEAM_GPU_LEADERS = 5


class InitStatus(IntEnum):
    STATUS_NOT_INITIALIZED = 0
    STATUS_IS_BOOTSTRAPPED = 1
    STATUS_IS_INITIALIZED = 2
    STATUS_LIMITED_MPG = 3
    STATUS_FULL_MPG = 4
    STATUS_INVALID = 5


class SignalOp(IntEnum):
    SIGNAL_SET = 9
    SIGNAL_ADD = 10


class ComparisonType(IntEnum):
    CMP_EQ = 0
    CMP_NE = 1
    CMP_GT = 2
    CMP_LE = 3
    CMP_LT = 4
    CMP_GE = 5
