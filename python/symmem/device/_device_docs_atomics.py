"""The docstrings of symmem.device.numba's atomics (atomic_fetch, atomic_set,
atomic_swap, atomic_compare_swap, atomic_inc and the add, and, or, xor forms,
each with its fetch form; _device_docs.py merges them with the others)."""

from ._device_doc_format import _raises, build
from ._library_calls import ATOMICS_FLOAT

_ATOMIC_INTS = "int32, int64, uint32 or uint64"
_ATOMIC_FLOATS = "int32, int64, uint32, uint64, float32 or float64"

DOCS = {}

_ATOMICS = {  # name: (params, summary, returns)
    "atomic_fetch": (["dest", "pe"], "Atomically load dest[0] on PE pe.", "The value."),
    "atomic_set": (["dest", "value", "pe"], "Atomically store value into dest[0] on PE pe.", None),
    "atomic_swap": (
        ["dest", "value", "pe"],
        "Atomically replace dest[0] on PE pe with value.",
        "The old value.",
    ),
    "atomic_compare_swap": (
        ["dest", "cond", "value", "pe"],
        "Atomically replace dest[0] on PE pe with value if it equals cond.",
        "The old value (equal to cond if the swap happened).",
    ),
    "atomic_inc": (["dest", "pe"], "Atomically add 1 to dest[0] on PE pe.", None),
    "atomic_fetch_inc": (["dest", "pe"], "Atomically add 1 to dest[0] on PE pe.", "The old value."),
}
for _op, _sym in (("add", "+"), ("and", "&"), ("or", "|"), ("xor", "^")):
    _ATOMICS[f"atomic_{_op}"] = (
        ["dest", "value", "pe"],
        f"Atomically ``dest[0] {_sym}= value`` on PE pe.",
        None,
    )
    _ATOMICS[f"atomic_fetch_{_op}"] = (
        ["dest", "value", "pe"],
        f"Atomically ``dest[0] {_sym}= value`` on PE pe.",
        "The old value.",
    )

for _name, (_params, _summary, _returns) in _ATOMICS.items():
    _dtypes = _ATOMIC_FLOATS if _name in ATOMICS_FLOAT else _ATOMIC_INTS
    _call = (
        f"dev.{_name}("
        + ", ".join({"dest": "counter", "value": "1", "cond": "0", "pe": "0"}[p] for p in _params)
        + ")"
    )
    DOCS[_name] = build(
        _name,
        _params,
        _summary,
        _raises(
            _name,
            "pe is outside [0, n_pes()); dest is not on the symmetric heap, or is empty",
            f"dest must be an array of {_dtypes}, and pe an integer",
            writes="" if _name == "atomic_fetch" else "dest",
        ),
        (f"old = {_call}" if _returns else _call) + "   # counter: symmem.array on PE 0",
        returns=_returns,
        body="Sequentially consistent on the cpu backend.",
        dtypes=_dtypes,
    )
