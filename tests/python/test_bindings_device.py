"""symmem.bindings.device (NVSHMEM4Py's raw device bindings) without GPUs:
name for name against NVSHMEM4Py 0.4.1's three modules
(data/nvshmem4py_0.4.1_device.txt, which data/nvshmem4py_device_names.py
made from its wheel), the table's recipes against the device library's
signatures, the refusals' messages, the numba module's stubs and
docstrings, and, where a DSL is installed, every call compiled for sm_90
(bindings_compile.py; CI installs none, so those skip saying why). On GPUs:
tests/gpu/bindings_*.py (test_gpu_dsl.py)."""

import ast
import importlib.util
import inspect
import os
import re
import subprocess
import sys

import pytest

import symmem
from symmem.bindings.device import _recipes, _table
from symmem.device import _library_calls as L

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REFERENCE = os.path.join(HERE, "data", "nvshmem4py_0.4.1_device.txt")
MODULES = ("numba", "numba_cuda_mlir", "cute")
# NVSHMEM4Py's CuTe module declares these without their pointer return
CUTE_DROPS_THE_RETURN = {"ptr", "mc_ptr"}


def reference():
    """{module: {name: [(returns, [parameter types], C symbol or None)]}}."""
    found = {}
    with open(REFERENCE) as f:
        for line in f:
            if line.startswith("#"):
                continue
            modules, name, rest = line.split(" ", 2)
            m = re.fullmatch(r"(\S+?)\((.*?)\)(?: (\S+))?", rest.strip())
            params = [p for p in m.group(2).split(", ") if p]
            for module in modules.split(","):
                found.setdefault(module, {}).setdefault(name, []).append(
                    (m.group(1), params, m.group(3))
                )
    return found


REF = reference()


def same_kind(ours, theirs):
    """A parameter or return of the table against NVSHMEM4Py's: equal, or
    ours a void pointer where theirs is a pointer (CuTe types void* as
    int8*), or ours ask_smem's enum where CuTe takes an int32."""
    return (
        ours == theirs
        or (ours == "*void" and theirs.startswith("*"))
        or (ours, theirs)
        == (
            "enum",
            "int32",
        )
    )


def test_the_reference_holds_nvshmem4pys_counts():
    assert {m: len(REF[m]) for m in MODULES} == {
        "numba": 2729,
        "numba_cuda_mlir": 2729,
        "cute": 2778,
    }


@pytest.mark.parametrize("module", MODULES)
def test_every_nvshmem4py_name_is_there_with_its_arguments(module):
    ours = _table.for_module(module)
    missing = sorted(set(REF[module]) - set(ours))
    assert not missing, f"{module} lacks {len(missing)}: {missing[:20]}"
    wrong = []
    for name, cases in REF[module].items():
        call, kinds = ours[name], [k for _, k in ours[name].params]
        returns_ok = {
            ret
            for ret, params, _ in cases
            if len(params) == len(kinds) and all(map(same_kind, kinds, params))
        }
        if not any(
            same_kind(call.returns, ret)
            or (module == "cute" and ret == "void" and name in CUTE_DROPS_THE_RETURN)
            for ret in returns_ok
        ):
            wrong.append(f"{name}{tuple(kinds)} -> {call.returns}: theirs {cases}")
    assert not wrong, f"{len(wrong)} differ: {wrong[:5]}"


def test_cute_calls_nvshmems_c_functions_by_their_names():
    ours = _table.for_module("cute")
    for name, cases in REF["cute"].items():
        assert {symbol for _, _, symbol in cases} == {ours[name].symbol}, name


def test_the_only_names_beyond_nvshmem4pys_are_the_generic_forms():
    for module in MODULES:
        extra = {n for n in _table.for_module(module) if n not in REF[module]}
        assert extra == {n for n in extra if _table.CALLS[n].generic}, module
    generic = [c for c in _table.CALLS.values() if c.generic]
    assert len(generic) == 125
    for call in generic:  # each is its family's, typed the way its typed forms are
        typed = [c for c in _table.CALLS.values() if c.family == call.family and not c.generic]
        assert {c.dtype for c in typed} == set(call.dtypes()), call.name
        assert [p for p, _ in typed[0].params] == [p for p, _ in call.params], call.name


def test_the_table_comes_from_the_vocabulary():
    """The reduce ops, atomics and scopes are _symmem's and the library's:
    every op of _symmem.REDUCE_OPS has its reduce, every atomic of
    _symmem.ATOMIC_OPS its typed forms, every scope its put."""
    names = set(_table.CALLS)
    for op in symmem._symmem.REDUCE_OPS:
        assert f"int32_{op}_reduce_block" in names
    for name, operands in symmem._symmem.ATOMIC_OPS:
        assert f"uint64_{name}" in names
        assert [p for p, _ in _table.CALLS[f"uint64_{name}"].params][1:-1] == list(operands)
    for scope in L.SCOPES:
        assert f"float_put_signal_nbi{scope}" in names


