"""python -m symmem info answers a support question by itself: the backend
init would choose here and why (as the C library decides it), the libraries
that choice loads, the versions of the Python packages symmem works with, and
the environment table; and python -m symmem's --version, --help and usage."""

import ctypes
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from symmem import _symmem

from conftest import clean_env

PACKAGES = ("NumPy", "CuPy", "torch", "mpi4py", "numba", "numba-cuda", "triton")


def symmem_cli(*args, env=None, drop=("SYMMEM_BACKEND",)):
    """python -m symmem args, without any launcher's variables (and, unless
    env sets it, without SYMMEM_BACKEND: the choice is auto's)."""
    full = {k: v for k, v in clean_env().items() if k not in drop}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "symmem", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=full,
    )


def info(env=None, **kw):
    result = symmem_cli("info", env=env, **kw)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def ask_the_library(env=None, drop=("SYMMEM_BACKEND",)):
    """What the C library itself says in that environment: the backend init
    would choose (or its error) and the gpu backend's refusal (or None)."""
    code = textwrap.dedent("""
        import json
        from symmem import _symmem
        def ask(**kw):
            try:
                return _symmem.launcher(**kw)["backend"], None
            except Exception as error:
                return None, error.msg
        print(json.dumps([ask(), ask(backend="gpu")]))
    """)
    full = {k: v for k, v in clean_env().items() if k not in drop}
    full.update(env or {})
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=full,
        check=True,
    ).stdout
    (chosen, error), (gpu, gpu_error) = json.loads(out)
    return chosen, error, gpu_error


def gpu_why(gpu_error):
    return gpu_error.split("cannot run here: ", 1)[1]


def line_of(out, start):
    found = [line.strip() for line in out.splitlines() if line.strip().startswith(start)]
    assert found, f"no line starting {start!r} in:\n{out}"
    return found[0]


# ---------------------------------------------------------------- the backend


def test_info_names_autos_choice_and_the_reason():
    out = info()
    chosen, error, gpu_error = ask_the_library()
    assert error is None
    assert f"backend: {chosen}   (SYMMEM_BACKEND=auto, unset: the default)" in out, out
    why = line_of(out, "why:")
    assert "auto takes the gpu backend where it can run" in why, why
    if chosen == "cpu":  # the reason is the C library's own, word for word
        assert why.endswith(f"the gpu backend cannot run here: {gpu_why(gpu_error)}"), why
    else:
        assert gpu_error is None
        assert "a job with more than" in out
    assert (
        "for a PE started here with this environment: launcher none, PE 0 of 1, "
        "1 PE(s) on this host"
    ) in out


def test_info_names_the_backend_the_user_asked_for():
    out = info(env={"SYMMEM_BACKEND": "cpu"})
    assert "backend: cpu   (SYMMEM_BACKEND=cpu, set)" in out, out
    why = line_of(out, "why:")
    assert "SYMMEM_BACKEND=cpu asks for the cpu engine" in why, why
    _, _, gpu_error = ask_the_library()
    if gpu_error is None:
        assert "the gpu backend could run here" in why, why
    else:
        assert f"the gpu backend could not: {gpu_why(gpu_error)}" in why, why


def test_info_says_when_gpu_cannot_run():
    env = {"SYMMEM_BACKEND": "gpu"}
    out = info(env=env)
    chosen, error, gpu_error = ask_the_library(env)
    if chosen == "gpu":
        assert "backend: gpu   (SYMMEM_BACKEND=gpu, set)" in out, out
        assert "SYMMEM_BACKEND=gpu asks for it, and the gpu backend can run here" in out
    else:
        assert "backend: (none)   (SYMMEM_BACKEND=gpu, set)" in out, out
        assert line_of(out, "why:") == f"why: init will raise: {error}"
        assert gpu_why(gpu_error) in error


