"""NVSHMEM's C enums under NVSHMEM4Py's bindings names. Those nvshmem.core
re-exports are symmem's own (Signal_op is SignalOp, Cmp_type ComparisonType,
...); the others carry NVSHMEM's values. INT_MAX marks NVSHMEM's sentinels."""

from enum import IntEnum

from symmem._enums import ComparisonType, InitStatus, SignalOp, SmemAmount, ThreadSupport

_INT_MAX = 2**31 - 1

Signal_op = SignalOp
Cmp_type = ComparisonType
Init_status = InitStatus
Thread_support = ThreadSupport
Smem_amount = SmemAmount


class Team_id(IntEnum):
    """nvshmem_team_id_t (the _INDEX names are aliases)."""

    TEAM_INVALID = -1
    TEAM_WORLD = 0
    TEAM_WORLD_INDEX = 0
    TEAM_SHARED = 1
    TEAM_SHARED_INDEX = 1
    TEAM_NODE = 2
    TEAM_NODE_INDEX = 2
    TEAM_SAME_MYPE_NODE = 3
    TEAM_SAME_MYPE_NODE_INDEX = 3
    TEAM_SAME_GPU = 4
    TEAM_SAME_GPU_INDEX = 4
    TEAM_GPU_LEADERS = 5
    TEAM_GPU_LEADERS_INDEX = 5
    TEAM_MC_SHARED = 6
    TEAM_MC_SHARED_INDEX = 6
    TEAMS_MIN = 7
    TEAM_INDEX_MAX = _INT_MAX


class Status(IntEnum):
    """nvshmemx_status: what the C calls return (check_status reads it)."""

    SUCCESS = 0
    ERROR_INVALID_VALUE = 1
    ERROR_OUT_OF_MEMORY = 2
    ERROR_NOT_SUPPORTED = 3
    ERROR_SYMMETRY = 4
    ERROR_GPU_NOT_SELECTED = 5
    ERROR_COLLECTIVE_LAUNCH_FAILED = 6
    ERROR_INTERNAL = 7
    ERROR_SENTINEL = _INT_MAX


class Flags(IntEnum):
    """hostlib_init_attr's flags."""

    INIT_THREAD_PES = 1
    INIT_WITH_MPI_COMM = 1 << 1
    INIT_WITH_SHMEM = 1 << 2
    INIT_WITH_UNIQUEID = 1 << 3
    INIT_MAX = 1 << 31


class Tma_policy(IntEnum):
    TMA_DISABLE = 0
    TMA_ENABLE = 1
    TMA_FORCE = 2
    MAX = _INT_MAX


class Region_hint(IntEnum):
    NONE = 0
    BATCH_RMA = 1


class Proxy_status(IntEnum):
    _PROXY_GLOBAL_EXIT_NOT_REQUESTED = 0
    _PROXY_GLOBAL_EXIT_INIT = 1
    _PROXY_GLOBAL_EXIT_REQUESTED = 2
    _PROXY_GLOBAL_EXIT_FINISHED = 3
    _PROXY_GLOBAL_EXIT_MAX_STATE = _INT_MAX


class Qp_handle_index(IntEnum):
    QP_HOST = 0
    QP_DEFAULT = 1
    QP_ANY = _INT_MAX
    QP_ALL = _INT_MAX


class Pe_index(IntEnum):
    PE_INVALID = -1
    PE_ANY = 1 << 15
    PE_ALL = 1 << 15
