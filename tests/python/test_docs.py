"""The API reference's source: every name in symmem.__all__ has a docstring
with a summary, an Example, its arguments (Args naming exactly the
signature's parameters) and a Raises section naming real exceptions (unless
it is one of the few calls that never raise); every name has a place in
docs/reference/; and the Examples run, as doctests, on 2 PEs of the cpu
backend. `make docs` builds the pages themselves (Sphinx, warnings as errors).
"""

import builtins
import enum
import inspect
import os
import re

import pytest

import symmem
from conftest import assert_all_ok, cpu_only, launch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFERENCE = os.path.join(ROOT, "docs", "reference")

# The calls that raise nothing, whatever the state (checked below). my_pe and
# n_pes raise in a child forked after init(), which is no PE.
NEVER_RAISE = {"get_name", "get_version", "init_status", "query_thread", "get_team_unique_id"}
SECTION = re.compile(r"^(\w[\w ]*):\s*$")


def doc_of(name):
    return inspect.getdoc(getattr(symmem, name)) or ""


def sections(doc):
    """{section title: its lines (dedented by one level)} of a Google-style docstring."""
    found, current = {}, None
    for line in doc.splitlines():
        match = SECTION.match(line)
        if match and not line.startswith(" "):
            current = found.setdefault(match.group(1), [])
        elif current is not None and (not line or line.startswith("    ")):
            current.append(line[4:])
        else:
            current = None
    return found


def entries(lines):
    """The names of the entries of an Args or Raises section ("name: text")."""
    return [m.group(1) for line in lines if (m := re.match(r"(\*{0,2}[\w.]+)(?: \(.*\))?:", line))]


def is_function(obj):
    return inspect.isfunction(obj) or inspect.isbuiltin(obj)


@pytest.mark.parametrize("name", symmem.__all__)
def test_every_public_name_has_a_summary_and_an_example(name):
    doc = doc_of(name)
    assert doc.strip(), f"symmem.{name} has no docstring"
    assert not doc.startswith(("Enum where", "int(", "Create and return")), (
        f"symmem.{name}'s docstring is inherited"
    )
    found = sections(doc)
    assert "Example" in found or "Examples" in found, f"symmem.{name} has no Example section"
    example = found.get("Example", found.get("Examples"))
    assert any(">>>" in line or line.endswith("::") for line in example), (
        f"symmem.{name}'s Example shows no code"
    )


