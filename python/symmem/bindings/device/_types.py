"""NVSHMEM's C type names, as symmem's dtypes, and the type lists of
NVSHMEM4Py 0.4.1's raw device families: which <T>_put, <T>_atomic_add,
<T>_sum_reduce, ... its bindings have (symmem.bindings.device has the same
names; tests/python/data/nvshmem4py_0.4.1_device.txt is the reference).

The C names are LP64's: long and long long are 64 bits, size_t and
ptrdiff_t too; char is signed on the GPU, as NVSHMEM4Py's bindings type it.
The lists are NVSHMEM4Py's as they are, gaps included (its <T>_atomic_add
has no longlong, int64 or ptrdiff, for instance): they are what a program
written against NVSHMEM4Py can call."""

from symmem import _symmem

# NVSHMEM's type name -> symmem's dtype (_symmem.DTYPES), in NVSHMEM's order
NV_TYPES = {
    "bfloat16": "bfloat16",
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "char": "int8",
    "short": "int16",
    "schar": "int8",
    "int": "int32",
    "long": "int64",
    "longlong": "int64",
    "uchar": "uint8",
    "ushort": "uint16",
    "uint": "uint32",
    "ulong": "uint64",
    "ulonglong": "uint64",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "size": "uint64",
    "ptrdiff": "int64",
}
assert set(NV_TYPES.values()) <= set(_symmem.DTYPES)


def _names(text):
    return tuple(text.split())


RMA = tuple(NV_TYPES)  # p, g, put, get, their _nbi and put_signal forms, iput, iget, collectives
WAIT = _names(
    "short int long longlong ushort uint ulong ulonglong int32 int64 uint32 uint64 size ptrdiff"
)
REDUCE_BITWISE = _names(
    "uchar ushort uint ulong ulonglong int8 int16 int32 int64 uint8 uint16 uint32 uint64 size"
)
REDUCE_ARITHMETIC = REDUCE_BITWISE + _names(
    "char schar short int long longlong bfloat16 half float double"
)
ATOMIC = {  # NVSHMEM4Py's types of each atomic (_symmem.ATOMIC_OPS's names)
    "atomic_fetch": _names(
        "int long longlong uint ulong ulonglong int32 int64 uint32 uint64 float double size ptrdiff"
    ),
    "atomic_add": _names(
        "int long uint ulong ulonglong int32 uint32 uint64 size half float double"
    ),
    "atomic_inc": _names("int long uint ulong ulonglong int32 uint32 uint64 size"),
    "atomic_and": _names("uint ulong ulonglong int32 int64 uint32 uint64"),
    "atomic_compare_swap": _names(
        "int long longlong uint ulong ulonglong int32 int64 uint32 uint64 size ptrdiff"
    ),
}
for _op in ("atomic_set", "atomic_swap"):
    ATOMIC[_op] = ATOMIC["atomic_fetch"]
ATOMIC["atomic_fetch_add"] = ATOMIC["atomic_add"]
ATOMIC["atomic_fetch_inc"] = ATOMIC["atomic_inc"]
for _op in ("atomic_fetch_and", "atomic_or", "atomic_fetch_or", "atomic_xor", "atomic_fetch_xor"):
    ATOMIC[_op] = ATOMIC["atomic_and"]
assert set(ATOMIC) == {name for name, _ in _symmem.ATOMIC_OPS}

SIZED = (8, 16, 32, 64, 128)  # put8 ... put128: elements of that many bits


def nv_name(dtype, among=RMA):
    """NVSHMEM's name of symmem's dtype among a family's types (its sized
    name where it has one: int32 for int32, float for float32)."""
    names = [nv for nv in among if NV_TYPES[nv] == dtype]
    return dtype if dtype in names else (names[0] if names else None)
