"""What type checkers read: the enums' members are written out in
symmem/_enums.py (and checked against the C module's tables, so they cannot
drift), `import symmem` exports a literal __all__ that lists every public
name it defines, and interop.cupy keeps NVSHMEM4Py's signatures. mypy itself
runs over tests/package/typed_program.py in tests/package/check_package.sh."""

import ast
import inspect
import subprocess
import sys
from enum import IntEnum
from pathlib import Path

import pytest

import symmem
import symmem.interop.cupy as scp
from symmem import _enums, _memory, _symmem

PACKAGE = Path(symmem.__file__).parent


def _module_ast(name):
    return ast.parse((PACKAGE / name).read_text())


# ---------------------------------------------------------------- __all__


def test_all_is_a_literal_list_of_unique_names():
    assigned = [
        node
        for node in _module_ast("__init__.py").body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    ]
    assert len(assigned) == 1, "symmem/__init__.py must assign __all__ once"
    value = assigned[0].value
    assert isinstance(value, ast.List) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
    ), "__all__ must be a list of string literals (type checkers do not run code)"
    names = [e.value for e in value.elts]
    assert names == symmem.__all__
    duplicates = sorted({name for name in names if names.count(name) > 1})
    assert not duplicates, duplicates


def test_all_lists_every_public_name_and_nothing_else():
    """Every public name `import symmem` defines, less its submodules (core,
    bindings, utils, device: imported by name) but interop, which __all__
    has always exported."""
    defined = {
        name
        for name, value in vars(symmem).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    } | {"interop"}
    listed = set(symmem.__all__)
    assert not defined - listed, f"defined but not in __all__: {sorted(defined - listed)}"
    assert not listed - defined, f"in __all__ but not defined: {sorted(listed - defined)}"


def test_core_exports_the_same_names():
    import symmem.core

    assert symmem.core.__all__ == symmem.__all__
    assert all(getattr(symmem.core, name) is getattr(symmem, name) for name in symmem.__all__)


# ---------------------------------------------------------------- the enums

ENUMS = ["Teams", "SignalOp", "ComparisonType", "InitStatus", "ThreadSupport", "SmemAmount"]


@pytest.mark.parametrize("name", ENUMS)
def test_enum_members_are_written_out(name):
    """Each member is an assignment in the class body, which is what type
    checkers read (an enum built from a table at run time has no members for them)."""
    [body] = [
        node.body
        for node in _module_ast("_enums.py").body
        if isinstance(node, ast.ClassDef) and node.name == name
    ]
    written = [
        target.id
        for node in body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    ]
    enum = getattr(symmem, name)
    assert issubclass(enum, IntEnum)
    assert written == list(enum.__members__), name


@pytest.mark.parametrize(
    "name, table",
    [("Teams", "TEAMS"), ("SignalOp", "SIGNAL_OPS"), ("ComparisonType", "COMPARISONS")],
)
def test_enum_values_are_the_c_librarys(name, table):
    enum = getattr(symmem, name)
    assert {k: int(v) for k, v in enum.__members__.items()} == getattr(_symmem, table)


def test_values_from_the_c_header():
    assert [int(t) for t in symmem.Teams] == [-1, 0, 1, 2, 3, 4, 5]
    assert (symmem.SignalOp.SIGNAL_SET, symmem.SignalOp.SIGNAL_ADD) == (9, 10)
    assert [c.name for c in symmem.ComparisonType] == [
        "CMP_EQ",
        "CMP_NE",
        "CMP_GT",
        "CMP_LE",
        "CMP_LT",
        "CMP_GE",
    ]
    assert [int(c) for c in symmem.ComparisonType] == list(range(6))


