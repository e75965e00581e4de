"""The shape of the source tree: short files, no include circles, no
symbolic links, and every environment variable read through the one table."""

import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "src")


def c_files(top=SRC, suffixes=(".c", ".h")):
    for folder, _, names in os.walk(top):
        for name in names:
            if name.endswith(suffixes):
                yield os.path.join(folder, name)


def test_no_source_file_is_past_500_lines():
    # C, and the CUDA of the gpu backend's kernels and the device library
    code = (".c", ".h", ".cu", ".cuh")
    paths = [*c_files(SRC, code), *c_files(os.path.join(ROOT, "include"), code)]
    long = {os.path.relpath(p, ROOT): n for p in paths if (n := sum(1 for _ in open(p))) > 500}
    assert not long, f"split these by concept: {long}"


# Issue 36: no source file of the product, in any of its languages, past 500 lines.
LINE_LIMIT = 500
SOURCE_SUFFIXES = (".py", ".c", ".h", ".cu", ".cuh")
SOURCE_FOLDERS = ("src", "include", "python")
# Files no one edits, each with why (the parts they are made of are checked).
GENERATED = {
    "python/symmem/device/device.cuh": "the package's copy of include/symmem/device.cuh with "
    "its parts inlined, written by setup.py (tools/embed.py)",
}


