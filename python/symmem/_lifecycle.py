"""init / finalize, unique ids, status and versions."""

import warnings

import numpy as np

from symmem import _mpi_build, _rendezvous, _symmem
from symmem._enums import InitStatus
from symmem._errors import NvshmemInvalid, invalid

_state = {"was_initialized": False}
_finalize_hooks = []  # run before the runtime ends (frees leaked memory)
_init_hooks = []  # run once the runtime has started

INITIALIZER_METHODS = ("", "auto", "uid", "mpi", "emulated_mpi")
MPI_METHODS = INITIALIZER_METHODS[3:]  # over an mpi4py communicator
BACKENDS = ("cpu", "gpu", "mpi", "auto", "")  # what init's backend= names (src/core/lifecycle.c)


class UniqueID:
    """The bytes that let the PEs of one job find each other.

    Made by `get_unique_id` on one PE and handed to the others by any means:
    pickle, ``bytes(uid)`` and `UniqueID.from_bytes`, or an MPI broadcast of
    ``uid._data`` (a writable NumPy view of the bytes); then every PE passes
    it to ``init(uid=uid, rank=..., nranks=..., initializer_method="uid")``.

    Args:
        data: the SIZE bytes of a UniqueID (any bytes-like object), or None
            for an all-zero one to receive into.

    Raises:
        NvshmemInvalid: data is not bytes-like or not SIZE bytes long.

    Example:
        >>> uid = symmem.get_unique_id()
        >>> symmem.UniqueID.from_bytes(bytes(uid)) == uid
        True
        >>> len(bytes(symmem.UniqueID())) == symmem.UniqueID.SIZE
        True
    """

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
            raise invalid(
                f"{call}: data of type {type(data).__name__} is not bytes "
                f"(expected the {cls.SIZE} bytes of bytes(uid))"
            ) from None
        if len(raw) != cls.SIZE:
            raise invalid(f"{call}: expected {cls.SIZE} bytes, got {len(raw)}")
        return raw

    @classmethod
    def from_bytes(cls, data):
        """The UniqueID whose ``bytes(uid)`` is data.

        Args:
            data: the SIZE bytes of a UniqueID (bytes-like).

        Returns:
            A UniqueID.

        Raises:
            NvshmemInvalid: data is not bytes-like (None included: that
                would be an all-zero id, which no get_unique_id() returns)
                or not SIZE bytes long.

        Example:
            >>> uid = symmem.get_unique_id()
            >>> symmem.UniqueID.from_bytes(bytes(uid)) == uid
            True
        """
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
    """A fresh UniqueID, for ``init(initializer_method="uid")``.

    One PE makes it and hands it to the others (pickle, bytes, or MPI);
    works before init().

    Args:
        empty: True for an all-zero UniqueID to receive one into (what the
            other PEs of NVSHMEM4Py's MPI examples make).

    Returns:
        A UniqueID.

    Raises:
        NvshmemError: the backend SYMMEM_BACKEND names cannot run here
            (backend='gpu' without a usable GPU and NVSHMEM).
        NvshmemInvalid: SYMMEM_BACKEND names no backend; empty is not a
            bool.

    Example:
        >>> uid = symmem.get_unique_id()
        >>> uid == symmem.get_unique_id()  # each is new
        False
        >>> bytes(symmem.get_unique_id(empty=True)) == bytes(symmem.UniqueID.SIZE)
        True
    """
    if not isinstance(empty, (bool, np.bool_)):
        raise invalid(f"get_unique_id: empty={empty!r:.60} is not a bool")
    if empty:
        return UniqueID()
    _mpi_build.provide(call="get_unique_id")  # before the C library looks for it
    return UniqueID(_symmem.get_unique_id())


class Version:
    """Versions of what is running, as `get_version` returns them.

    Its attributes: symmem_version and nvshmem4py_version (symmem's version,
    which is also the NVSHMEM4Py version it stands for),
    openshmem_spec_version, libnvshmem_version (NVSHMEM's, on the gpu
    backend's nvshmem engine; "" elsewhere and before init), backend
    ('cpu', 'gpu', 'mpi', or SYMMEM_BACKEND's value before init) and engine
    (the gpu backend's: 'nvshmem' or 'symmem'; "" elsewhere and before
    init).

    Args:
        backend: the backend's name.

    Example:
        >>> v = symmem.get_version()
        >>> v.symmem_version == symmem.__version__
        True
    """

    def __init__(self, backend):
        self.symmem_version = _symmem.VERSION
        self.nvshmem4py_version = _symmem.VERSION
        self.openshmem_spec_version = _symmem.OPENSHMEM_SPEC_VERSION
        self.libnvshmem_version = _symmem.library_version()  # "" on cpu and before init
        self.backend = backend
        self.engine = _symmem.engine_name()

    def __repr__(self):
        return (
            f"Version(symmem_version={self.symmem_version!r}, backend={self.backend!r}, "
            f"engine={self.engine!r}, "
            f"openshmem_spec_version={self.openshmem_spec_version!r}, "
            f"libnvshmem_version={self.libnvshmem_version!r})"
        )