def _library_calls_in(source):
    """(function, argument count) of every dev_<name>(...) the recipe makes,
    and every name it reads."""
    tree = ast.parse(source)
    calls = [
        (node.func.id[4:], len(node.args))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id.startswith("dev_")
    ]
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return calls, read


VOCABULARY = {"ST", "A", "U64", "U32", "I64", "I32", "I8", "BITS", "FROM", "STORE", "PTR"}
VOCABULARY |= {"W", "CODE", "OP", "NAME", "NAME_LEN", "range", "None"}


def test_every_recipe_calls_the_library_as_its_signatures_say():
    """Each call's recipe (each dtype of a generic form) parses, reads only
    its parameters and the recipe names, calls only functions the device
    library has with as many arguments as they take, and has its numbers."""
    checked = 0
    for call in _table.CALLS.values():
        if call.recipe is None:
            continue
        for dtype in call.dtypes() if call.generic else [call.dtype]:
            calls, read = _library_calls_in(call.source(dtype))
            params = {p for p, _ in call.params}
            unknown = read - params - VOCABULARY - {"impl", "i"} - {f"dev_{n}" for n, _ in calls}
            assert not unknown, f"{call.name}: reads {unknown}"
            for function, count in calls:
                assert function in L.SIGNATURES, f"{call.name}: no symmem_dev_{function}"
                assert count == len(L.SIGNATURES[function]) - 1, f"{call.name}: {function}"
            numbers = call.numbers(dtype)
            for needed in {"W", "CODE", "OP"} & read:
                assert needed in numbers, f"{call.name}: no {needed} for {dtype}"
            checked += 1
    assert checked > 2900


def test_the_recipes_numbers_are_the_vocabularys():
    assert _table.CALLS["ushort_wait_until_any"].numbers()["CODE"] == L.DTYPE_CODES["uint16"]
    assert _table.CALLS["double_atomic_fetch_add"].numbers()["OP"] == L.FLOAT_ADD
    assert _table.CALLS["int_atomic_fetch_add"].numbers()["OP"] == L.ATOMIC_OPS["atomic_add"]
    assert _table.CALLS["putmem_nbi_warp"].numbers()["W"] == 1
    assert _table.CALLS["iput128"].numbers()["W"] == 16
    assert _table.CALLS["long_max_reducescatter"].numbers()["OP"] == L.REDUCE_OPS["max"]
    assert "I32(6)" in _table.CALLS["int_test_some"].body()  # SOME | TEST
    assert L.WAIT_SET == {"all": 0, "any": 1, "some": 2, "test": 4}


REFUSED = {
    "mc_ptr": (None, "NVLink multicast"),
    "barrier_warpgroup": ("symmem", "no warpgroup scope"),
    "double2_maxloc_reduce_block": ("symmem", "no maxloc"),
    "region_stop_block": ("symmem", "starts no RMA region"),
}


def test_what_symmem_cannot_serve_is_refused_naming_the_call_and_why():
    refused = {n: c for n, c in _table.CALLS.items() if c.why_not("symmem")}
    assert set(refused) == set(REFUSED)
    for name, (engine, words) in REFUSED.items():
        why = refused[name].why_not("symmem")
        assert why.startswith(f"{name}: ") and words in why, why
        # NVSHMEM's engine (CuTe's) serves what only symmem's cannot; multicast neither
        assert (refused[name].why_not("nvshmem") is None) == (engine == "symmem")


def test_multicast_is_refused_with_the_host_calls_reason(monkeypatch):
    monkeypatch.setattr(_recipes, "multicast_unavailable_reason", lambda call: f"{call}: why")
    assert _table.CALLS["mc_ptr"].why_not() == "mc_ptr: why"


def test_the_numba_module_imports_without_numba_cuda_with_every_name():
    import symmem.bindings.device.numba as nvb

    table = _table.for_module("numba")
    assert set(nvb.__all__) == set(table) | {"nvshmemx_smem_amount_t"}
    for name, call in table.items():
        stub = getattr(nvb, name)
        shown = inspect.signature(stub)
        assert [(p.name, p.annotation) for p in shown.parameters.values()] == list(call.params)
        assert shown.return_annotation == call.returns
    assert [int(m) for m in nvb.nvshmemx_smem_amount_t] == [0, 1, 2, 2**31 - 1]
    if importlib.util.find_spec("numba_cuda") is None:
        assert "numba-cuda is not installed" in nvb.GPU_UNAVAILABLE
    with pytest.raises(symmem.NvshmemInvalid, match=r"int_p\(dest.*device function.*numba"):
        nvb.int_p(0, 1, 0)