def test_an_enum_that_drifts_from_the_c_table_is_refused():
    """_enums.py checks its members at import: a mismatch is an ImportError
    naming both sides."""
    _enums._check_against_c(symmem.SignalOp, _symmem.SIGNAL_OPS, "SIGNAL_OPS")  # as imported
    drifted = {**_symmem.SIGNAL_OPS, "SIGNAL_ADD": 11}
    with pytest.raises(
        ImportError,
        match=r"SignalOp declares .*'SIGNAL_ADD': 10.*_symmem\."
        r"SIGNAL_OPS is .*'SIGNAL_ADD': 11",
    ):
        _enums._check_against_c(symmem.SignalOp, drifted, "SIGNAL_OPS")
    added = {**_symmem.TEAMS, "TEAM_NEW": 6}
    with pytest.raises(ImportError, match="TEAM_NEW"):
        _enums._check_against_c(symmem.Teams, added, "TEAMS")


def test_teams_lookups_still_work():
    Teams = symmem.Teams
    assert Teams["TEAM_NODE"] is Teams.TEAM_NODE and Teams[Teams.TEAM_NODE] is Teams.TEAM_NODE
    assert "TEAM_WORLD" in Teams and 5 in Teams and "no_such_team" not in Teams
    assert Teams.keys()[:2] == ["TEAM_INVALID", "TEAM_WORLD"]
    with pytest.raises(AttributeError, match="no member or live team named 'TEAM_WROLD'"):
        getattr(Teams, "TEAM_WROLD")


# ---------------------------------------------------------------- interop.cupy

_EMPTY = inspect.Parameter.empty
# NVSHMEM4Py's nvshmem.core.interop.cupy.
CUPY_SIGNATURES = {
    "array": [
        ("shape", _EMPTY),
        ("dtype", "float32"),
        ("release", False),
        ("morder", "C"),
        ("except_on_del", True),
    ],
    "bytearray": [
        ("shape", _EMPTY),
        ("dtype", "float32"),
        ("release", False),
        ("device_id", None),
        ("morder", "C"),
        ("except_on_del", True),
    ],
    "get_peer_array": [("arr", _EMPTY), ("peer_pe", None)],
}


@pytest.mark.parametrize("name", sorted(CUPY_SIGNATURES))
def test_cupy_signatures_are_nvshmem4pys(name):
    params = inspect.signature(getattr(scp, name)).parameters.values()
    assert [(p.name, p.default) for p in params] == CUPY_SIGNATURES[name]


@pytest.mark.parametrize("name", scp.__all__)
def test_cupy_functions_are_documented(name):
    doc = inspect.getdoc(getattr(scp, name))
    assert doc and "Returns:" in doc and "Example:" in doc, name


def test_cupy_interop_imports_without_cupy():
    code = (
        "import sys, symmem.interop.cupy; sys.exit('cupy imported' if 'cupy' in sys.modules else 0)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_cupy_factories_pass_their_arguments_on(monkeypatch):
    """array and bytearray hand morder and except_on_del to the factories
    that numpy's interop uses (on the gpu backend those make CuPy arrays)."""
    calls = []
    monkeypatch.setattr(scp, "_require_gpu", lambda call: None)
    monkeypatch.setattr(_memory, "array", lambda *a, **k: calls.append(("array", a, k)))
    monkeypatch.setattr(_memory, "bytearray", lambda *a, **k: calls.append(("bytearray", a, k)))
    scp.array((2, 3), "int64", morder="F", except_on_del=False)
    scp.bytearray((2, 3), dtype=None, release=True, morder="F", except_on_del=False)
    scp.empty(4, morder="F")
    assert calls == [
        ("array", ((2, 3),), dict(dtype="int64", release=False, morder="F", except_on_del=False)),
        (
            "bytearray",
            ((2, 3),),
            dict(dtype="float32", release=True, morder="F", except_on_del=False),
        ),
        ("array", (4,), dict(dtype="float32", release=False, morder="F")),
    ]
    with pytest.raises(symmem.NvshmemInvalid, match="bytearray: morder='A' must be 'C' or 'F'"):
        scp.bytearray(4, morder="A")
    assert len(calls) == 3  # refused before allocating (allocations are collective)