def lines_of(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def long_source_files(root):
    """{path relative to root: its lines} of every source file in root's
    src/, include/ and python/ past LINE_LIMIT lines."""
    found = {}
    for top in SOURCE_FOLDERS:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                path = os.path.join(folder, name)
                if name.endswith(SOURCE_SUFFIXES) and (n := lines_of(path)) > LINE_LIMIT:
                    found[os.path.relpath(path, root)] = n
    return found


def test_no_source_file_is_past_the_line_limit():
    long = {rel: n for rel, n in long_source_files(ROOT).items() if rel not in GENERATED}
    assert not long, f"past {LINE_LIMIT} lines, split by concept: " + ", ".join(
        f"{rel} ({n} lines)" for rel, n in sorted(long.items())
    )


def test_the_line_limit_covers_every_source_language(tmp_path):
    # a long file of each suffix in each folder is found; a short one, a long
    # file of another kind (.md) and one outside the three folders are not
    expected = set()
    for top in SOURCE_FOLDERS + ("docs",):
        (tmp_path / top / "sub").mkdir(parents=True)
        for suffix in SOURCE_SUFFIXES + (".md",):
            (tmp_path / top / "sub" / f"long{suffix}").write_text("x\n" * (LINE_LIMIT + 1))
            if top != "docs" and suffix != ".md":
                expected.add(f"{top}/sub/long{suffix}")
        (tmp_path / top / "short.py").write_text("x\n" * LINE_LIMIT)
    found = long_source_files(str(tmp_path))
    assert set(found) == expected and set(found.values()) == {LINE_LIMIT + 1}


def test_no_symbolic_link_in_the_tree():
    # A file needed in two places (include/symmem/device.cuh in the package)
    # is copied by the build (tools/embed.py), never linked.
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        listing = ""
    links = [line.split("\t", 1)[1] for line in listing.splitlines() if line.startswith("120000 ")]
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
        links += [
            os.path.relpath(os.path.join(folder, n), ROOT)
            for n in names + dirs
            if os.path.islink(os.path.join(folder, n))
        ]
    assert not links, f"copy these at build time instead: {sorted(set(links))}"


def includes(path):
    """The project files path includes, as absolute paths."""
    here = os.path.dirname(path)
    found = []
    for name in re.findall(r'^#include "([^"]+)"', open(path).read(), re.M):
        for base in (here, os.path.join(ROOT, "include")):
            candidate = os.path.normpath(os.path.join(base, name))
            if os.path.exists(candidate):
                found.append(candidate)
                break
    return found


def test_no_include_circle():
    graph = {p: includes(p) for p in c_files()}
    state = {}

    def visit(node, trail):
        if state.get(node) == "done":
            return
        assert state.get(node) != "open", "include circle: " + " -> ".join(
            os.path.relpath(p, ROOT) for p in trail + [node]
        )
        state[node] = "open"
        for child in graph.get(node, ()):
            visit(child, trail + [node])
        state[node] = "done"

    for node in graph:
        visit(node, [])


def layer_of(path):
    """src/core, src/extension, src/backends/cpu, ... for a file of src/."""
    parts = os.path.relpath(path, SRC).split(os.sep)
    return "/".join(parts[:2] if parts[0] == "backends" else parts[:1])


def test_layers_include_only_what_they_may():
    # The extension takes the public API and one declared internal header;
    # the core includes no backend's private headers and no other layer's;
    # a backend includes the core's headers, never another backend's.
    wrong = []
    for path in c_files():
        layer = layer_of(path)
        for target in includes(path):
            if not target.startswith(SRC + os.sep):
                continue  # include/symmem: public
            to = layer_of(target)
            rel = os.path.relpath(target, SRC)
            allowed = (
                to == layer
                or (layer == "extension" and rel == "core/internal.h")
                or (layer.startswith("backends/") and to == "core")
            )
            if not allowed:
                wrong.append(f"{os.path.relpath(path, ROOT)} includes {rel}")
    assert not wrong, wrong


def test_only_the_environment_table_calls_getenv():
    # Every variable symmem reads is listed (python -m symmem info shows it).
    readers = sorted(
        os.path.relpath(p, ROOT) for p in c_files() if re.search(r"\bgetenv\s*\(", open(p).read())
    )
    assert readers == ["src/core/env.c"], readers


PACKAGE = os.path.join(ROOT, "python", "symmem")
# Foreign function interfaces the package must not use: it reaches C only
# through its own extension module (_symmem).
FFI_MODULES = {"ctypes", "cffi"}


def ffi_uses(path):
    """["line N: what"] for each use of ctypes or cffi in the Python file path:
    an import (also through __import__ or importlib.import_module), or an
    attribute named ctypes or ctypeslib (NumPy's arr.ctypes.data, np.ctypeslib)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(open(path).read(), path)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and getattr(node.func, "id", getattr(node.func, "attr", None))
            in ("__import__", "import_module")
        ):
            names = [node.args[0].value]
        elif isinstance(node, ast.Attribute) and node.attr in ("ctypes", "ctypeslib"):
            found.append(f"line {node.lineno}: .{node.attr}")
        found += [
            f"line {node.lineno}: imports {name}"
            for name in names
            if name.split(".")[0] in FFI_MODULES
        ]
    return found


def test_the_package_uses_no_ctypes_or_cffi():
    uses = {}
    for folder, _, names in os.walk(PACKAGE):
        for name in names:
            if name.endswith((".py", ".pyi")):
                path = os.path.join(folder, name)
                if found := ffi_uses(path):
                    uses[os.path.relpath(path, ROOT)] = found
    assert not uses, f"call C through the extension (src/extension/), not an FFI: {uses}"


def test_the_ffi_check_finds_each_form(tmp_path):
    forms = [
        "import ctypes",
        "import os, ctypes.util",
        "from ctypes import c_int",
        "from cffi import FFI",
        "__import__('ctypes')",
        "importlib.import_module('cffi')",
        "x = arr.ctypes.data",
        "np.ctypeslib.as_array(x)",
    ]
    for form in forms:
        path = tmp_path / "m.py"
        path.write_text(f'"""ctypes in a docstring is fine."""\n{form}\n')
        assert ffi_uses(str(path)), form
    path.write_text('"""No ctypes: ctypes.addressof is only named here."""\nimport struct\n')
    assert ffi_uses(str(path)) == []


# Issue 36: what a backend can do is a capability (_symmem.capabilities(),
# the ops table's bits), never a comparison with the backend's name. The
# bench and `python -m symmem info` report which backend runs: they may.
NAME_REPORTS = {
    "python/symmem/_info.py": "python -m symmem info reports which backend init would choose",
    "python/symmem/bench": "the bench prints and records the backend it measured",
}
ENV_VARS = os.path.join(SRC, "core", "env_vars.def")


def backend_names():
    """Every backend's name: SYMMEM_BACKEND's choices (src/core/env_vars.def)
    but auto, which names none."""
    table = open(ENV_VARS).read()
    choices = re.search(
        r'SYMMEM_ENV_VAR\("SYMMEM_BACKEND",\s*CHOICE,\s*"[^"]*",\s*"[^"]*",\s*"([^"]+)"', table
    )
    assert choices, f"no SYMMEM_BACKEND choices in {ENV_VARS}"
    return set(choices.group(1).split("|")) - {"auto"}


BACKEND_NAMES = backend_names()


# The typed readers of env.h (and the backends' services of the same names)
# and the kinds of variable each reads: a flag read as a size called a
# parser that FLAG has not (a crash of every gpu init, found on a GPU).
TYPED_READERS = {
    "env_size": {"SIZE", "NUMBER", "DURATION"},
    "env_number": {"SIZE", "NUMBER", "DURATION"},
    "env_flag": {"FLAG"},
}


def test_every_typed_read_of_a_variable_matches_its_kind():
    kinds = dict(re.findall(r'SYMMEM_ENV_VAR\("(\w+)",\s*(\w+)', open(ENV_VARS).read()))
    reads = 0
    wrong = []
    for path in c_files():
        text = open(path).read()
        for reader, name in re.findall(r'\b(?:symmem__)?(env_\w+)\s*\(\s*"(\w+)"', text):
            if reader not in TYPED_READERS:
                continue
            reads += 1
            if kinds.get(name) not in TYPED_READERS[reader]:
                wrong.append(
                    f"{os.path.relpath(path, ROOT)}: {reader}({name}), a {kinds.get(name)}"
                )
    assert reads > 5 and not wrong, wrong


def test_the_backend_names_are_every_backend_s():
    # each backend has a folder of its own under src/backends/
    assert BACKEND_NAMES == set(os.listdir(os.path.join(SRC, "backends"))), BACKEND_NAMES


def backend_name_tests(path, names=BACKEND_NAMES):
    """["line N: what"] for each comparison in the Python file path with a
    backend's name (alone or in a tuple, list or set), with
    _symmem.backend_name(), or with a launcher preview's ["backend"]."""
    import ast

    def is_name(node):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(map(is_name, node.elts))
        return (
            (isinstance(node, ast.Constant) and node.value in names)
            or (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", None)) == "backend_name"
            )
            or (
                isinstance(node, ast.Subscript)
                and isinstance(node.slice, ast.Constant)
                and node.slice.value == "backend"
            )
        )

    found = []
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.Compare) and any(map(is_name, [node.left, *node.comparators])):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_the_package_decides_by_capability_not_by_backend_name():
    uses = {}
    for folder, _, names in os.walk(PACKAGE):
        for name in names:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, ROOT)
            if not name.endswith(".py") or any(
                rel == r or rel.startswith(r + os.sep) for r in NAME_REPORTS
            ):
                continue
            if found := backend_name_tests(path):
                uses[rel] = found
    assert not uses, f"ask _symmem.capabilities() instead: {uses}"


