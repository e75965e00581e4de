"""The runtime through NVSHMEM's C calls: init and finalize through an
InitAttr, unique ids, status and version queries, whole-team barriers and
CUDA module init. Out-parameters are addresses (a NumPy array's
arr.__array_interface__["data"][0], struct.ptr), written as NVSHMEM writes
them: through _symmem.memory_at, the raw pointer contract (the caller vouches
that the address is memory it may write)."""

import numpy as np

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


def _at(address, dtype, call, writable=False):
    """A one-element NumPy array over the dtype value at address (the memory
    itself: writing to it writes there); an unmapped address raises, naming call."""
    dtype = np.dtype(dtype)
    view = _symmem.memory_at(address, dtype.itemsize, writable=writable, call=call)
    return np.frombuffer(view, dtype=dtype)


def _field_at(address, struct_dtype, name, call, writable=False):
    """_at for field name of the struct_dtype struct at address."""
    dtype, offset = struct_dtype.fields[name][:2]
    return _at(address + offset, dtype, call, writable)


def _out_at(address, dtype, call, arg):
    """_at for writing the out-parameter arg at address: read-only memory
    (or unmapped, or NULL) raises, naming call and arg, instead of crashing."""
    return _at(_out(address, call, arg), dtype, f"{call}: {arg}", writable=True)


def _write_ints(call, pairs, dtype=np.int32):
    """Writes each (arg, address, value), once every address has been checked."""
    outs = [(_out_at(address, dtype, call, arg), value) for arg, address, value in pairs]
    for out, value in outs:
        out[0] = value


def _write_bytes(address, data, call, arg):
    _symmem.memory_at(_out(address, call, arg), len(data), writable=True, call=f"{call}: {arg}")[
        :
    ] = data


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
    _write_ints(
        "vendor_get_version_info",
        [("major", major, numbers[0]), ("minor", minor, numbers[1]), ("patch", patch, numbers[2])],
    )


def info_get_name(name):
    """Writes get_name() as a NUL-terminated string of at most 256 bytes."""
    text = _lifecycle.get_name().encode()[:255] + b"\0"
    _write_bytes(name, text, "info_get_name", "name")


def get_uniqueid(uniqueid):
    """Writes a fresh unique id (its 128 bytes) at address uniqueid."""
    _out(uniqueid, "get_uniqueid", "uniqueid")
    _write_bytes(uniqueid, _symmem.get_unique_id(), "get_uniqueid", "uniqueid")


def set_attr_uniqueid_args(myrank, nranks, uniqueid, attr):
    """Stores rank, nranks and the address of the unique id in the InitAttr at
    address attr (read by hostlib_init_attr, as NVSHMEM reads it)."""
    for arg, value in (("myrank", myrank), ("nranks", nranks)):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**31:
            raise invalid(f"set_attr_uniqueid_args: {arg}={value!r} is not an int >= 0")
    _out(uniqueid, "set_attr_uniqueid_args", "uniqueid")
    base = _out(attr, "set_attr_uniqueid_args", "attr")
    _set_field(base, "rank", myrank, "set_attr_uniqueid_args")
    _set_field(base, "nranks", nranks, "set_attr_uniqueid_args")
    _set_field(base, "uniqueid", uniqueid, "set_attr_uniqueid_args")


def set_attr_mpi_comm_args(mpi_comm, nvshmem_attr):
    """Stores the address of an MPI_Comm in the InitAttr at nvshmem_attr."""
    base = _out(nvshmem_attr, "set_attr_mpi_comm_args", "nvshmem_attr")
    _set_field(
        base,
        "mpi_comm",
        _out(mpi_comm, "set_attr_mpi_comm_args", "mpi_comm"),
        "set_attr_mpi_comm_args",
    )


def _set_field(attr, name, value, call):
    _field_at(attr, init_attr_dtype, name, call, writable=True)[0] = value


def _attr_field(attr, name):
    return int(_field_at(attr, init_attr_dtype, name, "hostlib_init_attr")[0])


def _mpi_comm(address):
    """The mpi4py communicator whose MPI_Comm handle lies at address (an int
    in MPICH, a pointer in Open MPI)."""
    from mpi4py import MPI

    handle = np.intc if MPI._sizeof(MPI.Comm) == np.dtype(np.intc).itemsize else np.uintp
    return MPI.Comm.fromhandle(int(_at(address, handle, "hostlib_init_attr")[0]))


def hostlib_init_attr(flags, attr):
    """init() as the InitAttr at address attr says: INIT_WITH_UNIQUEID (after
    set_attr_uniqueid_args), INIT_WITH_MPI_COMM (after set_attr_mpi_comm_args,
    through mpi4py), or 0 (the launcher's environment, as init())."""
    attr = _out(attr, "hostlib_init_attr", "attr")
    if flags == Flags.INIT_WITH_UNIQUEID:
        address = _out(_attr_field(attr, "uniqueid"), "hostlib_init_attr", "attr's uniqueid")
        uid = _lifecycle.UniqueID(
            _symmem.memory_at(address, _lifecycle.UniqueID.SIZE, call="hostlib_init_attr")
        )
        _lifecycle.init(
            uid=uid,
            rank=_attr_field(attr, "rank"),
            nranks=_attr_field(attr, "nranks"),
            initializer_method="uid",
        )
    elif flags == Flags.INIT_WITH_MPI_COMM:
        address = _out(_attr_field(attr, "mpi_comm"), "hostlib_init_attr", "attr's mpi_comm")
        _lifecycle.init(mpi_comm=_mpi_comm(address), initializer_method="mpi")
    elif flags == 0:
        _lifecycle.init()
    else:
        raise invalid(
            f"hostlib_init_attr: flags={flags!r} is not one symmem runs with (0, "
            "INIT_WITH_UNIQUEID or INIT_WITH_MPI_COMM)"
        )
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