@pytest.mark.parametrize(
    "name",
    [n for n in symmem.__all__ if callable(getattr(symmem, n)) and n != "NvshmemStreamsType"],
)
def test_args_name_exactly_the_parameters(name):
    obj = getattr(symmem, name)
    if isinstance(obj, type) and issubclass(obj, enum.Enum):
        return  # members, not parameters: an Attributes section
    params = inspect.signature(obj).parameters.values()
    every = {p.name for p in params}
    required = {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    documented = set(entries(sections(doc_of(name)).get("Args", [])))
    assert required <= documented, f"symmem.{name}: Args lacks {sorted(required - documented)}"
    assert documented <= every, (
        f"symmem.{name}: Args names {sorted(documented - every)}, "
        f"which are not parameters of {inspect.signature(obj)}"
    )


@pytest.mark.parametrize("name", [n for n in symmem.__all__ if is_function(getattr(symmem, n))])
def test_raises_sections_name_real_exceptions(name):
    raises = entries(sections(doc_of(name)).get("Raises", []))
    if name in NEVER_RAISE:
        assert not raises, f"symmem.{name} is in NEVER_RAISE but documents {raises}"
        return
    assert raises, f"symmem.{name} has no Raises section"
    for exc in raises:
        found = getattr(symmem, exc, getattr(builtins, exc, None))
        assert isinstance(found, type) and issubclass(found, BaseException), (
            f"symmem.{name}: Raises names {exc!r}, which is no exception"
        )


def test_the_calls_that_never_raise_do_not():
    for name in sorted(NEVER_RAISE):
        getattr(symmem, name)()  # in this process symmem may or may not be initialised


def test_every_public_name_is_in_the_reference():
    text = "".join(
        open(os.path.join(REFERENCE, page)).read()
        for page in sorted(os.listdir(REFERENCE))
        if page.endswith(".md")
    )
    documented = set(re.findall(r"^\.\. (?:auto\w+|py:\w+):: symmem\.(\w+)", text, re.M))
    missing = sorted(set(symmem.__all__) - documented)
    assert not missing, f"docs/reference/ has no entry for {missing}"


# Runs every Example of symmem.__all__ (and of the classes' methods) as a
# doctest on each PE. The enums' examples are written for a fresh process
# and run before init(); finalize()'s runs last. An example whose code uses
# torch is skipped where torch is not installed (CI's test extras lack it).
RUN_EXAMPLES = '''
import doctest, enum, inspect, sys
import numpy as np
import symmem

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False
# torch itself, or symmem's torch-backed calls (tensor(), bytetensor(), ...)
TORCH_WORDS = ("torch", "tensor(")


def docstrings(name):
    obj = getattr(symmem, name)
    yield name, inspect.getdoc(obj) or ""
    if isinstance(obj, type):
        for attr, value in vars(obj).items():
            if isinstance(value, (staticmethod, classmethod, property, type(lambda: 0))):
                text = inspect.getdoc(getattr(value, "__func__", value)) or ""
                if ">>>" in text:
                    yield f"{name}.{attr}", text


def enum_like(name):
    obj = getattr(symmem, name)
    return isinstance(obj, type) and issubclass(obj, enum.Enum)


runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
parser = doctest.DocTestParser()
first = [n for n in symmem.__all__ if enum_like(n)]
rest = [n for n in symmem.__all__ if not enum_like(n) and n not in ("init", "finalize")]
me = None
for phase in (first, ["init"], rest, ["finalize"]):
    for name in phase:
        for label, text in docstrings(name):
            test = parser.get_doctest(text, {"symmem": symmem, "np": np}, label, None, 0)
            if HAVE_TORCH or not any(word in example.source for word in TORCH_WORDS
                                     for example in test.examples):
                runner.run(test)
    if phase == ["init"]:
        symmem.init()  # every later example assumes it, as the reference says
        me = symmem.my_pe()
failed, attempted = runner.summarize(verbose=False)
if failed or attempted < 300:
    sys.exit(f"{failed} of {attempted} examples failed")
print(f"PE {me} OK", flush=True)
'''


@cpu_only("the examples show the cpu backend's results")
def test_examples_run_on_2_pes(tmp_path):
    program = tmp_path / "examples.py"
    program.write_text(RUN_EXAMPLES)
    result = launch(2, program, timeout=120, env={"SYMMEM_TIMEOUT": "60"})
    assert_all_ok(result, 2)


# The device APIs: every public function of symmem.device.numba (and of
# symmem.device.triton where triton is installed) has a summary, Args naming
# its parameters, a Raises section and an Example showing code.
def device_functions():
    import symmem.device.numba as dev_numba

    found = [
        (f"symmem.device.numba.{n}", getattr(dev_numba, n))
        for n in dev_numba.__all__
        if callable(getattr(dev_numba, n)) and not isinstance(getattr(dev_numba, n), type)
    ]
    try:
        import triton  # noqa: F401
    except ImportError:
        return found
    import symmem.device.triton as dev_triton

    return found + [
        (f"symmem.device.triton.{n}", getattr(dev_triton, n))
        for n in dev_triton.__all__
        if (n in vars(dev_triton._api) or n in vars(dev_triton._api_typed))
        and not isinstance(getattr(dev_triton, n), type)
        and hasattr(getattr(dev_triton, n), "fn")
    ]


@pytest.mark.parametrize(
    "name,obj", device_functions(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_device_functions_are_documented(name, obj):
    fn = getattr(obj, "fn", obj)  # a triton.jit function's Python function
    doc = inspect.getdoc(fn) or ""
    assert doc.strip() and not doc.startswith(("Args:", "Raises:")), f"{name} has no summary"
    found = sections(doc)
    params = [p.name for p in inspect.signature(fn).parameters.values()]
    if params:
        assert set(entries(found.get("Args", []))) == set(params), (
            f"{name}: Args {entries(found.get('Args', []))} != parameters {params}"
        )
    assert entries(found.get("Raises", [])), f"{name} has no Raises section"
    example = found.get("Example", [])
    assert any(line.endswith("::") for line in example), f"{name}'s Example shows no code block"