def c_backend_name_tests(path, names=BACKEND_NAMES):
    """["path: line"] for each line of the C file path that compares a
    string with a backend's name or with an ops table's name (ops->name)."""
    literal = "|".join(map(re.escape, sorted(names)))
    pattern = re.compile(
        rf'\b(strn?cmp|strcasecmp|memcmp)\([^;]*("({literal})"|\bops->name\b)'
        rf"|\bops->name\s*[!=]=|\bops->name\[\d+\]\s*[!=]="
    )
    return [
        f"{os.path.relpath(path, ROOT)}: {line.strip()}"
        for line in open(path)
        if pattern.search(line)
    ]


def test_the_core_and_the_extension_decide_by_capability_not_by_backend_name():
    found = [
        line
        for layer in ("core", "extension")
        for path in c_files(os.path.join(SRC, layer))
        for line in c_backend_name_tests(path)
    ]
    assert not found, f"test the ops table's capabilities instead: {found}"


def test_the_backend_name_check_finds_each_form(tmp_path):
    names = BACKEND_NAMES | {"tpu"}  # a backend added tomorrow is covered the same way
    forms = [
        '_symmem.backend_name() == "gpu"',
        'x = backend != "cpu"',
        '"gpu" == name',
        'b = _symmem.backend_name() in ("cpu",)',
        'job["backend"] == "gpu"',
        'if (args.backend or os.environ.get("SYMMEM_BACKEND")) == "mpi": pass',
        'if _symmem.launcher(backend=backend)["backend"] == chosen: pass',
        'heap = backend in ("cpu", "mpi")',
        'ok = backend not in {"tpu"}',
    ]
    for form in forms:
        path = tmp_path / "m.py"
        path.write_text(f'"""backend == "gpu" in a docstring is fine."""\n{form}\n')
        assert backend_name_tests(str(path), names), form
    path.write_text(
        '"""Prints the name."""\nprint(f"backend {_symmem.backend_name()}")\n'
        'ok = "device_memory" in _symmem.capabilities()\n'
        'mpi = "mpi_processes" in job["capabilities"]\n'
        'method = initializer_method in ("mpi", "emulated_mpi")\n'
    )
    # "mpi" is an initializer method too: a name in another role still reads
    # as a backend's, so such a comparison names its values (MPI_METHODS)
    assert backend_name_tests(str(path), names) == [
        "line 5: initializer_method in ('mpi', 'emulated_mpi')"
    ]


def test_the_c_backend_name_check_finds_each_form(tmp_path):
    names = BACKEND_NAMES | {"tpu"}
    forms = [
        'if (strcmp(ops->name, "mpi") != 0) return;',
        'if (strcmp(name, "gpu") == 0 || strcmp(name, "tpu") == 0) x = 1;',
        'if (strncmp(requested, "cpu", 3) == 0) x = 1;',
        "if (strcmp(rt->ops->name, wanted) == 0) x = 1;",
        "if (rt->ops->name == cpu_name) x = 1;",
        "if (ops->name[0] == 'g') x = 1;",
    ]
    for form in forms:
        path = tmp_path / "m.c"
        path.write_text(f"/* strcmp(ops->name, \"gpu\") in a comment is one too */\n{form}\n")
        assert len(c_backend_name_tests(str(path), names)) == 2, form
    path.write_text(
        "if (ops->capabilities & SYMMEM_CAP_MPI_PROCESSES) x = 1;\n"
        "if (strcmp(v->name, wanted) == 0) return v; /* another table's names */\n"
        "while (i < count && strcmp(name, named_backends[i].name) != 0) i++;\n"
        'static const char *names[] = {"cpu", "gpu"};\n'
        'printf("backend %s", ops->name);\n'
    )
    assert c_backend_name_tests(str(path), names) == []
