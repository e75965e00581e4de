"""symmem's device library (include/symmem/device*.cuh) as the DSLs that
link it declare it: each C function symmem_dev_<name> with its return and
parameter types, and the numbers its calls take. symmem.device.cute and
symmem.device.numba_cuda_mlir build their declarations from this table;
the library itself is the one engine (issue 36), so nothing here restates
a protocol, only how to call it.

Types: "u64" unsigned long long (addresses, sizes, signals), "i32" int,
"i64" long long, "u32" unsigned int. Every function takes the device state
block's address (symmem.device.state_address()) first.

Every number comes from the extension's tables (include/symmem/vocabulary.h
and device_layout.h as C compiles them), never written here: dtype codes
are the order of _symmem.DTYPES (bool 0 ... float64 12, as device.cuh's
reduce and wait_until read them), reduce ops the order of
_symmem.REDUCE_OPS, signal ops and comparisons _symmem.SIGNAL_OPS and
COMPARISONS, and the op that symmem_dev_atomic32 / 64 take for each atomic
_symmem.ATOMIC_TRAITS' device_op (a code of _symmem.DEVICE_ATOMICS, the
library's switch in device_rma.cuh). tests/python/test_vocabulary.py fails
where a table of those numbers is written into the package again."""

from symmem import _symmem

SCOPES = ("", "_warp", "_block")

_COPY = ("i32", "u64", "u64", "u64", "u64", "i32")  # st, dst, src, nbytes, pe
# st, dst, src, dst_stride, src_stride (elements), nelems, width (bytes), pe
_STRIDED = ("i32", "u64", "u64", "u64", "i64", "i64", "u64", "i32", "i32")
_PUT_SIGNAL = ("i32", "u64", "u64", "u64", "u64", "u64", "u64", "i32", "i32")
_TEAM = ("i32", "u64", "i32")  # st, team
_PUSH = ("i32", "u64", "i32", "u64", "u64", "u64", "i32")  # st, team, dst, src, nbytes, root
_REDUCE = ("i32", "u64", "i32", "u64", "u64", "u64", "i32", "i32")  # ..., n, dtype, op
_NO_ARGS = ("i32", "u64")

SIGNATURES = {  # name -> (return type, parameter types...)
    "my_pe": _NO_ARGS,
    "n_pes": _NO_ARGS,
    "quiet": _NO_ARGS,
    "fence": _NO_ARGS,
    "p": ("i32", "u64", "u64", "u64", "i32", "i32"),  # st, dst, bits, width, pe
    "g": ("u64", "u64", "u64", "i32", "i32"),  # st, src, width, pe
    "signal_op": ("i32", "u64", "u64", "u64", "i32", "i32"),  # st, sig, value, op, pe
    "signal_wait": ("u64", "u64", "u64", "i32", "u64"),  # st, sig, cmp, value
    "wait_until": ("i32", "u64", "u64", "i32", "i32", "i64"),  # st, ivar, dtype, cmp, value
    "atomic64": ("u64", "u64", "u64", "i32", "u64", "u64", "i32"),  # st, dest, op, v, cond, pe
    "atomic32": ("u32", "u64", "u64", "i32", "u32", "u32", "i32"),
    "ptr": ("u64", "u64", "u64", "u64", "i32"),  # st, addr, nbytes, pe
    "team_my_pe": _TEAM,
    "team_n_pes": _TEAM,
    "too_small": ("i32", "u64", "i32", "u64"),  # st, argument, bytes needed
    "empty": ("i32", "u64", "i32", "u64"),
    "team_translate_pe": ("i32", "u64", "i32", "i32", "i32"),  # st, src_team, src_pe, dest_team
    "peer_ptr": ("u64", "u64", "u64", "i32"),  # st, addr, pe (0 where not mapped)
    "test": ("i32", "u64", "u64", "i32", "i32", "i64"),  # st, ivar, dtype, cmp, value
    # st, ivars, nelems, status, dtype, cmp, value, values, indices, how (WAIT_SET)
    "wait_set": ("u64", "u64", "u64", "u64", "u64", "i32", "i32", "i64", "u64", "u64", "i32"),
    "atomic_add_f16": ("u32", "u64", "u64", "u32", "i32"),  # st, dest, bits, pe (< 0: local)
}
for _scope in SCOPES:
    SIGNATURES["put" + _scope] = SIGNATURES["get" + _scope] = _COPY
    SIGNATURES["iput" + _scope] = SIGNATURES["iget" + _scope] = _STRIDED
    SIGNATURES["put_signal" + _scope] = _PUT_SIGNAL
    for _name in ("barrier_all", "sync_all"):
        SIGNATURES[_name + _scope] = _NO_ARGS
    for _name in ("barrier", "sync"):
        SIGNATURES[_name + _scope] = _TEAM
    for _name in ("fcollect", "alltoall", "broadcast"):
        SIGNATURES[_name + _scope] = _PUSH
    for _name in ("reduce", "reducescatter"):
        SIGNATURES[_name + _scope] = _REDUCE

# the op symmem_dev_atomic32 / 64 take for each atomic; the value-less forms
# pass 1 (inc) or 0 (fetch)
ATOMIC_OPS = {name: traits["device_op"] for name, traits in _symmem.ATOMIC_TRAITS.items()}
# atom.add.f32 / .f64, for atomic_add and atomic_fetch_add of floats
FLOAT_ADD = _symmem.DEVICE_ATOMICS["fetch_add_float"]
ATOMICS_RETURNING = {name for name, traits in _symmem.ATOMIC_TRAITS.items() if traits["fetches"]}
ATOMICS_FLOAT = {name for name, traits in _symmem.ATOMIC_TRAITS.items() if traits["floats"]}
ATOMIC_INTS = ("int32", "int64", "uint32", "uint64")
ATOMIC_ARGS = dict(_symmem.ATOMIC_OPS)  # name -> its value arguments: (), ("value",), ...

DTYPE_CODES = {name: code for code, name in enumerate(_symmem.DTYPES)}
REDUCE_OPS = {op: code for code, op in enumerate(_symmem.REDUCE_OPS)}
BITWISE_OPS = ("and", "or", "xor")  # integers only
SIGNAL_OPS = dict(_symmem.SIGNAL_OPS)
COMPARISONS = dict(_symmem.COMPARISONS)
TEAMS = dict(_symmem.TEAMS)
# symmem_dev_wait_set's how (device_layout.h): all, any or some, + TEST for one look
WAIT_SET = {
    name: _symmem.DEVICE_LAYOUT["WAIT_" + name.upper()] for name in ("all", "any", "some", "test")
}
