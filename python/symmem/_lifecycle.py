"""init / finalize, unique ids, status and versions."""
import warnings

import numpy as np

from symmem import _rendezvous, _symmem
from symmem._enums import InitStatus
from symmem._errors import NvshmemInvalid, invalid

_state = {"was_initialized": False}
_finalize_hooks = []  # run before the runtime ends (frees leaked memory)
_init_hooks = []  # run once the runtime has started

INITIALIZER_METHODS = ("", "auto", "uid", "mpi", "emulated_mpi")
BACKENDS = ("cpu", "gpu", "auto", "")  # what init's backend= names (src/core/lifecycle.c)


class UniqueID:
    """The bytes that let PEs of one job find each other.

    Made by get_unique_id() on one PE and handed to the others by any means:
    pickle, bytes(uid) / UniqueID.from_bytes, or an MPI broadcast of
    uid._data (a writable NumPy view of the bytes)."""

    SIZE = _symmem.UNIQUE_ID_SIZE

    def __init__(self, data=None):
        self._data = np.zeros(self.SIZE, dtype=np.uint8)
        if data is not None:
            self._data[:] = np.frombuffer(self._raw(data, "UniqueID"), dtype=np.uint8)

    @classmethod
    def _raw(cls, data, call):
        """data's bytes: bytes-like only (bytes(n) of an int would be n zeros)."""
        try:
            raw = memoryview(data).tobytes()
        except TypeError:
            raise invalid(f"{call}: data of type {type(data).__name__} is not bytes "
                          f"(expected the {cls.SIZE} bytes of bytes(uid))") from None
        if len(raw) != cls.SIZE:
            raise invalid(f"{call}: expected {cls.SIZE} bytes, got {len(raw)}")
        return raw

    @classmethod
    def from_bytes(cls, data):
        """The UniqueID whose bytes(uid) is data (None is refused: that would be an
        all-zero id, which no get_unique_id() returns)."""
        return cls(cls._raw(data, "UniqueID.from_bytes"))

    @property
    def ptr(self):
        """The address of the bytes (NVSHMEM4Py's uid.ptr, which symmem.bindings reads)."""
        return self._data.__array_interface__["data"][0]

    def __bytes__(self):
        return self._data.tobytes()

    def __reduce__(self):
        return (UniqueID.from_bytes, (bytes(self),))

    def __eq__(self, other):
        return isinstance(other, UniqueID) and bytes(self) == bytes(other)

    def __hash__(self):
        return hash(bytes(self))

    def __repr__(self):
        return f"UniqueID({bytes(self)[:16].hex()}...)"


def get_unique_id(empty=False):
    """A fresh UniqueID (or an all-zero one to receive into, with empty=True)."""
    if empty:
        return UniqueID()
    return UniqueID(_symmem.get_unique_id())


class Version:
    """Versions of what is running."""

    def __init__(self, backend):
        self.symmem_version = _symmem.VERSION
        self.nvshmem4py_version = _symmem.VERSION
        self.openshmem_spec_version = _symmem.OPENSHMEM_SPEC_VERSION
        self.libnvshmem_version = _symmem.library_version()  # "" on cpu and before init
        self.backend = backend

    def __repr__(self):
        return (f"Version(symmem_version={self.symmem_version!r}, backend={self.backend!r}, "
                f"openshmem_spec_version={self.openshmem_spec_version!r}, "
                f"libnvshmem_version={self.libnvshmem_version!r})")


def get_name():
    """The library's name and version (NVSHMEM4Py's nvshmem_info_get_name):
    "symmem v<version>", plus " over NVSHMEM v<version>" once the gpu backend
    runs on libnvshmem. Works before init()."""
    name = f"symmem v{_symmem.VERSION}"
    nvshmem = _symmem.library_version()
    return f"{name} over NVSHMEM v{nvshmem}" if nvshmem else name