def get_name():
    """The library's name and version (NVSHMEM's nvshmem_info_get_name).

    Works before init().

    Returns:
        "symmem v<version>", with " over NVSHMEM v<version>" once the gpu
        backend runs on libnvshmem.

    Example:
        >>> symmem.get_name().startswith("symmem v" + symmem.__version__)
        True
    """
    name = f"symmem v{_symmem.VERSION}"
    nvshmem = _symmem.library_version()
    return f"{name} over NVSHMEM v{nvshmem}" if nvshmem else name


def get_version():
    """The versions of symmem, the OpenSHMEM spec, NVSHMEM and the backend.

    Works before init().

    Returns:
        A Version.

    Example:
        >>> v = symmem.get_version()
        >>> v.backend in ("cpu", "gpu")
        True
    """
    backend = _symmem.backend_name() or _symmem.env("SYMMEM_BACKEND")
    return Version(backend)


def init_status():
    """Where the runtime is: not started, running, or ended.

    Returns:
        An InitStatus: STATUS_NOT_INITIALIZED before init(),
        STATUS_IS_INITIALIZED between init() and finalize(), and
        STATUS_IS_BOOTSTRAPPED after finalize() (NVSHMEM4Py's meaning).

    Example:
        >>> symmem.init_status() == symmem.InitStatus.STATUS_IS_INITIALIZED
        True
    """
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


def init(
    device=None,
    uid=None,
    rank=None,
    nranks=None,
    mpi_comm=None,
    initializer_method="",
    backend=None,
):
    """Start the runtime: collective over every PE of the job.

    A second call does nothing (but still refuses a malformed
    initializer_method, device or backend). Without a launcher, and with
    the default initializer_method, the program is a world of one PE.

    Args:
        device: the GPU (gpu backend): a cuda.core Device, an ordinal, or
            None for ``LOCAL_RANK % number of GPUs``. Not used on cpu.
        uid: with initializer_method="uid", the UniqueID that one PE made
            with get_unique_id() and every PE passes.
        rank: with "uid", this PE's number in [0, nranks).
        nranks: with "uid", the number of PEs.
        mpi_comm: with "mpi" or "emulated_mpi", the mpi4py communicator
            whose processes become the PEs (default COMM_WORLD); on the mpi
            backend the PEs then run on (a duplicate of) that communicator.
        initializer_method: "" or "auto": from the environment of
            symmem.run, torchrun, mpirun or srun; "uid": from uid, rank
            and nranks; "mpi" or "emulated_mpi": over mpi_comm.
        backend: 'cpu', 'gpu', 'mpi' or 'auto'; default: SYMMEM_BACKEND,
            else 'auto' (gpu where a CUDA device and libnvshmem are usable;
            mpi for an mpirun or srun job across hosts, where it was built).

    Raises:
        NvshmemInvalid: initializer_method, device or backend is not one
            of those above; "uid" without a UniqueID, or rank and nranks
            missing or out of range; a launcher's variable that is set is
            malformed (SYMMEM_RANK=-1, WORLD_SIZE=x, more than 1048576
            PEs), or a size, number or duration (SYMMEM_SYMMETRIC_SIZE,
            SYMMEM_TIMEOUT=30x); the PEs of the job disagree on its size
            or heap size.
        NvshmemError: the PEs could not find each other (bootstrap), the
            backend asked for cannot run here, or it failed to start; this
            process was forked from a PE after its init() (ERR_FORKED).

    Example:
        >>> symmem.init()  # in a program started by python -m symmem.run -n N
        >>> symmem.init_status() == symmem.InitStatus.STATUS_IS_INITIALIZED
        True

        Without a launcher, over mpi4py (``mpirun -n 4 python prog.py``)::

            symmem.init(initializer_method="mpi")

        or handing a UniqueID to the others yourself::

            uid = symmem.get_unique_id() if rank == 0 else None
            uid = comm.bcast(uid, root=0)      # any way of sending bytes
            symmem.init(uid=uid, rank=rank, nranks=nranks,
                        initializer_method="uid")
    """
    if initializer_method is None:
        initializer_method = ""
    if initializer_method not in INITIALIZER_METHODS:
        raise invalid(
            f"init: initializer_method={initializer_method!r} is not one of "
            f"{', '.join(repr(m) for m in INITIALIZER_METHODS)}"
        )
    ordinal = _device_ordinal(device)
    if _symmem.initialized():
        if backend is not None and backend not in BACKENDS:  # the C library's names
            raise invalid(
                f"init: backend={backend!r} is not one of "
                f"{', '.join(repr(b) for b in BACKENDS[:4])}"
            )
        return
    _mpi_build.provide(backend)  # built on first use, before the C library looks for it
    if initializer_method in ("", "auto"):
        # PEs on several hosts: NVSHMEM's id goes over the launcher's rendezvous
        job = _symmem.launcher(backend=backend)
        if job["spans_hosts"] and "spans_hosts" in job["capabilities"]:
            initializer_method = "uid"
            uid = UniqueID(_rendezvous.uid_across_hosts(_symmem.get_unique_id, job))
            rank, nranks = job["rank"], job["nranks"]
    if initializer_method in MPI_METHODS:
        if "mpi_processes" in _symmem.launcher(backend=backend)["capabilities"]:
            # the backend's PEs (the mpi backend's) are the communicator's processes
            handle, rank, nranks = _rendezvous.mpi_comm_handle(mpi_comm)
            _symmem.init(mpi_comm=handle, rank=rank, nranks=nranks, backend=backend, device=ordinal)
            _state["was_initialized"] = True
            for hook in _init_hooks:
                hook()
            return
        data, rank, nranks = _rendezvous.uid_over_mpi(_symmem.get_unique_id, mpi_comm)
        uid = UniqueID(data)
    if initializer_method == "uid" or initializer_method in MPI_METHODS:
        if not isinstance(uid, UniqueID):
            raise invalid(
                f"init: initializer_method='uid' needs uid=get_unique_id(), got "
                f"{type(uid).__name__}"
            )
        # rank and nranks are checked by the C library.
        _symmem.init(uid=bytes(uid), rank=rank, nranks=nranks, backend=backend, device=ordinal)
    else:
        _symmem.init(backend=backend, device=ordinal)
    _state["was_initialized"] = True
    for hook in _init_hooks:
        hook()


