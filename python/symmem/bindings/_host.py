"""The runtime through NVSHMEM's C calls: init and finalize through an
InitAttr, unique ids, status and version queries, whole-team barriers and
CUDA module init. Out-parameters are addresses (ctypes.addressof(x),
struct.ptr), written as NVSHMEM writes them."""
import ctypes

from symmem import _capabilities, _device_host, _lifecycle, _symmem
from symmem._errors import invalid
from symmem.bindings._enums import Flags
from symmem.bindings._pod import init_attr_dtype

my_pe = _symmem.my_pe
n_pes = _symmem.n_pes
barrier = _symmem.barrier
barrier_all = _symmem.barrier_all


def _out(address, call, arg):
    """address, where it is one to write to (NULL and non-ints are refused)."""
    if not isinstance(address, int) or isinstance(address, bool) or address <= 0:
        raise invalid(f"{call}: {arg}={address!r} is not an address to write to")
    return address


def _write_ints(call, pairs, ctype=ctypes.c_int32):
    for arg, address, value in pairs:
        ctype.from_address(_out(address, call, arg)).value = value


def _version_numbers(text):
    return [int(part) for part in text.split(".")[:3] if part.isdigit()] + [0, 0, 0]


def init_status():
    return int(_lifecycle.init_status())


def query_thread(provided):
    """Writes the thread level (ThreadSupport, an int32) at address provided."""
    _write_ints("query_thread", [("provided", provided, int(_capabilities.query_thread()))])


def info_get_version(major, minor):
    """Writes the OpenSHMEM version symmem implements (int32s)."""
    numbers = _version_numbers(_symmem.OPENSHMEM_SPEC_VERSION)
    _write_ints("info_get_version", [("major", major, numbers[0]), ("minor", minor, numbers[1])])


def vendor_get_version_info(major, minor, patch):
    """Writes symmem's version (int32s): the vendor is symmem (get_name())."""
    numbers = _version_numbers(_symmem.VERSION)
    _write_ints("vendor_get_version_info", [("major", major, numbers[0]),
                                            ("minor", minor, numbers[1]),
                                            ("patch", patch, numbers[2])])


def info_get_name(name):
    """Writes get_name() as a NUL-terminated string of at most 256 bytes."""
    text = _lifecycle.get_name().encode()[:255] + b"\0"
    ctypes.memmove(_out(name, "info_get_name", "name"), text, len(text))


def get_uniqueid(uniqueid):
    """Writes a fresh unique id (its 128 bytes) at address uniqueid."""
    data = _symmem.get_unique_id()
    ctypes.memmove(_out(uniqueid, "get_uniqueid", "uniqueid"), data, len(data))


def set_attr_uniqueid_args(myrank, nranks, uniqueid, attr):
    """Stores rank, nranks and the address of the unique id in the InitAttr at
    address attr (read by hostlib_init_attr, as NVSHMEM reads it)."""
    for arg, value in (("myrank", myrank), ("nranks", nranks)):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**31:
            raise invalid(f"set_attr_uniqueid_args: {arg}={value!r} is not an int >= 0")
    _out(uniqueid, "set_attr_uniqueid_args", "uniqueid")
    base = _out(attr, "set_attr_uniqueid_args", "attr")
    _set_field(base, "rank", ctypes.c_int32, myrank)
    _set_field(base, "nranks", ctypes.c_int32, nranks)
    _set_field(base, "uniqueid", ctypes.c_ssize_t, uniqueid)


def set_attr_mpi_comm_args(mpi_comm, nvshmem_attr):
    """Stores the address of an MPI_Comm in the InitAttr at nvshmem_attr."""
    base = _out(nvshmem_attr, "set_attr_mpi_comm_args", "nvshmem_attr")
    _set_field(base, "mpi_comm", ctypes.c_ssize_t,
               _out(mpi_comm, "set_attr_mpi_comm_args", "mpi_comm"))


def _set_field(attr, name, ctype, value):
    ctype.from_address(attr + init_attr_dtype.fields[name][1]).value = value


def _attr_field(attr, name, ctype):
    return ctype.from_address(attr + init_attr_dtype.fields[name][1]).value


def _mpi_comm(address):
    """The mpi4py communicator whose MPI_Comm handle lies at address."""
    from mpi4py import MPI
    ctype = ctypes.c_int if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_int) else \
        ctypes.c_void_p
    return MPI.Comm.fromhandle(ctype.from_address(address).value)


def hostlib_init_attr(flags, attr):
    """init() as the InitAttr at address attr says: INIT_WITH_UNIQUEID (after
    set_attr_uniqueid_args), INIT_WITH_MPI_COMM (after set_attr_mpi_comm_args,
    through mpi4py), or 0 (the launcher's environment, as init())."""
    attr = _out(attr, "hostlib_init_attr", "attr")
    if flags == Flags.INIT_WITH_UNIQUEID:
        address = _attr_field(attr, "uniqueid", ctypes.c_ssize_t)
        uid = _lifecycle.UniqueID(ctypes.string_at(_out(address, "hostlib_init_attr",
                                                        "attr's uniqueid"),
                                                   _lifecycle.UniqueID.SIZE))
        _lifecycle.init(uid=uid, rank=_attr_field(attr, "rank", ctypes.c_int32),
                        nranks=_attr_field(attr, "nranks", ctypes.c_int32),
                        initializer_method="uid")
    elif flags == Flags.INIT_WITH_MPI_COMM:
        address = _out(_attr_field(attr, "mpi_comm", ctypes.c_ssize_t), "hostlib_init_attr",
                       "attr's mpi_comm")
        _lifecycle.init(mpi_comm=_mpi_comm(address), initializer_method="mpi")
    elif flags == 0:
        _lifecycle.init()
    else:
        raise invalid(f"hostlib_init_attr: flags={flags!r} is not one symmem runs with (0, "
                      "INIT_WITH_UNIQUEID or INIT_WITH_MPI_COMM)")
    return None


def hostlib_finalize():
    _lifecycle.finalize()


def cumodule_init(module):
    _device_host.module_init(module)
    return 0


def cumodule_finalize(module):
    _device_host.module_finalize(module)
    return 0


def culibrary_init(library):
    _device_host.library_init(library)
    return 0


def culibrary_finalize(library):
    _device_host.library_finalize(library)
    return 0