def get_version():
    backend = _symmem.backend_name() or _symmem.env("SYMMEM_BACKEND")
    return Version(backend)


def init_status():
    if _symmem.initialized():
        return InitStatus.STATUS_IS_INITIALIZED
    if _state["was_initialized"]:
        return InitStatus.STATUS_IS_BOOTSTRAPPED
    return InitStatus.STATUS_NOT_INITIALIZED


def _device_ordinal(device):
    """A cuda.core Device, an int ordinal or None -> an ordinal (-1 = default)."""
    if device is None:
        return -1
    if isinstance(device, bool):
        raise invalid(f"init: device={device!r} is not a Device or an ordinal")
    if isinstance(device, int):
        if device < 0:
            raise invalid(f"init: device={device} must be >= 0")
        return device
    for attribute in ("device_id", "id", "index"):
        ordinal = getattr(device, attribute, None)
        if isinstance(ordinal, int):
            return ordinal
    raise invalid(f"init: device of type {type(device).__name__} is not a Device or an ordinal")


def init(device=None, uid=None, rank=None, nranks=None, mpi_comm=None,
         initializer_method="", backend=None):
    """Start the runtime (collective). A second call does nothing (but still
    refuses a malformed initializer_method, device or backend).

    initializer_method: "" or "auto" (the launcher's, torchrun's, mpirun's or
    srun's environment; a world of one PE without any), "uid" (uid, rank and
    nranks required), "mpi" or "emulated_mpi" (over mpi_comm, default
    COMM_WORLD)."""
    if initializer_method is None:
        initializer_method = ""
    if initializer_method not in INITIALIZER_METHODS:
        raise invalid(f"init: initializer_method={initializer_method!r} is not one of "
                      f"{', '.join(repr(m) for m in INITIALIZER_METHODS)}")
    ordinal = _device_ordinal(device)
    if _symmem.initialized():
        if backend is not None and backend not in BACKENDS:  # the C library's names
            raise invalid(f"init: backend={backend!r} is not one of "
                          f"{', '.join(repr(b) for b in BACKENDS[:3])}")
        return
    if initializer_method in ("", "auto"):
        # PEs on several hosts: NVSHMEM's id goes over the launcher's rendezvous
        job = _symmem.launcher(backend=backend)
        if job["spans_hosts"] and job["backend"] == "gpu":
            initializer_method = "uid"
            uid = UniqueID(_rendezvous.uid_across_hosts(_symmem.get_unique_id, job))
            rank, nranks = job["rank"], job["nranks"]
    if initializer_method in ("mpi", "emulated_mpi"):
        data, rank, nranks = _rendezvous.uid_over_mpi(_symmem.get_unique_id, mpi_comm)
        uid = UniqueID(data)
    if initializer_method == "uid" or initializer_method in ("mpi", "emulated_mpi"):
        if not isinstance(uid, UniqueID):
            raise invalid(f"init: initializer_method='uid' needs uid=get_unique_id(), got "
                          f"{type(uid).__name__}")
        # rank and nranks are checked by the C library.
        _symmem.init(uid=bytes(uid), rank=rank, nranks=nranks, backend=backend, device=ordinal)
    else:
        _symmem.init(backend=backend, device=ordinal)
    _state["was_initialized"] = True
    for hook in _init_hooks:
        hook()


def finalize():
    """End the runtime (collective): frees what the program forgot, reporting
    each leak once. A second call does nothing."""
    if not _symmem.initialized():
        return
    for hook in _finalize_hooks:
        hook()
    _symmem.finalize()


def my_pe():
    return _symmem.my_pe()


def n_pes():
    return _symmem.n_pes()


def _warn(message):
    warnings.warn(message, ResourceWarning, stacklevel=3)


__all__ = ["UniqueID", "get_unique_id", "Version", "get_name", "get_version", "init_status",
           "init", "finalize", "my_pe", "n_pes", "NvshmemInvalid"]