def test_the_modules_are_reachable_as_nvshmem4pys_are():
    code = (
        "import symmem as nvshmem\nimport symmem.bindings.device.numba\n"
        "from symmem.bindings.device.numba import my_pe, put_signal_nbi, signal_wait_until\n"
        "from symmem.bindings.device import numba as raw\n"
        "assert nvshmem.bindings.device.numba is raw and raw.my_pe is my_pe\n"
        "print(raw.int32_put_block.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "int32_put_block", out.stderr


@pytest.mark.parametrize(
    "module,extra,hide",
    [("numba_cuda_mlir", "mlir", "numba_cuda_mlir"), ("cute", "cute", "cutlass")],
)
def test_a_missing_dsl_names_the_extra(module, extra, hide):
    code = (
        f"import sys; sys.modules[{hide!r}] = None\n"
        f"try:\n    import symmem.bindings.device.{module}\nexcept ImportError as e:\n"
        "    print(e)\nelse:\n    print('imported')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert f"pip install 'symmem[{extra}]'" in out.stdout, out.stdout + out.stderr


def test_every_function_is_documented():
    """A summary, Args naming each parameter, Returns where it returns,
    Raises, and an Example code block (test_docs.py's rules), for each module."""
    sys.path.insert(0, HERE)
    from test_docs import entries, sections

    from symmem.bindings.device import _docs

    for module in MODULES:
        for name, call in _table.for_module(module).items():
            found = sections(_docs.build(module, call))
            assert entries(found.get("Args", [])) == [p for p, _ in call.params], name
            assert ("Returns" in found) == (call.returns != "void"), name
            assert entries(found.get("Raises", [])), name
            assert any(line.endswith("::") for line in found.get("Example", [])), name


# ---- compiled, where the DSL is installed ----

HAVE = {
    "numba": importlib.util.find_spec("numba_cuda") is not None,
    "numba_cuda_mlir": importlib.util.find_spec("numba_cuda_mlir") is not None,
    "cute": importlib.util.find_spec("cutlass") is not None,
}


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("module", MODULES)
def test_every_family_compiles_and_the_refused_names_say_why(module):
    if not HAVE[module]:
        pytest.skip(f"{module} is not installed here (CI installs no DSL)")
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", SYMMEM_CUTE_ENGINE="symmem")
    out = subprocess.run(
        [sys.executable, os.path.join(HERE, "bindings_compile.py"), module],
        capture_output=True,
        text=True,
        timeout=1400,
        env=env,
        cwd=ROOT,
    )
    assert out.returncode == 0 and "compiled" in out.stdout, out.stdout + out.stderr[-3000:]


@pytest.mark.timeout(1500)
@pytest.mark.parametrize(
    "program,args,module",
    [
        ("bindings_numba.py", ["numba", "compile"], "numba"),
        ("bindings_numba.py", ["mlir", "compile"], "numba_cuda_mlir"),
        ("bindings_cute.py", ["compile"], "cute"),
        ("bindings_ring_reduce.py", ["compile"], "numba"),
    ],
)
def test_the_gpu_programs_kernels_compile(program, args, module):
    """tests/gpu/bindings_*.py's kernels, compiled for sm_90 with no GPU."""
    if not HAVE[module]:
        pytest.skip(f"{module} is not installed here (CI installs no DSL)")
    gpu = os.path.join(ROOT, "tests", "gpu")
    command = [sys.executable, os.path.join(gpu, program), *args]
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", SYMMEM_CUTE_ENGINE="symmem")
    out = subprocess.run(command, capture_output=True, text=True, timeout=1400, env=env, cwd=gpu)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]


def test_the_bitcode_listing_names_what_it_defines(tmp_path, monkeypatch):
    """CuTe's NVSHMEM engine refuses a call its bitcode lacks by this list:
    here, of symmem's own device.bc, made once and then read from the cache."""
    bitcode = os.path.join(ROOT, "python", "symmem", "device", "device.bc")
    if not os.path.exists(bitcode) or importlib.util.find_spec("llvmlite") is None:
        pytest.skip("no device.bc (built where clang is) or no llvmlite")
    from symmem.device import _nvvm_bitcode

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    names = _nvvm_bitcode.defined_functions(bitcode)
    assert {f"symmem_dev_{n}" for n in L.SIGNATURES} <= names
    assert "symmem_dev_wait_set" in names and "symmem__test" not in names  # inlined helpers
    (listing,) = (tmp_path / "symmem" / "cute").glob("device-*.functions")
    listing.write_text("only_this\n")  # the second call reads the list, not the bitcode
    assert _nvvm_bitcode.defined_functions(bitcode) == {"only_this"}
