"""The docstrings of symmem.device.numba's calls from one PE to another:
put and get (and their nbi forms), p and g, put_signal, signal_op, the waits,
quiet and fence, my_pe and n_pes, and get_peer_array (_device_docs.py merges
them with the others)."""

from ._device_doc_format import _FROM_PYTHON, _PAIR, _raises, build

_COPY_MISUSE = (
    "pe is outside [0, n_pes()); {sym} is not on the symmetric heap; dst or src is not contiguous"
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