def test_info_reports_a_malformed_backend():
    out = info(env={"SYMMEM_BACKEND": "tpu"})
    assert "backend: (none)   (SYMMEM_BACKEND=tpu, set)" in out, out
    assert (
        "why: init will raise: init: SYMMEM_BACKEND='tpu' is not one of 'cpu', 'gpu', 'mpi', 'auto'"
    ) in out, out


def test_info_describes_the_launchers_job():
    # 64 PEs on this host, as torchrun's variables say: more than any host's
    # GPUs, so auto takes the cpu engine and says why.
    env = {"RANK": "5", "WORLD_SIZE": "64", "LOCAL_RANK": "5", "LOCAL_WORLD_SIZE": "64"}
    out = info(env=env)
    assert (
        "for a PE started here with this environment: launcher torchrun, PE 5 of 64, "
        "64 PE(s) on this host"
    ) in out, out
    chosen, error, gpu_error = ask_the_library(env)
    assert chosen == "cpu" and "backend: cpu" in out, out
    assert line_of(out, "why:").endswith(gpu_why(gpu_error))


# ---------------------------------------------------------------- libraries


def libcuda_loads():
    return ctypes_libcuda_error() is None


def test_info_lists_the_libraries():
    out = info()
    assert line_of(out, "symmem extension") == f"symmem extension  {_symmem.__file__}"
    backend = line_of(out, "gpu backend")
    path = _symmem.env("SYMMEM_GPU_BACKEND_LIB")  # set by the package at import
    assert path and path in backend, backend
    assert re.search(r"_gpu_backend[^ ]*\.so \((loaded|not loaded: .+)\)$", backend), backend
    cuda = line_of(out, "CUDA driver")
    nvshmem = line_of(out, "libnvshmem")
    if libcuda_loads():
        assert re.search(
            r"libcuda\.so[^ ]* \(CUDA \d+\.\d+; .*(\d+ device\(s\)|no devices)", cuda
        ), cuda
    else:
        assert cuda.startswith("CUDA driver       not found (libcuda.so.1:"), cuda
    _, _, gpu_error = ask_the_library()
    if gpu_error is None:  # the gpu backend loaded libnvshmem: its path and version
        assert re.search(r"libnvshmem_host\.so[^ ]* \(NVSHMEM \d+\.\d+\.\d+; from ", nvshmem), (
            nvshmem
        )
    else:
        assert "libnvshmem_host" in nvshmem, nvshmem


def ctypes_libcuda_error():
    """What the loader says about libcuda.so.1 (asked by ctypes, outside the
    package), or None where it loads."""
    try:
        ctypes.CDLL("libcuda.so.1")
        return None
    except OSError as error:
        return str(error)


def test_cuda_driver_info_answers_as_the_loader_does():
    driver = _symmem.cuda_driver_info()
    assert set(driver) == {"path", "version", "devices", "error"}, driver
    error = ctypes_libcuda_error()
    if error is not None:  # no driver: dlerror's words, and nothing else
        assert driver == {"path": None, "version": None, "devices": None, "error": error}
        assert error.startswith("libcuda.so.1: "), error
        return
    assert "libcuda.so" in driver["path"], driver
    assert isinstance(driver["version"], int) and driver["version"] >= 1000, driver
    if driver["devices"] is None:  # a driver without a GPU: cuInit's own error
        assert re.match(r"^(cuInit|cuDeviceGetCount) failed: \S+ \(\d+\)$", driver["error"]), driver
    else:
        assert driver["error"] is None and all(
            isinstance(n, str) and n for n in driver["devices"]
        ), driver


def test_info_prints_the_driver_lines_words():
    out = info()
    driver = _symmem.cuda_driver_info()
    line = line_of(out, "CUDA driver")
    if driver["path"] is None:  # as on a machine with no CUDA driver
        assert line == f"CUDA driver       not found ({driver['error']})", line
        # and the gpu backend's refusal, auto's reason here, in the same words
        assert f"no CUDA driver (libcuda.so.1: {driver['error']})" in line_of(out, "why:"), out
    else:
        # The same file, though this process may have loaded it by another name
        # first (torch loads libcuda.so; info's fresh process, libcuda.so.1).
        path = line.split()[2]
        assert os.path.realpath(path) == os.path.realpath(driver["path"]), line
        if driver["devices"] is None:
            assert f"no devices: {driver['error']}" in line, line
        else:
            assert f"{len(driver['devices'])} device(s)" in line, line


