"""The docstrings of symmem.device.numba's calls that every PE, or every member
of a team, makes together: barrier_all, sync_all, barrier, sync, the
collectives, team_my_pe and team_n_pes (_device_docs.py merges them with the
others)."""

from ._device_doc_format import _FROM_PYTHON, _PAIR, _raises, build

_TEAM_MISUSE = (
    "this PE is not in team, or team is not a team; PEs made different "
    "collective calls (the C engine compares them)"
)

DOCS = {}

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
