"""The build: one version everywhere, only the public API exported from
every object we build, and an install that compiles afresh."""
import glob
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys

import pytest

import symmem
from symmem import _symmem

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def header_version():
    header = open(os.path.join(ROOT, "include", "symmem", "symmem.h")).read()
    return ".".join(re.search(rf"#define SYMMEM_VERSION_{part} (\d+)", header).group(1)
                    for part in ("MAJOR", "MINOR", "PATCH"))


def test_one_version():
    version = header_version()
    assert _symmem.VERSION == version
    assert symmem.__version__ == version
    assert importlib.metadata.version("symmem") == version
    assert symmem.get_version().symmem_version == version
    assert "version" not in re.findall(r'^(\w+) =', open(os.path.join(ROOT, "pyproject.toml")).read(),
                                       re.M), "pyproject.toml must read the version from the header"


def defined_symbols(path, dynamic):
    """Names of the global symbols path defines (its dynamic table, or for an
    archive, every member's global symbols)."""
    args = ["nm", "--defined-only", "-D" if dynamic else "-g", path]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return {fields[2] for fields in (line.split() for line in out.splitlines())
            if len(fields) == 3}


@pytest.fixture(scope="module")
def make_lib():
    if shutil.which("nm") is None or shutil.which("make") is None:
        pytest.skip("needs nm and make (binutils)")
    subprocess.run(["make", "-s", "-C", ROOT, "lib"], check=True, capture_output=True)
    return os.path.join(ROOT, "build")


def extension_module(name):
    here = os.path.dirname(symmem.__file__)
    found = glob.glob(os.path.join(here, name + "*.so"))
    assert found, f"no {name} in {here}"
    return found[0]


def public_functions():
    header = open(os.path.join(ROOT, "include", "symmem", "symmem.h")).read()
    return set(re.findall(r"^SYMMEM_API [^(]*?\b(symmem_\w+)\(", header, re.M))


def test_the_static_library_defines_only_prefixed_names(make_lib):
    # A user's own cpu_copy or registry_add must never collide with ours.
    names = defined_symbols(os.path.join(make_lib, "libsymmem.a"), dynamic=False)
    stray = sorted(n for n in names if not n.startswith("symmem_"))
    assert not stray, f"libsymmem.a defines unprefixed names: {stray}"


def test_the_shared_library_exports_only_the_public_api(make_lib):
    public = public_functions()
    assert len(public) > 40
    exported = defined_symbols(os.path.join(make_lib, "libsymmem.so"), dynamic=True)
    assert exported == public, (f"exported but not public: {sorted(exported - public)}; "
                                f"public but not exported: {sorted(public - exported)}")


def test_the_gpu_backend_exports_only_its_entry_point(make_lib):
    for path in (os.path.join(make_lib, "libsymmem_gpu.so"), extension_module("_gpu_backend")):
        assert defined_symbols(path, dynamic=True) == {"symmem_gpu_backend_open"}, path


def test_the_extension_exports_only_its_init_function():
    if shutil.which("nm") is None:
        pytest.skip("needs nm (binutils)")
    assert defined_symbols(extension_module("_symmem"), dynamic=True) == {"PyInit__symmem"}


def test_an_install_with_a_broken_compiler_fails(tmp_path):
    # setuptools builds in its own folder and compiles afresh: objects left
    # by an earlier build (make's or its own) never stand in for a compile.
    env = dict(os.environ, CC="false", CXX="false")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-cache-dir", "--target", str(tmp_path / "site"), ROOT],
        capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode != 0, "pip install succeeded with CC=false:\n" + result.stdout
    # It failed where it compiles, not before (setuptools too old, say). Older
    # setuptools say "Command '['false', ...", newer "command '/usr/bin/false' failed".
    output = result.stdout + result.stderr
    assert re.search(r"Command '\['false'|command '(/\S*/)?false' failed", output), output
    assert not glob.glob(str(tmp_path / "site" / "symmem" / "_symmem*.so"))
