"""The exceptions njit device code raises, as symmem's host calls would.

Numba raises an exception class with arguments from njit code by calling
the class in Python once the njit function has returned (twice, in fact:
the constructors here only read, so both give the same exception). The
constructors write the message the host call would: "[pe N] call: ...".
A failed wait or barrier in the C engine leaves its message (naming the
dead PE, the timeout, ...) in the per-thread last error, which
`_symmem.device_last_error()` reads."""

from symmem import _symmem

# Call names by number: njit code passes the number (a compile-time constant).
CALLS = (
    "put",
    "get",
    "p",
    "g",
    "put_nbi",
    "get_nbi",
    "put_signal",
    "put_signal_nbi",
    "signal_op",
    "signal_wait",
    "wait_until",
    "barrier_all",
    "sync_all",
    "atomic_fetch",
    "atomic_set",
    "atomic_inc",
    "atomic_fetch_inc",
    "atomic_add",
    "atomic_fetch_add",
    "atomic_and",
    "atomic_fetch_and",
    "atomic_or",
    "atomic_fetch_or",
    "atomic_xor",
    "atomic_fetch_xor",
    "atomic_swap",
    "atomic_compare_swap",
    "quiet",
    "fence",
    "barrier",
    "sync",
    "reduce",
    "reducescatter",
    "fcollect",
    "alltoall",
    "broadcast",
    "get_peer_array",
)
CALL = {name: i for i, name in enumerate(CALLS)}

# What a check found wrong, by number.
(
    NOT_INITIALIZED,
    NOT_HOST,
    BAD_PE,
    NOT_SYMMETRIC,
    NOT_CONTIGUOUS,
    BAD_OP,
    BAD_CMP,
    EMPTY,
    FREED,
    UNTRACED,
) = range(10)


def _prefixed(text):
    pe = _symmem.my_pe()
    return text if pe < 0 else f"[pe {pe}] {text}"


def _fill(exc, status, text):
    Exception.__init__(exc, text)
    exc.msg = text
    exc.status = status


class DeviceInvalid(_symmem.NvshmemInvalid):
    """Misuse found by njit device code: (what, call, argument index, value)."""

    def __init__(self, what, call, arg=0, value=0):
        name = CALLS[call]
        argname = ("dst", "src", "sig_addr", "ivar", "dest", "array")[arg]  # by the arg number
        if what == NOT_INITIALIZED:
            try:  # in a child forked after init: the NvshmemError naming fork
                _symmem.require_initialized(name)
            except _symmem.NvshmemInvalid:
                pass
            text = f"{name}: symmem is not initialised (call symmem.init() first)"
        elif what == BAD_PE:
            text = f"{name}: pe {value} is out of range: there are {_symmem.n_pes()} PEs"
        elif what == NOT_SYMMETRIC:
            text = (
                f"{name}: {argname} (address {value:#x}) is not memory on the "
                f"symmetric heap (make it with symmem.array)"
            )
        elif what == NOT_CONTIGUOUS:
            text = f"{name}: {argname} is not a contiguous array"
        elif what == FREED:
            text = (
                f"{name}: {argname} (address {value:#x}) refers to symmetric memory that "
                f"was freed (free_array, free or finalize freed its allocation); its "
                f"address may now belong to a newer allocation, so symmem refuses it"
            )
        elif what == UNTRACED:
            text = (
                f"{name}: {argname} (address {value:#x}) names symmetric memory through "
                f"an object that leads to no array symmem made over it, so symmem cannot "
                f"tell whether that array was freed and its address given to a newer "
                f"allocation, and refuses it; pass the array (or a NumPy view of it)"
            )
        elif what == EMPTY:
            text = f"{name}: {argname} is empty (the call needs its first element)"
        elif what == BAD_OP:
            text = f"{name}: signal_op={value} is not SIGNAL_SET (9) or SIGNAL_ADD (10)"
        else:
            text = f"{name}: cmp={value} is not a ComparisonType (0 to 5)"
        _fill(self, _symmem.ERR_INVALID, _prefixed(text))


class DeviceNotHere(NotImplementedError):
    """An njit device call where the heap is not host memory (gpu backend)."""

    def __init__(self, call):
        text = _prefixed(
            f"{CALLS[call]}: symmem.device.numba in @numba.njit code needs the "
            f"cpu backend, whose heap is host memory; the running backend "
            f"{_symmem.backend_name()!r} keeps it on the GPU"
        )
        _fill(self, _symmem.ERR_UNSUPPORTED, text)


class DeviceUnreachable(NotImplementedError):
    """An njit device call to a PE whose heap this process does not map (on
    the mpi backend: a PE of another node)."""

    def __init__(self, call, pe):
        text = _prefixed(
            f"{CALLS[call]}: PE {pe}'s heap cannot be reached with loads and "
            f"stores from this PE on the {_symmem.backend_name()} backend: "
            f"@numba.njit device calls reach the PEs of this node only "
            f"(TEAM_NODE); make the host call (symmem.{CALLS[call]}) for PE {pe}"
        )
        _fill(self, _symmem.ERR_UNSUPPORTED, text)


def _last(expected_status):
    status, text = _symmem.device_last_error()
    return (status or expected_status), (text or "a device wait failed")


class DeviceError(_symmem.NvshmemError):
    """A wait or barrier the C engine ended: a dead peer, a timeout."""

    def __init__(self):
        status, text = _last(_symmem.ERR_BACKEND)
        _fill(self, status, text)


class DeviceWaitInvalid(_symmem.NvshmemInvalid):
    """A wait or barrier the C engine refused (its checks)."""

    def __init__(self):
        status, text = _last(_symmem.ERR_INVALID)
        _fill(self, status, text)


class DeviceInterrupted(Exception):
    """A device wait a signal handler interrupted: numba raises only Exception
    subclasses, so this one becomes the KeyboardInterrupt itself (the handler's
    own exception was cleared in C, src/extension/device.c)."""

    def __new__(cls, *args):
        return KeyboardInterrupt(_last(_symmem.ERR_INTERRUPTED)[1])
