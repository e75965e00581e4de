"""The structs NVSHMEM's C API takes by pointer, as NVSHMEM4Py's bindings
make them: objects over NumPy memory with .ptr (its address) and their
fields as properties. The functions in this package read and write them
through those addresses, as NVSHMEM does.

uniqueid / UniqueId are symmem's UniqueID (its 128 bytes, like
nvshmemx_uniqueid_t's), team_uniqueid / TeamUniqueId symmem's TeamUniqueId."""

import numpy as np

from symmem._lifecycle import UniqueID
from symmem._teams import TeamUniqueId

uniqueid = UniqueId = UniqueID
team_uniqueid = TeamUniqueId

# nvshmemx_uniqueid_t's layout (128 bytes, as UniqueID.SIZE); symmem's bytes
# are its own, so only the size is shared.
uniqueid_dtype = np.dtype([("version", np.int32), ("internal", np.int8, (124,))], align=True)

# nvshmem_team_config_t (version 2): what team_split_* and team_init read.
team_config_dtype = np.dtype(
    [
        ("version", np.int32),
        ("num_contexts", np.int32),
        ("uniqueid", np.uint64),
        ("padding", np.int8, (48,)),
    ],
    align=True,
)

# nvshmemx_init_attr_t as symmem fills it: NVSHMEM's version and mpi_comm
# (the address of an MPI_Comm), then what set_attr_uniqueid_args stores.
init_attr_dtype = np.dtype(
    [
        ("version", np.int32),
        ("mpi_comm", np.intp),
        ("rank", np.int32),
        ("nranks", np.int32),
        ("uniqueid", np.intp),
    ],
    align=True,
)


class _Struct:
    """One zeroed struct of _dtype, its fields as int properties."""

    _dtype: np.dtype
    _shown: tuple = ()

    def __init__(self):
        self._data = np.zeros(1, dtype=self._dtype)

    @property
    def ptr(self):
        return self._data.__array_interface__["data"][0]

    @classmethod
    def _field(cls, name):
        def get(self):
            return int(self._data[name][0])

        def set(self, value):
            self._data[name] = value

        return property(get, set, doc=f"the struct's {name}")

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)}" for k in self._shown)
        return f"<{type(self).__name__} {fields} at {self.ptr:#x}>"


class TeamConfig(_Struct):
    """nvshmem_team_config_t: version, num_contexts, uniqueid (a uint64)."""

    _dtype = team_config_dtype
    _shown = ("version", "num_contexts", "uniqueid")


class InitAttr(_Struct):
    """nvshmemx_init_attr_t: version, mpi_comm (the address of an MPI_Comm)."""

    _dtype = init_attr_dtype
    _shown = ("version", "mpi_comm")


for _cls in (TeamConfig, InitAttr):
    for _name in _cls._dtype.fields or ():
        if _name != "padding":
            setattr(_cls, _name, _cls._field(_name))
del _cls, _name
