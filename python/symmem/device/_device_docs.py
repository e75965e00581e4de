"""The docstrings of symmem.device.numba's names (its _stubs.stub() gives each its own; the warp
and block forms take their thread-scope function's, see scoped()). Google
style, as the host calls': a summary, Args, Returns, Raises (what a bad
call does inside @numba.njit on the cpu backend and inside a
@numba.cuda.jit kernel on the gpu backend; docs/device.md, 'Errors inside
kernels') and an Example, a literal block since it needs a jitted
function. The same summaries and argument texts are the base of
symmem.device.cute's and numba_cuda_mlir's docstrings (_dsl_docs.py), so this
file imports nothing of numba."""

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
_COPY_MISUSE = (
    "pe is outside [0, n_pes()); {sym} is not on the symmetric heap; dst or src is not contiguous"
)
_ATOMIC_INTS = "int32, int64, uint32 or uint64"
_ATOMIC_FLOATS = "int32, int64, uint32, uint64, float32 or float64"
_FLOAT_OK = {"atomic_fetch", "atomic_set", "atomic_swap", "atomic_add", "atomic_fetch_add"}
_TEAM_MISUSE = (
    "this PE is not in team, or team is not a team; PEs made different "
    "collective calls (the C engine compares them)"
)

DOCS = {}


def _copy(name, put, nbi):
    where = "PE pe's copy of dst" if put else "dst (here)"
    source = "src (here)" if put else "PE pe's copy of src"
    summary = f"Copy {source} into {where}: min(dst.size, src.size) elements."
    body = (
        (
            "Complete when it returns (on the cpu backend; on a GPU the nbi form completes "
            "at quiet())."
            if nbi
            else "When it returns the data is copied; other PEs are sure to see a put after "
            "quiet(), a barrier, or a signal sent after it."
        )
        if put
        else (
            "Complete when it returns (on the cpu backend; on a GPU the nbi form completes "
            "at quiet())."
            if nbi
            else "When it returns dst holds the data."
        )
    )
    example = (
        f"me, n = dev.my_pe(), dev.n_pes()\n"
        f"dev.{name}(dst, src, (me + 1) % n)   # dst, src: symmem.array\n"
        + ("dev.quiet()\n" if nbi else "")
        + "dev.barrier_all()"
    )
    DOCS[name] = build(
        name,
        ["dst", "src", "pe"],
        summary,
        _raises(name, _COPY_MISUSE.format(sym="dst" if put else "src"), _PAIR, writes="dst"),
        example,
        body=body,
        dst_extra="" if put else " (here it is written: any contiguous array)",
        src_extra=" here: any contiguous array" if put else " on PE pe: symmetric",
    )
    if not put:
        DOCS[name] = DOCS[name].replace(
            "dst: symmetric array (symmem.array, or a contiguous slice of one)\n"
            "        written on PE pe (here it is written: any contiguous array).",
            "dst: any contiguous array, written here.",
        )


for _name, _put, _nbi in (
    ("put", True, False),
    ("put_nbi", True, True),
    ("get", False, False),
    ("get_nbi", False, True),
):
    _copy(_name, _put, _nbi)

DOCS["p"] = build(
    "p",
    ["dst", "value", "pe"],
    "Store one element, value, into dst[0] on PE pe.",
    _raises(
        "p",
        "pe is outside [0, n_pes()); dst is not on the symmetric heap, or is empty",
        "dst must be an array, and pe an integer",
        writes="dst",
    ),
    "dev.p(flag, dev.my_pe(), (dev.my_pe() + 1) % dev.n_pes())",
    body="Ordered (release) before any later store of this thread, such as a signal.",
)
DOCS["g"] = build(
    "g",
    ["src", "pe"],
    "Load one element: src[0] on PE pe.",
    _raises(
        "g",
        "pe is outside [0, n_pes()); src is not on the symmetric heap, or is empty",
        "src must be an array, and pe an integer",
    ),
    "left = dev.g(x, (dev.my_pe() - 1) % dev.n_pes())",
    returns="The element, of src's dtype.",
    src_extra=" on PE pe: symmetric",
)


