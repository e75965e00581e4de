"""The docstrings of symmem.device.triton's functions, built from tables as
symmem.device.numba's are (its _docs.py): a summary, Args (from _ARGS),
Returns, Raises (what a bad call does at compile time and in a running
kernel) and an Example, Google style.

Each public function in _api.py is decorated with @documented under
@triton.jit: Triton's JITFunction copies the Python function's __doc__ when
it wraps it, and help(), test_docs.py and Sphinx (where triton is mocked and
autodoc reads the undecorated function) read that function's docstring, so
the text is set before triton.jit sees the function. Triton leaves a
function's docstring out of the code it compiles."""

import textwrap

_ARGS = {
    "dest": "a pointer (a tensor argument) or an int64 address of symmetric memory{dest_where}.",
    "source": "a pointer or an int64 address{source_where}.",
    "nbytes": "how many bytes to copy.",
    "nelems": "how many elements of dest's type.",
    "pe": "the PE, in [0, n_pes()).",
    "team": "a team handle (TEAM_WORLD, 0, or a team made on the host).",
    "value": "the value, of dest's element type.",
    "cond": "the value dest's element must equal for the swap.",
    "ptr": "pointer into symmetric memory (this PE's copy).",
    "sig_addr": "pointer or int64 address of a symmetric uint64 signal.",
    "signal": "the signal value.",
    "sig_op": "SIGNAL_SET or SIGNAL_ADD.",
    "ivar": "pointer to a symmetric integer on this PE.",
    "cmp": "CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT or CMP_GE.",
    "cmp_val": "the value compared with.",
    "nelems_per_pe": "how many elements go to each member.",
    "nreduce": "how many elements to combine.",
    "operation": 'tl.constexpr: "sum", "min", "max", "prod", or for integers "and", "or", "xor".',
    "pe_root": "the root's PE number in team.",
}

# What makes symmem's engine trap, by kind of call (the start of a sentence
# that goes on ", symmem's engine writes an error record and traps")
_NOT_INIT = "before symmem.init()"
_NOT_A_TEAM = "on a team that is not one"
_BAD_ADDRESS = "on a bad PE or an address off the symmetric heap"
_BAD_SIG_OP = _BAD_ADDRESS + ", or a sig_op that is neither SIGNAL_SET nor SIGNAL_ADD"
_WAITING = "on a dead peer, SYMMEM_TIMEOUT passed"
_IN_TEAM = _WAITING + ", a team this PE is not in"
_BAD_WAIT = _IN_TEAM + ", a bad cmp or an address off the heap"
_COLLECTIVE = _IN_TEAM + ", an address off the heap"
_MIXED_TYPES = " (dest and source of different element types)"

_MADE_BY_ALL = "Made by all threads of the program."
_ONE_PROGRAM = "Every member calls it, one program at a time."
_RELAXED = "Relaxed, at system scope."


def _raises(name, traps, types=""):
    """The Raises entries: types says which wrong types CompilationError
    names; traps, what makes symmem's engine trap (None: nothing)."""
    compiling = (
        f"CompilationError: at compile time (triton.compiler.errors.CompilationError), "
        f"naming {name}: arguments of the wrong type{types}."
    )
    if traps is None:
        return [
            compiling,
            "RuntimeError: never: it checks nothing and never traps (listed for "
            "symmetry with the other calls).",
        ]
    return [
        compiling,
        f"RuntimeError: from the host's next CUDA call (torch raises it) once the kernel "
        f"trapped: {traps}, symmem's engine writes an error record and traps; the PE prints "
        f"\"symmem: a kernel stopped in the device call {name}: ...\" and its CUDA context "
        f"is unusable. NVSHMEM's engine does not check.",
    ]


