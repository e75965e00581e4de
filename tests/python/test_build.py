"""The build: one version everywhere, only the public API exported from
every object we build, and an install that compiles afresh."""

import fcntl
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
    return ".".join(
        re.search(rf"#define SYMMEM_VERSION_{part} (\d+)", header).group(1)
        for part in ("MAJOR", "MINOR", "PATCH")
    )


def test_one_version():
    version = header_version()
    assert _symmem.VERSION == version
    assert symmem.__version__ == version
    assert importlib.metadata.version("symmem") == version
    assert symmem.get_version().symmem_version == version
    assert "version" not in re.findall(
        r'^(\w+) =', open(os.path.join(ROOT, "pyproject.toml")).read(), re.M
    ), "pyproject.toml must read the version from the header"


def defined_symbols(path, dynamic):
    """Names of the global symbols path defines (its dynamic table, or for an
    archive, every member's global symbols)."""
    args = ["nm", "--defined-only", "-D" if dynamic else "-g", path]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return {fields[2] for fields in (line.split() for line in out.splitlines()) if len(fields) == 3}


@pytest.fixture(scope="module")
def make_lib():
    if shutil.which("nm") is None or shutil.which("make") is None:
        pytest.skip("needs nm and make (binutils)")
    # One make at a time: pytest's workers (-n) each set this fixture up.
    os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
    with open(os.path.join(ROOT, "build", ".make-lib.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
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
    assert exported == public, (
        f"exported but not public: {sorted(exported - public)}; "
        f"public but not exported: {sorted(public - exported)}"
    )


def test_the_gpu_backend_exports_only_its_entry_point(make_lib):
    for path in (os.path.join(make_lib, "libsymmem_gpu.so"), extension_module("_gpu_backend")):
        assert defined_symbols(path, dynamic=True) == {"symmem_gpu_backend_open"}, path


def test_the_gpu_backend_needs_no_name_of_the_core(make_lib):
    # It is loaded with dlopen and reaches the core only through the services
    # it is lent (symmem_core_services_t): a core name it took would be
    # undefined at load time, and the gpu backend would not load at all.
    for path in (os.path.join(make_lib, "libsymmem_gpu.so"), extension_module("_gpu_backend")):
        out = subprocess.run(
            ["nm", "-D", "--undefined-only", path], capture_output=True, text=True, check=True
        ).stdout
        taken = sorted(line.split()[-1] for line in out.splitlines() if "symmem" in line)
        assert not taken, f"{path} needs {taken} from elsewhere"


def mpi_backends(make_lib):
    """The mpi backend as make and setup.py built it; skips where no MPI
    compiler was found (neither builds it then)."""
    paths = [p for p in (os.path.join(make_lib, "libsymmem_mpi.so"),) if os.path.exists(p)]
    here = os.path.dirname(symmem.__file__)
    paths += glob.glob(os.path.join(here, "_mpi_backend*.so"))
    if not paths:
        pytest.skip("the mpi backend was not built (no MPI compiler found)")
    return paths


def test_the_mpi_backend_exports_only_its_entry_point_and_needs_no_core_name(make_lib):
    for path in mpi_backends(make_lib):
        assert defined_symbols(path, dynamic=True) == {"symmem_mpi_backend_open"}, path
        out = subprocess.run(
            ["nm", "-D", "--undefined-only", path], capture_output=True, text=True, check=True
        ).stdout
        taken = sorted(line.split()[-1] for line in out.splitlines() if "symmem" in line)
        assert not taken, f"{path} needs {taken} from elsewhere"


def test_the_extension_exports_only_its_init_function():
    if shutil.which("nm") is None:
        pytest.skip("needs nm (binutils)")
    assert defined_symbols(extension_module("_symmem"), dynamic=True) == {"PyInit__symmem"}


def test_an_install_with_a_broken_compiler_fails(tmp_path):
    # setuptools builds in its own folder and compiles afresh: objects left
    # by an earlier build (make's or its own) never stand in for a compile.
    env = dict(os.environ, CC="false", CXX="false")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-cache-dir",
            "--target",
            str(tmp_path / "site"),
            ROOT,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode != 0, "pip install succeeded with CC=false:\n" + result.stdout
    # It failed where it compiles, not before (setuptools too old, say). Older
    # setuptools say "Command '['false', ...", newer "command '/usr/bin/false' failed".
    output = result.stdout + result.stderr
    assert re.search(r"Command '\['false'|command '(/\S*/)?false' failed", output), output
    assert not glob.glob(str(tmp_path / "site" / "symmem" / "_symmem*.so"))


def build_wheel(tree, env=None, out="wheels"):
    """pip wheel in tree, in place (as `pip install .` builds): its
    build-python/ is kept from one build to the next."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-cache-dir",
            "-w",
            str(tree / out),
            ".",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        env=dict(os.environ, **(env or {})),
        timeout=600,
    )


@pytest.mark.timeout(900)
def test_a_used_tree_compiles_afresh_with_its_current_compiler_and_flags(tmp_path):
    # A tree that has been built (build-python/ holds every object and both
    # extensions, newer than every source) is built again: a broken
    # compiler, a flag added to cflags.txt or to SYMMEM_EXTRA_CFLAGS must
    # each reach the compiler, not be skipped as "up-to-date". Each flag is
    # one the compiler refuses, so reaching it shows as a failed build.
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("setup.py", "pyproject.toml", "cflags.txt", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy2(os.path.join(ROOT, name), tree / name)
    keep = shutil.ignore_patterns("*.so", "__pycache__", "*.egg-info")
    for name in ("include", "src", "python", "tools"):
        shutil.copytree(os.path.join(ROOT, name), tree / name, ignore=keep)
    first = build_wheel(tree)
    assert first.returncode == 0, first.stdout + first.stderr
    assert glob.glob(str(tree / "build-python" / "lib*" / "symmem" / "_symmem*.so"))

    def refused(why, **env):
        result = build_wheel(tree, env, out=why)
        output = result.stdout + result.stderr
        assert result.returncode != 0, f"{why}: the build reused the last one:\n{output}"
        return output

    output = refused("CC=false", CC="false", CXX="false")
    assert re.search(r"Command '\['false'|command '(/\S*/)?false' failed", output), output
    output = refused("SYMMEM_EXTRA_CFLAGS", SYMMEM_EXTRA_CFLAGS="-fno-such-flag-symmem-extra")
    assert "-fno-such-flag-symmem-extra" in output, output
    cflags = (tree / "cflags.txt").read_text()
    (tree / "cflags.txt").write_text(cflags.strip() + " -fno-such-flag-symmem-cflags\n")
    output = refused("cflags.txt")
    assert "-fno-such-flag-symmem-cflags" in output, output
    # (No good build again after: the first showed one; a second full build
    # cost a minute of CI and proved nothing more.)
