"""Docstrings for the device names of symmem.device.cute and
symmem.device.numba_cuda_mlir, built from symmem.device.numba's (_docs.py:
the same calls, the same summaries and argument texts) with what differs:
what an argument is in that DSL, and what a bad call does there (a kernel
traps, naming the call; a wrong type fails the compile). Google style, as
test_docs.py checks: a summary, Args naming every parameter, Raises, and an
Example that is a literal block (it needs a kernel)."""

from symmem.device import _device_docs as numba_docs

_DSL = {
    "cute": {
        "array": "tensor",
        "module": "symmem.device.cute",
        "kernel": "@cute.kernel",
        "typing": "TypeError",
        "made_by": "symmem.interop.cute.tensor, or a view of one",
        "compile": "while CuTe traces the kernel",
    },
    "mlir": {
        "array": "array",
        "module": "symmem.device.numba_cuda_mlir",
        "kernel": "numba-cuda-mlir @cuda.jit",
        "typing": "TypingError",
        "made_by": "symmem.array, or a contiguous slice of one",
        "compile": "when numba-cuda-mlir compiles the kernel",
    },
}
_OWN_ARGS = {
    "tensor": "symmetric tensor (symmem.interop.cute.tensor, or a view of one).",
    "amount": "a SmemAmount member or its int.",
    "ivar": "symmetric integer {array} (int8 to uint64) whose first element, on this PE, "
    "is watched.",
}


def _summary(base):
    doc = numba_docs.DOCS.get(base)
    if doc is None:
        return f"NVSHMEM4Py's {base}."
    return doc.split("\n\n", 1)[0].replace("\n", " ")


def _arg(dsl, param):
    d = _DSL[dsl]
    text = _OWN_ARGS.get(param) or numba_docs._ARGS.get(param, "see the call's summary.")
    text = text.format(dst_extra="", src_extra="", dtypes="", array=d["array"])
    text = text.replace("symmem.array, or a contiguous slice of one", d["made_by"])
    return text.replace("array", d["array"])


def build(dsl, name, params, returns=None, waits=False, scope=None):
    """The docstring of dsl's ("cute" or "mlir") name, whose thread-scope
    form (summary) is scope's base name."""
    d = _DSL[dsl]
    base = name
    for suffix in ("_warp", "_block"):
        if name.endswith(suffix):
            base = name[: -len(suffix)]
    lines = numba_docs._wrap(_summary(base).replace("array", d["array"]), "", hang=0)
    if base != name:
        who = "warp" if name.endswith("_warp") else "block"
        lines += [""] + numba_docs._wrap(
            f"{name} is {base} called by every thread of the {who}, with the same arguments.",
            "",
            hang=0,
        )
    if params:
        lines += ["", "Args:"]
        for p in params:
            lines += numba_docs._wrap(f"{p}: {_arg(dsl, p)}", "    ")
    if returns:
        lines += ["", "Returns:"] + numba_docs._wrap(returns, "    ")
    trap = (
        f"NvshmemInvalid: {d['compile']}, symmem is not initialised on the gpu backend. "
        f"In the kernel, a PE out of range, an address off the symmetric heap, a PE on "
        f"another node (symmem's engine)"
        + (", a dead peer or SYMMEM_TIMEOUT" if waits else "")
        + f" end the kernel: the PE prints \"symmem: a kernel stopped in the device call "
        f"{base}: ...\" and its CUDA context is unusable."
    )
    typing = (
        f"{d['typing']}: {d['compile']}, naming {name}: a wrong type or dtype "
        f"(dst and src of one dtype; signals uint64)."
    )
    lines += ["", "Raises:"] + numba_docs._wrap(trap, "    ") + numba_docs._wrap(typing, "    ")
    lines += [
        "",
        "Example:",
        f"    In a {d['kernel']} kernel, with ``import {d['module']} as dev``::",
        "",
        f"        dev.{name}({', '.join(params)})",
    ]
    return "\n".join(lines) + "\n"