def _fill(text, indent):
    """text in lines of at most 76 characters, the first at indent, the rest
    indented 4 more (an entry of a section)."""
    return textwrap.wrap(
        text,
        76,
        initial_indent=indent,
        subsequent_indent=indent + "    ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def build(name, params, summary, traps, example, returns=None, body=None, types="", **where):
    """A Google-style docstring; where fills _ARGS' {dest_where} and
    {source_where} (what dest and source are, where it differs by call)."""
    where = {"dest_where": "", "source_where": "", **where}
    lines = textwrap.wrap(summary, 76)
    if body:
        lines += [""] + textwrap.wrap(body, 76)
    if params:
        lines += ["", "Args:"]
        for param in params:
            lines += _fill(f"{param}: " + _ARGS[param].format(**where), "    ")
    if returns:
        lines += ["", "Returns:"] + _fill(returns, "    ")
    lines += ["", "Raises:"]
    for entry in _raises(name, traps, types):
        lines += _fill(entry, "    ")
    lines += [
        "",
        "Example:",
        "    In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;",
        "    launch it after ``@sdt.requires_symmem``)::",
        "",
    ]
    lines += ["        " + line for line in example.strip().splitlines()]
    return "\n".join(lines) + "\n"


DOCS = {}


def documented(fn):
    """Gives fn, a Python function about to be wrapped by triton.jit, its
    docstring from DOCS."""
    fn.__doc__ = DOCS[fn.__name__]
    return fn


# ---- who am I ----

for _name, _summary, _returns, _params, _example, _traps in (
    ("my_pe", "This PE's number.", "An int32 in [0, n_pes()).", [], "me = sdt.my_pe()", _NOT_INIT),
    ("n_pes", "How many PEs the program has.", "An int32.", [], "npes = sdt.n_pes()", _NOT_INIT),
    (
        "team_my_pe",
        "This PE's number in team.",
        "An int32.",
        ["team"],
        "r = sdt.team_my_pe(sdt.TEAM_WORLD)",
        _NOT_A_TEAM,
    ),
    (
        "team_n_pes",
        "How many PEs team has.",
        "An int32.",
        ["team"],
        "k = sdt.team_n_pes(sdt.TEAM_WORLD)",
        _NOT_A_TEAM,
    ),
):
    DOCS[_name] = build(_name, _params, _summary, _traps, _example, returns=_returns)

# ---- put and get: in bytes (putmem_block, ...) and in elements (put, ...) ----

for _put in (True, False):
    for _in_bytes in (True, False):
        for _nbi in (False, True):
            _verb = "put" if _put else "get"
            _name = (
                f"{_verb}mem{'_nbi' if _nbi else ''}_block"
                if _in_bytes
                else f"{_verb}{'_nbi' if _nbi else ''}"
            )
            _count = "nbytes bytes" if _in_bytes else "nelems elements"
            DOCS[_name] = build(
                _name,
                ["dest", "source", _count.split()[0], "pe"],
                f"Copy {_count} from source (here) to dest on PE pe."
                if _put
                else f"Copy {_count} from source on PE pe to dest (here).",
                _BAD_ADDRESS,
                f"sdt.{_name}(dest, src, {'n * 4' if _in_bytes else 'n'}, pe)"
                + ("\nsdt.quiet()" if _nbi else ""),
                body=("Complete after quiet(). " if _nbi else "Complete when it returns. ")
                + _MADE_BY_ALL,
                types="" if _in_bytes else _MIXED_TYPES,
                dest_where=" (PE pe's copy is written)" if _put else " (here)",
                source_where=" (here)" if _put else " (PE pe's copy is read)",
            )

DOCS["p"] = build(
    "p",
    ["dest", "value", "pe"],
    "Store one element, value, into dest on PE pe.",
    _BAD_ADDRESS,
    "sdt.p(flag, 1, (sdt.my_pe() + 1) % sdt.n_pes())",
)
DOCS["g"] = build(
    "g",
    ["source", "pe"],
    "Load one element of source on PE pe.",
    _BAD_ADDRESS,
    "x = sdt.g(src, 0)",
    returns="The element, of source's type.",
    source_where=" of symmetric memory",
)
DOCS["remote_ptr"] = build(
    "remote_ptr",
    ["ptr", "pe"],
    "ptr's counterpart on PE pe, as a pointer for plain tl.load / tl.store.",
    _BAD_ADDRESS + ", or where PE pe's heap is not mapped here",
    "right = sdt.remote_ptr(x, (sdt.my_pe() + 1) % sdt.n_pes())\ntl.store(right + offs, vals)",
    returns="A pointer of ptr's type into PE pe's memory, mapped into this GPU.",
    body="This GPU loads and stores through it; where PE pe's heap is not mapped here the "
    "kernel fails (see Raises).",
)

# ---- signals and waits ----

for _name, _body in (
    ("putmem_signal_block", ""),
    ("putmem_signal_nbi_block", " source may be reused after quiet()."),
):
    DOCS[_name] = build(
        _name,
        ["dest", "source", "nbytes", "sig_addr", "signal", "sig_op", "pe"],
        "putmem_block, then PE pe's signal at sig_addr set or added to, once the data is there.",
        _BAD_SIG_OP,
        f"sdt.{_name}(dst, src, n * 4, sig, 1, sdt.SIGNAL_SET, pe)",
        body="A signal_wait_until that sees the signal sees the data." + _body,
        dest_where=" (PE pe's copy is written)",
        source_where=" (here)",
    )

DOCS["signal_op"] = build(
    "signal_op",
    ["sig_addr", "signal", "sig_op", "pe"],
    "Set or add to PE pe's signal at sig_addr, after this PE's earlier stores to it.",
    _BAD_SIG_OP,
    "sdt.signal_op(sig, 1, sdt.SIGNAL_ADD, pe)",
    body="A release on either engine: the program's earlier loads and stores are ordered "
    "before it (a signal_wait_until that sees it has them).",
)
DOCS["signal_wait_until"] = build(
    "signal_wait_until",
    ["sig_addr", "cmp", "cmp_val"],
    "Wait until this PE's signal at sig_addr compares true with cmp_val.",
    _BAD_WAIT,
    "v = sdt.signal_wait_until(sig, sdt.CMP_GE, 1)",
    returns="The signal's value (uint64).",
)
DOCS["wait_until"] = build(
    "wait_until",
    ["ivar", "cmp", "cmp_val"],
    "Wait until this PE's integer at ivar compares true with cmp_val.",
    _BAD_WAIT,
    "sdt.wait_until(flag, sdt.CMP_EQ, 1)",
)

DOCS["fence"] = build(
    "fence",
    [],
    "Order this PE's earlier puts before its later ones, to every PE.",
    None,
    "sdt.putmem_block(dst, src, n, pe)\nsdt.fence()\nsdt.p(flag, 1, pe)",
)
DOCS["quiet"] = build(
    "quiet",
    [],
    "Complete this PE's earlier puts, gets and signals.",
    None,
    "sdt.putmem_nbi_block(dst, src, n, pe)\nsdt.quiet()",
)

# ---- syncs and barriers ----

for _name, _summary, _params, _traps in (
    ("barrier_all", "Complete this PE's puts, then wait for every PE.", [], _WAITING),
    ("sync_all", "Wait for every PE, without completing puts first.", [], _WAITING),
    ("barrier", "Complete this PE's puts, then wait for every member of team.", ["team"], _IN_TEAM),
    ("sync", "Wait for every member of team, without completing puts first.", ["team"], _IN_TEAM),
):
    DOCS[_name] = build(
        _name, _params, _summary, _traps, f"sdt.{_name}({'sdt.TEAM_WORLD' if _params else ''})"
    )

# ---- collectives ----

_COLLECTIVES = {  # name: (params, summary, body, what else traps, example's last arguments)
    "alltoall": (
        ["team", "dest", "source", "nelems_per_pe"],
        "Team PE i's source[j * nelems_per_pe:][:nelems_per_pe] lands in team PE j's "
        "dest[i * nelems_per_pe:].",
        "",
        "",
        "n",
    ),
    "fcollect": (
        ["team", "dest", "source", "nelems"],
        "Team PE i's source[:nelems] lands in every member's dest[i * nelems:].",
        "",
        "",
        "n",
    ),
    "broadcast": (
        ["team", "dest", "source", "nelems", "pe_root"],
        "Team PE pe_root's source[:nelems] lands in every member's dest.",
        "",
        ", a root outside the team",
        "n, 0",
    ),
    "reduce": (
        ["team", "dest", "source", "nreduce", "operation"],
        "dest[:nreduce] = every member's source[:nreduce] combined by operation.",
        " The same bits on every PE; dest may be source.",
        ", a dest overlapping source without being it",
        'n, "sum"',
    ),
}
for _name, (_params, _summary, _body, _traps, _last) in _COLLECTIVES.items():
    DOCS[_name] = build(
        _name,
        _params,
        _summary,
        _COLLECTIVE + _traps,
        f"sdt.{_name}(sdt.TEAM_WORLD, dst, src, {_last})",
        body=_ONE_PROGRAM + _body,
        types=_MIXED_TYPES,
        source_where=" of symmetric memory",
    )

# ---- atomics (NVSHMEM4Py's names), on the element dest points at on PE pe ----

_ATOMICS = {  # name: (params, summary, returns)
    "atomic_fetch": (["dest", "pe"], "Atomically load dest's element on PE pe.", "The value."),
    "atomic_set": (
        ["dest", "value", "pe"],
        "Atomically store value into dest's element on PE pe.",
        None,
    ),
    "atomic_swap": (
        ["dest", "value", "pe"],
        "Atomically replace dest's element on PE pe with value.",
        "The old value.",
    ),
    "atomic_compare_swap": (
        ["dest", "cond", "value", "pe"],
        "Atomically replace dest's element on PE pe with value if it equals cond.",
        "The old value.",
    ),
    "atomic_inc": (["dest", "pe"], "Atomically add 1 to dest's element on PE pe.", None),
    "atomic_fetch_inc": (
        ["dest", "pe"],
        "Atomically add 1 to dest's element on PE pe.",
        "The old value.",
    ),
}
for _op, _sym in (("add", "+"), ("and", "&"), ("or", "|"), ("xor", "^")):
    for _fetch in ("", "fetch_"):
        _ATOMICS[f"atomic_{_fetch}{_op}"] = (
            ["dest", "value", "pe"],
            f"Atomically ``dest[0] {_sym}= value`` on PE pe.",
            "The old value." if _fetch else None,
        )

for _name, (_params, _summary, _returns) in _ATOMICS.items():
    _call = (
        f"sdt.{_name}("
        + ", ".join({"dest": "counter", "value": "1", "cond": "0", "pe": "0"}[p] for p in _params)
        + ")"
    )
    DOCS[_name] = build(
        _name,
        _params,
        _summary,
        _BAD_ADDRESS,
        f"old = {_call}" if _returns else _call,
        returns=_returns,
        body=_RELAXED,
    )