def _put_signal(name, nbi):
    DOCS[name] = build(
        name,
        ["dst", "src", "sig_addr", "signal", "sig_op", "pe"],
        "Copy src into PE pe's copy of dst, then update PE pe's signal at sig_addr "
        "(set or add signal).",
        _raises(
            name,
            _COPY_MISUSE.format(sym="dst or sig_addr") + "; sig_addr is empty; "
            "sig_op is not SIGNAL_SET or SIGNAL_ADD",
            _PAIR + "; sig_addr must be a uint64 array",
            writes="dst and sig_addr",
        ),
        f"me, n = dev.my_pe(), dev.n_pes()\n"
        f"dev.{name}(dst, src, sig, 1, dev.SIGNAL_SET, (me + 1) % n)\n"
        f"dev.signal_wait(sig, dev.CMP_GE, 1)   # the left PE's data has landed",
        body="A PE that sees the new signal value (signal_wait) sees the data."
        + (" On a GPU the nbi form's src may be reused after quiet()." if nbi else ""),
        src_extra=" here: any contiguous array",
    )


_put_signal("put_signal", False)
_put_signal("put_signal_nbi", True)

DOCS["signal_op"] = build(
    "signal_op",
    ["sig_addr", "signal", "sig_op", "pe"],
    "Set or add to PE pe's signal at sig_addr, ordered after this PE's earlier stores to pe.",
    _raises(
        "signal_op",
        "pe is outside [0, n_pes()); sig_addr is not on the symmetric "
        "heap, or is empty; sig_op is not SIGNAL_SET or SIGNAL_ADD",
        "sig_addr must be a uint64 array, and pe an integer",
        writes="sig_addr",
    ),
    "dev.put(dst, src, pe)\ndev.signal_op(sig, 1, dev.SIGNAL_ADD, pe)",
)
DOCS["signal_wait"] = build(
    "signal_wait",
    ["sig_addr", "cmp", "cmp_value"],
    "Wait until this PE's signal at sig_addr compares true with cmp_value.",
    _raises(
        "signal_wait",
        "cmp is not a ComparisonType; sig_addr is not on the symmetric heap, or is empty",
        "sig_addr must be a uint64 array",
        waits=True,
    ),
    "value = dev.signal_wait(sig, dev.CMP_GE, 1)",
    returns="The signal's value that met the comparison (a uint64).",
    body="NVSHMEM4Py's device order (sig, cmp, value). Data a put_signal sent with the "
    "signal is visible when it returns.",
)
DOCS["wait_until"] = build(
    "wait_until",
    ["ivar", "cmp", "cmp_value"],
    "Wait until this PE's ivar[0] compares true with cmp_value.",
    _raises(
        "wait_until",
        "cmp is not a ComparisonType; ivar is not on the symmetric heap, or is empty",
        "ivar must be an integer array (int8 to uint64)",
        waits=True,
    ),
    "dev.wait_until(flag, dev.CMP_EQ, 1)   # another PE's p(flag, 1, me)",
    returns="None.",
)

for _name, _what in (
    ("quiet", "Complete this PE's earlier puts, gets and signals."),
    ("fence", "Order this PE's earlier puts before its later ones, to every PE."),
):
    DOCS[_name] = build(
        _name,
        [],
        _what,
        [
            f"NvshmemInvalid: when {_FROM_PYTHON}; inside jitted code it does not fail.",
            "TypingError: at compile time (numba.core.errors.TypingError), if given "
            "arguments: it takes none.",
        ],
        f"dev.put_nbi(dst, src, pe)\ndev.{_name}()\ndev.p(flag, 1, pe)",
        body="On the cpu backend every copy is complete when its call returns, so this is "
        "a memory fence.",
    )

for _name, _what in (
    ("my_pe", "This PE's number, in [0, n_pes())."),
    ("n_pes", "How many PEs the program has."),
):
    DOCS[_name] = build(
        _name,
        [],
        _what,
        [
            f"NvshmemInvalid: when {_FROM_PYTHON} (use symmem.{_name}() there); inside "
            f"jitted code it never fails."
        ],
        "me, n = dev.my_pe(), dev.n_pes()\ndev.put(dst, src, (me + 1) % n)",
        returns="An int32.",
    )