def test_nvshmem_version_asks_only_a_loaded_library():
    # A library on disk that this process has not loaded stays unloaded.
    code = textwrap.dedent("""
        import importlib.machinery, os
        from symmem import _symmem
        def loaded(path):
            return os.path.basename(path) in open("/proc/self/maps").read()
        specs = (importlib.machinery.PathFinder.find_spec(name) for name in
                 ("xxlimited", "_testcapi", "_curses", "_sqlite3", "_lzma", "_bz2"))
        path = next(spec.origin for spec in specs if spec and spec.origin.endswith(".so")
                    and not loaded(spec.origin))
        try:
            _symmem.nvshmem_version(path)
        except OSError as error:
            print(error)
        print(loaded(path))
    """)
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
        check=True,
    ).stdout.splitlines()
    assert re.match(r"^nvshmem_version: path='.*\.so' is not loaded in this process$", out[0]), out
    assert out[1] == "False", out
    # Loaded, but not libnvshmem: the symbol is missing, named.
    with pytest.raises(
        OSError,
        match=r"^nvshmem_version: path='.*' has no "
        r"nvshmemx_vendor_get_version_info \(",
    ):
        _symmem.nvshmem_version(_symmem.__file__)


@pytest.mark.parametrize(
    "path, words",
    [
        ("", "nvshmem_version: path='' is empty"),
        (None, "nvshmem_version: path of type NoneType is not a str"),
        (b"/lib/libnvshmem_host.so.3", "nvshmem_version: path of type bytes is not a str"),
    ],
)
def test_nvshmem_version_refuses_what_is_no_path(path, words):
    with pytest.raises(ValueError, match="^" + re.escape(words)):
        _symmem.nvshmem_version(path)


# ---------------------------------------------------------------- packages


def installed_version(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def test_info_lists_the_python_packages():
    out = info()
    section = out.split("\nPython packages:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in section] == list(PACKAGES), section
    for shown, distribution in (
        ("NumPy", "numpy"),
        ("mpi4py", "mpi4py"),
        ("numba", "numba"),
        ("numba-cuda", "numba-cuda"),
        ("torch", "torch"),
    ):
        version = installed_version(distribution) or "not installed"
        assert line_of(out, shown + " ").split(None, 1)[1] == version, section
    import numpy

    assert line_of(out, "NumPy").split()[1] == numpy.__version__


def test_info_imports_no_package(tmp_path):
    # A torch whose import raises, a CuPy without metadata: info reads the
    # metadata only, and never imports them.
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise RuntimeError('broken torch')\n")
    meta = tmp_path / "torch-9.8.7.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 9.8.7\n")
    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "__init__.py").write_text("raise ImportError('broken cupy')\n")
    pythonpath = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    result = symmem_cli("info", env={"PYTHONPATH": pythonpath})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" not in result.stdout + result.stderr
    assert line_of(result.stdout, "torch ") == "torch             9.8.7"
    if installed_version("cupy") is None and not any(
        installed_version(f"cupy-cuda{v}x") for v in (11, 12, 13)
    ):
        assert (
            line_of(result.stdout, "CuPy")
            == "CuPy              installed, version unknown (no package metadata)"
        )


# ---------------------------------------------------------------- the table