def finalize():
    """End the runtime: collective over every PE.

    Frees what the program forgot to free (warning once for each, unless
    it was allocated with release=True) and unregisters external memory
    left registered, in the same order on every PE. A second call, one
    before init(), or one in a child process forked after init() (which is
    no PE: its exit must not end its parent's), does nothing.

    Raises:
        NvshmemError: a PE it waits for died, SYMMEM_TIMEOUT seconds
            passed, or the backend failed; the runtime stays initialised,
            so finalize() can be called again. While it frees a leak the
            message names finalize and the Buffer ("finalize: freeing the
            Buffer at 0x...: timed out ...").
        NvshmemInvalid: PEs made different collective calls before it
            (the cpu backend checks).

    Example:
        >>> x = symmem.array(4)
        >>> symmem.free_array(x)  # else finalize() frees it, with a warning
        >>> symmem.finalize()
        >>> symmem.init_status() == symmem.InitStatus.STATUS_IS_BOOTSTRAPPED
        True
    """
    if not _symmem.initialized():
        return
    for hook in _finalize_hooks:
        hook()
    _symmem.finalize()


def my_pe():
    """This PE's number, from 0 to n_pes() - 1.

    Returns:
        An int; -1 before init().

    Raises:
        NvshmemError: in a child process forked after init(), which is no
            PE (status ERR_FORKED).

    Example:
        >>> 0 <= symmem.my_pe() < symmem.n_pes()
        True
    """
    return _symmem.my_pe()


def n_pes():
    """The number of PEs in the job.

    Returns:
        An int; -1 before init().

    Raises:
        NvshmemError: in a child process forked after init(), which is no
            PE (status ERR_FORKED).

    Example:
        >>> symmem.n_pes() >= 1
        True
    """
    return _symmem.n_pes()


def _warn(message):
    warnings.warn(message, ResourceWarning, stacklevel=3)


__all__ = [
    "UniqueID",
    "get_unique_id",
    "Version",
    "get_name",
    "get_version",
    "init_status",
    "init",
    "finalize",
    "my_pe",
    "n_pes",
    "NvshmemInvalid",
]