for _name, _what, _body in (
    (
        "barrier_all",
        "Complete this PE's puts (as quiet() does), then wait for every PE.",
        "Every PE calls it; when it returns, every PE's earlier puts are in place.",
    ),
    (
        "sync_all",
        "Wait for every PE, without completing puts first.",
        "Every PE calls it; orders nothing but arrival (use barrier_all for data).",
    ),
):
    DOCS[_name] = build(
        _name,
        [],
        _what,
        _raises(
            _name,
            "PEs made different collective calls here",
            "it takes no arguments",
            waits=True,
            arrays=False,
        ),
        "dev.put(dst, src, (dev.my_pe() + 1) % dev.n_pes())\ndev.barrier_all()",
        body=_body,
    )

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
    _dtypes = _ATOMIC_FLOATS if _name in _FLOAT_OK else _ATOMIC_INTS
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

for _name, _what, _body in (
    (
        "barrier",
        "Complete this PE's puts, then wait for every member of team.",
        "Every member calls it; when it returns, their earlier puts are in place.",
    ),
    (
        "sync",
        "Wait for every member of team, without completing puts first.",
        "Every member calls it.",
    ),
):
    DOCS[_name] = build(
        _name,
        ["team"],
        _what,
        _raises(
            _name, _TEAM_MISUSE, "team must be a Teams member or an int", waits=True, arrays=False
        ),
        f"dev.{_name}(Teams.TEAM_WORLD)",
        body=_body,
    )

_COLLECTIVES = {  # name: (params, summary, body, example)
    "reduce": (
        ["team", "dst", "src", "op"],
        "Combine every member's src by op into every member's dst.",
        "min(dst.size, src.size) elements; dst may be src.",
        'dev.reduce(Teams.TEAM_WORLD, dst, src, "sum")',
    ),
    "reducescatter": (
        ["team", "dst", "src", "op"],
        "Combine every member's src by op; member i gets block i in dst.",
        "dst.size elements per member; src holds team_n_pes(team) blocks.",
        'dev.reducescatter(Teams.TEAM_WORLD, dst, src, "max")',
    ),
    "fcollect": (
        ["team", "dst", "src"],
        "Concatenate every member's src, in team order, into every member's dst.",
        "src.size elements from each member.",
        "dev.fcollect(Teams.TEAM_WORLD, dst, src)",
    ),
    "alltoall": (
        ["team", "dst", "src"],
        "Member i's block j of src lands in member j's block i of dst.",
        "dst.size // team_n_pes(team) elements per member.",
        "dev.alltoall(Teams.TEAM_WORLD, dst, src)",
    ),
    "broadcast": (
        ["team", "dst", "src", "root"],
        "Copy member root's src into every member's dst.",
        "min(dst.size, src.size) elements.",
        "dev.broadcast(Teams.TEAM_WORLD, dst, src, 0)",
    ),
}
for _name, (_params, _summary, _body, _example) in _COLLECTIVES.items():
    _typing = (
        "team must be a Teams member or an int; "
        + _PAIR
        + (
            "; op must be a literal string naming a reduction the dtype takes"
            if "op" in _params
            else ""
        )
    )
    DOCS[_name] = build(
        _name,
        _params,
        _summary,
        _raises(
            _name,
            _TEAM_MISUSE + "; dst or src is not symmetric, not contiguous or "
            "too small" + ("; root is outside the team" if _name == "broadcast" else ""),
            _typing,
            waits=True,
            writes="dst",
        ),
        _example,
        body="Every member calls it with the same arguments. " + _body,
        src_extra=": symmetric",
        dst_extra=" (this PE's copy)",
    )
    DOCS[_name] = DOCS[_name].replace(
        "written on PE pe (this PE's copy).", "written here (this PE's copy)."
    )

for _name, _what in (
    ("team_my_pe", "This PE's number in team."),
    ("team_n_pes", "How many PEs team has."),
):
    DOCS[_name] = build(
        _name,
        ["team"],
        _what,
        [
            f"NvshmemInvalid: when {_FROM_PYTHON}; inside jitted code it does not raise "
            f"(a team that is not one, or no symmem.init(), gives -1).",
            "TypingError: at compile time (numba.core.errors.TypingError): team must be a "
            "Teams member or an int.",
        ],
        f"k = dev.{_name}(Teams.TEAM_WORLD)",
        returns="An int32 (-1 for a team that is not one).",
    )