def test_info_prints_the_environment_table():
    out = info(env={"SYMMEM_SPIN_US": "33"})
    for heading in (
        "set by you",
        "set by python -m symmem.run for each PE",
        "read from other launchers",
    ):
        assert f"\nenvironment variables {heading}:\n" in out, heading
    assert re.search(r"^  SYMMEM_SPIN_US +33 \(set\) +\[cpu\]$", out, re.M), out
    assert re.search(r"^  SYMMEM_RANK +\(unset\) +\[launcher\]$", out, re.M), out
    assert "and, for the program's code, RANK, LOCAL_RANK, WORLD_SIZE and LOCAL_WORLD_SIZE" in out
    rows = _symmem.env_table()
    assert sum(
        1
        for line in out.splitlines()
        if re.match(r"  [A-Z]", line) and line.split()[0] in {row[0] for row in rows}
    ) == len(rows)


def test_only_what_you_set_is_set_by_you():
    # Neither the defaults nor what the package sets at import (the gpu
    # backend's path, ...) are "set by you"
    yours = [row[0] for row in _symmem.env_table() if row[2] in ("all", "cpu", "gpu", "mpi")]
    for env, expected in [({"SYMMEM_SPIN_US": "33"}, ["SYMMEM_SPIN_US"]), ({}, [])]:
        out = info(env=env, drop=yours)
        section = out.split("\nenvironment variables set by you:\n", 1)[1].split("\n\n", 1)[0]
        listed = [line.split()[0] for line in section.splitlines() if re.match(r"  [A-Z]", line)]
        assert listed == expected, section
        if not expected:
            assert section == "  (none)", section
        rest = out.split("\nenvironment variables you may set", 1)[1].split("\n\n", 1)[0]
        assert re.search(r"^  SYMMEM_BACKEND +auto +\[all\]$", rest, re.M), rest
        assert re.search(
            r"^  SYMMEM_GPU_BACKEND_LIB +\S+ \(set by symmem\) +\[gpu\]$", rest, re.M
        ), rest


def test_the_kernel_cache_is_in_the_users_cache_unless_set(tmp_path):
    # set by the package at import where unset; what the user set (empty: off) stays
    code = "import os, symmem; print(os.environ['SYMMEM_KERNEL_CACHE'])"
    env = {k: v for k, v in os.environ.items() if k != "SYMMEM_KERNEL_CACHE"}
    for given, expected in [
        (None, str(tmp_path / "symmem" / "kernels")),
        ("", ""),
        ("off", "off"),
        ("/elsewhere", "/elsewhere"),
    ]:
        run_env = dict(env, XDG_CACHE_HOME=str(tmp_path))
        if given is not None:
            run_env["SYMMEM_KERNEL_CACHE"] = given
        result = subprocess.run(
            [sys.executable, "-c", code], env=run_env, capture_output=True, text=True, timeout=60
        )
        assert result.stdout.strip() == expected, (given, result.stdout, result.stderr)


# ---------------------------------------------------------------- the command line


def test_no_command_is_info():
    result = symmem_cli()
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == info().splitlines()[0]
    assert "\nbackend: " in result.stdout and "\nPython packages:\n" in result.stdout


def test_version():
    result = symmem_cli("--version")
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        f"symmem {_symmem.VERSION}\n",
        "",
    )


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_explains_the_commands(flag):
    result = symmem_cli(flag)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    text = " ".join(result.stdout.split())
    assert text.startswith("usage: python -m symmem [-h] [--version] [info]"), text
    for words in (
        "--version",
        "info (the default) what symmem finds on this machine",
        "the backend init would choose here",
        "python -m symmem.run -n N prog.py",
        "python -m symmem.bench",
    ):
        assert words in text, words


@pytest.mark.parametrize(
    "args, words",
    [
        (["bogus"], "invalid choice: 'bogus'"),
        (["info", "extra"], "unrecognized arguments: extra"),
        (["--nope"], "unrecognized arguments: --nope"),
        (["info", "--verbose"], "unrecognized arguments: --verbose"),
    ],
)
def test_bad_arguments_give_usage_and_exit_2(args, words):
    result = symmem_cli(*args)
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert result.stderr.startswith("usage: python -m symmem"), result.stderr
    assert words in result.stderr, result.stderr
