"""How a docstring of symmem.device.numba's calls is written (the parts
_device_docs.py's tables fill in): the argument texts every call shares, the
Raises entries of a call that can fail, and build(), which puts a Google-style
docstring together. symmem.device.cute's and numba_cuda_mlir's docstrings
(_dsl_docs.py) start from the same texts, so this imports nothing of numba."""

_ARGS = {
    "dst": "symmetric array (symmem.array, or a contiguous slice of one) "
    "written on PE pe{dst_extra}.",
    "src": "array read{src_extra}; same dtype as dst.",
    "pe": "the PE whose copy is used, in [0, n_pes()).",
    "value": "the value, converted to the element type.",
    "sig_addr": "symmetric uint64 array whose first element is the signal.",
    "signal": "the signal value (an unsigned 64-bit int).",
    "sig_op": "SIGNAL_SET or SIGNAL_ADD (a SignalOp member or its int).",
    "cmp": "a ComparisonType member or its int (CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT, CMP_GE).",
    "cmp_value": "the value the local element is compared with.",
    "ivar": "symmetric integer array (int8 to uint64) whose first element, on this PE, is watched.",
    "dest": "symmetric array whose first element, on PE pe, is the target ({dtypes}).",
    "cond": "the value the element is compared with; it is replaced only if equal.",
    "team": "a Teams member (Teams.TEAM_WORLD, ...) or a team handle (an int).",
    "op": 'the reduction, a literal string: "sum", "min", "max", "prod", or, '
    'for integers, "and", "or", "xor".',
    "root": "the root's PE number in team (default 0).",
    "array": "symmetric array (contiguous).",
    "flag": "a SmemAmount member (SMEM_RECOMMENDED, SMEM_MINIMUM, SMEM_BARRIERS_ONLY) or its int.",
    "smem": "the kernel's dynamic shared-memory array, whole and C-contiguous.",
}

_NOT_HERE = (
    "NotImplementedError: in @numba.njit code while the running backend keeps the "
    "heap on the GPU (use @numba.cuda.jit kernels there)."
)
_FROM_PYTHON = "called from plain Python, outside a jitted function"


def _trap(name):
    return (
        f"In a @numba.cuda.jit kernel the same causes trap instead: the kernel ends "
        f"and the PE prints \"symmem: a kernel stopped in the device call {name}: "
        f"...\" naming the cause; its CUDA context is unusable."
    )


def _raises(name, misuse, typing, waits=False, arrays=True, writes=""):
    """arrays: it takes arrays (a freed one is refused); writes: the ones it
    writes (a read-only one is refused at compile time)."""
    if arrays:
        misuse += (
            "; an array argument was freed (free_array or finalize; its address may "
            "be a newer allocation's; not checked in CUDA kernels)"
        )
    if writes:
        typing += f"; in @numba.njit code, {writes} must be writable (not a read-only array)"
    lines = [
        f"NvshmemInvalid: on the cpu backend (@numba.njit), raised once the jitted "
        f"function returns, with the host call's \"[pe N] {name}: ...\" message: "
        f"{misuse}; symmem is not initialised; or it is {_FROM_PYTHON}. {_trap(name)}"
    ]
    if waits:
        lines.append(
            "NvshmemError: on the cpu backend, a PE it waits for died or "
            "SYMMEM_TIMEOUT seconds passed (in a kernel: the trap above)."
        )
        lines.append("KeyboardInterrupt: Ctrl-C while it waits (cpu backend).")
    lines.append(_NOT_HERE)
    lines.append(
        f"TypingError: at compile time (numba.core.errors.TypingError), naming {name}: {typing}."
    )
    return lines


def _wrap(text, indent, width=76, hang=4):
    """text as lines of at most width characters; the first at indent, the
    rest indented hang more."""
    out, line = [], indent
    for word in text.split():
        if len(line) + len(word) + 1 > width and line.strip():
            out.append(line.rstrip())
            line = indent + " " * hang
        line += word + " "
    out.append(line.rstrip())
    return out


def build(name, params, summary, raises, example, returns=None, body=None, **fmt):
    """A Google-style docstring."""
    lines = _wrap(summary, "", hang=0)
    if body:
        lines += [""] + _wrap(body, "", hang=0)
    if params:
        lines += ["", "Args:"]
        for param in params:
            text = _ARGS[param].format(**{"dst_extra": "", "src_extra": "", "dtypes": "", **fmt})
            lines += _wrap(f"{param}: {text}", "    ")
    if returns:
        lines += ["", "Returns:"] + _wrap(returns, "    ")
    lines += ["", "Raises:"]
    for entry in raises:
        lines += _wrap(entry, "    ")
    lines += [
        "",
        "Example:",
        "    In a function compiled with @numba.njit (cpu backend) or @numba.cuda.jit",
        "    (gpu backend), with ``import symmem.device.numba as dev``::",
        "",
    ]
    lines += ["        " + line for line in example.strip().splitlines()]
    return "\n".join(lines) + "\n"


_PAIR = "dst and src must be arrays of one dtype, and pe an integer"