DOCS["get_peer_array"] = build(
    "get_peer_array",
    ["array", "pe"],
    "The array over PE pe's copy of a symmetric array, for plain loads and stores.",
    _raises(
        "get_peer_array",
        "pe is outside [0, n_pes()); array is not on the symmetric heap or not contiguous",
        "array must be an array, and pe an integer",
    ),
    "right = dev.get_peer_array(x, (dev.my_pe() + 1) % dev.n_pes())\n"
    "right[0] = 42   # a store into PE me + 1's copy of x",
    returns="An array of array's shape and dtype, over PE pe's memory mapped here.",
    body="Its loads and stores are plain ones: order them with quiet(), fence() or a barrier.",
)


_STAGING = (
    "symmem's device calls copy through the peer mappings and stage nothing in "
    "shared memory, so this is accepted and does nothing; NVSHMEM4Py's programs "
    "that use it run unchanged."
)
DOCS["ask_smem"] = build(
    "ask_smem",
    ["flag"],
    "The dynamic shared memory (bytes) to launch with for NVSHMEM's TMA staging.",
    [
        f"NvshmemInvalid: when {_FROM_PYTHON} (there, use symmem.ask_smem).",
        "TypingError: at compile time (numba.core.errors.TypingError), naming ask_smem: "
        "flag must be a SmemAmount or an integer.",
    ],
    "need = dev.ask_smem(dev.SmemAmount.SMEM_RECOMMENDED)",
    returns="16 for every flag, as symmem.ask_smem: symmem stages nothing, but programs "
    "written for NVSHMEM carve their own data after it or require it positive.",
)
DOCS["give_smem"] = build(
    "give_smem",
    ["smem"],
    "Register the kernel's dynamic shared memory for NVSHMEM's TMA copies.",
    [
        f"NvshmemInvalid: when {_FROM_PYTHON}.",
        "TypingError: at compile time (numba.core.errors.TypingError), naming give_smem: "
        "smem must be a C-contiguous array.",
    ],
    "smem = cuda.shared.array(0, dtype=numba.uint8)   # launched with ask_smem() bytes\n"
    "dev.give_smem(smem)\n...\ndev.release_smem()",
    body=_STAGING,
)
DOCS["release_smem"] = build(
    "release_smem",
    [],
    "End the registration give_smem made, before the kernel returns.",
    [
        f"NvshmemInvalid: when {_FROM_PYTHON}.",
        "TypingError: at compile time (numba.core.errors.TypingError): it takes no arguments.",
    ],
    "dev.give_smem(smem)\n...\ndev.release_smem()",
    body=_STAGING,
)
DOCS["get_multicast_array"] = build(
    "get_multicast_array",
    ["team", "array"],
    "The array over NVLink multicast memory of array: a store reaches every member's copy.",
    [
        f"NvshmemInvalid: when {_FROM_PYTHON}.",
        "TypingError: at compile time (numba.core.errors.TypingError), always, naming "
        "get_multicast_array and why: symmem never enables NVLink multicast (it can take a "
        "shared host's GPUs down), so on the cpu backend it needs the gpu backend, and on the "
        "gpu backend multicast is disabled (NVSHMEM_DISABLE_NVLS) or not mapped.",
    ],
    "mc = dev.get_multicast_array(Teams.TEAM_NODE, x)   # fails the compile, saying why",
    returns="Never returns here: see Raises.",
    body="symmem.get_multicast_array, the host call, raises for the same reasons.",
)


def scoped(name, base):
    """The docstring of name (base's _warp or _block form)."""
    scope = "warp" if name.endswith("_warp") else "block"
    doc = DOCS[base]
    summary, rest = doc.split("\n\n", 1)
    note = (
        f"{name}: {base}, called by every thread of the {scope} with the same "
        f"arguments (in @numba.cuda.jit kernels; in @numba.njit code, where a PE is one "
        f"thread, it is {base})."
    )
    return (
        "\n".join(_wrap(note, "", hang=0))
        + "\n\n"
        + summary
        + "\n\n"
        + rest.replace(f"dev.{base}(", f"dev.{name}(")
    )
