"""python -m symmem info: what symmem finds on this machine, enough to answer
a support question by itself.

- the backend init would choose here, and why: asked of the C library's own
  choice (_symmem.launcher(), the code init runs, starting nothing), once as
  SYMMEM_BACKEND says and once for the gpu backend alone, whose refusal is
  the reason auto falls back to the cpu engine;
- the libraries that choice loaded (the gpu backend, the CUDA driver,
  libnvshmem_host), found in this process's memory map with their versions
  (asked through the C extension: _symmem.cuda_driver_info and
  _symmem.nvshmem_version);
- the versions of the Python packages symmem works with, from their package
  metadata (nothing is imported: a broken package cannot break info);
- every environment variable symmem reads (src/core/env_vars.def).
"""

import collections
import importlib.metadata
import importlib.util
import os
import platform
import re
import sys

from symmem import _symmem

# How info groups the table's rows: (heading, the applies_to values under
# it, whether the variable is set in this environment (None: either), a
# line after them). Only variables set here are "set by you".
_USERS = ("all", "cpu", "gpu", "mpi")
_SECTIONS = (
    ("set by you", _USERS, True, None),
    (
        "you may set (you have not: the default applies, or what the package set)",
        _USERS,
        False,
        None,
    ),
    (
        "set by python -m symmem.run for each PE",
        ("launcher",),
        None,
        "and, for the program's code, RANK, LOCAL_RANK, WORLD_SIZE and LOCAL_WORLD_SIZE "
        "(torchrun's names, below; symmem reads the SYMMEM_ ones first)",
    ),
    ("read from other launchers", ("torchrun", "Open MPI", "Slurm", "MPICH"), None, None),
)

# (shown as, its top-level module, the distributions that install it)
PACKAGES = (
    ("NumPy", "numpy", ("numpy",)),
    ("CuPy", "cupy", ("cupy", "cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x")),
    ("torch", "torch", ("torch",)),
    ("mpi4py", "mpi4py", ("mpi4py",)),
    ("numba", "numba", ("numba",)),
    ("numba-cuda", "numba_cuda", ("numba-cuda",)),
    ("triton", "triton", ("triton", "pytorch-triton", "triton-nightly")),
)
NVSHMEM_WHEELS = ("nvidia-nvshmem-cu13", "nvidia-nvshmem-cu12")

# The message init raises where the gpu backend was asked for but cannot run
# (choose_backend in src/core/lifecycle.c); what follows it is the reason.
_GPU_REFUSED = re.compile(r"^.*?backend='gpu' cannot run here: ")

Choice = collections.namedtuple("Choice", "requested backend reason job gpu_why")


# ---------------------------------------------------------------- the backend


def _message(error):
    return getattr(error, "msg", None) or str(error)


def backend_choice():
    """The backend init would choose in this process, and why."""
    requested = _symmem.env("SYMMEM_BACKEND") or "auto"
    try:  # only the gpu backend: None where it can run, else why not
        _symmem.launcher(backend="gpu")
        gpu_why = None
    except Exception as error:  # the C library's refusal, whatever its type
        gpu_why = _GPU_REFUSED.sub("", _message(error))
    try:
        job = _symmem.launcher()
    except Exception as error:
        return Choice(requested, None, f"init will raise: {_message(error)}", None, gpu_why)
    chosen = job["backend"]
    if requested == "cpu":
        could = (
            "the gpu backend could run here"
            if gpu_why is None
            else f"the gpu backend could not: {gpu_why}"
        )
        reason = f"SYMMEM_BACKEND=cpu asks for the cpu engine ({could})"
    elif requested == "gpu":
        reason = "SYMMEM_BACKEND=gpu asks for it, and the gpu backend can run here"
    elif chosen == "gpu":
        reason = (
            "auto takes the gpu backend where it can run: its library and the CUDA driver "
            "with a device load, and one of its engines can run the job"
        )
    else:
        reason = (
            f"auto takes the gpu backend where it can run, else the cpu engine; "
            f"the gpu backend cannot run here: {gpu_why}"
        )
    return Choice(requested, chosen, reason, job, gpu_why)


def _describe_job(job):
    launcher = job["launcher"] or "none"
    text = (
        f"launcher {launcher}, PE {job['rank']} of {job['nranks']}, "
        f"{job['local_size']} PE(s) on this host"
    )
    if job["spans_hosts"]:
        text += f", on several hosts ({job['spans_hosts']})"
    return text


# ---------------------------------------------------------------- libraries


def _loaded(prefix):
    """The path of the library whose file name starts with prefix, where this
    process has it loaded (after the backend choice above loaded it); else None."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) == 6:
                    path = fields[5].strip()
                    if os.path.basename(path).startswith(prefix):
                        return path
    except OSError:
        pass
    return None


def _kernel_module_version():
    try:
        with open("/proc/driver/nvidia/version") as f:
            match = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d[\w.-]*)", f.read())
    except OSError:
        return None
    return match.group(1) if match else None


def cuda_driver():
    """(path or None, the words that follow it, the number of devices or None)
    for libcuda.so.1, the CUDA driver the gpu backend loads."""
    driver = _symmem.cuda_driver_info()  # {path, version, devices, error}
    if driver["path"] is None:
        return None, f"not found ({driver['error']})", None
    words = []
    version = driver["version"]
    if version is not None:
        words.append(f"CUDA {version // 1000}.{version % 1000 // 10}")
    module = _kernel_module_version()
    if module:
        words.append(f"kernel module {module}")
    devices = driver["devices"]
    if devices is None:
        words.append(f"no devices: {driver['error']}")
        return driver["path"], "; ".join(words), None
    counts = collections.Counter(devices)
    listed = ", ".join(f"{n} x {name}" for name, n in counts.items())
    words.append(f"{len(devices)} device(s)" + (f": {listed}" if listed else ""))
    return driver["path"], "; ".join(words), len(devices)


def _distribution_version(names):
    for name in names:
        try:
            return name, importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        except Exception:  # broken metadata is "not installed" for info
            continue
    return None, None


def nvshmem_library():
    """(path or None, the words that follow it) for libnvshmem_host.so.3."""
    wheel, wheel_version = _distribution_version(NVSHMEM_WHEELS)
    path = _loaded("libnvshmem_host.so")
    if path is None:
        tried = []  # the order of open_nvshmem in src/backends/gpu/libs.c
        for name in ("SYMMEM_NVSHMEM_LIB", "SYMMEM_NVSHMEM_WHEEL_LIB"):
            value = os.environ.get(name)
            if not value:
                tried.append(f"{name} (unset)")
            else:
                tried.append(f"{name}={value}" + ("" if os.path.exists(value) else " (missing)"))
        tried.append("libnvshmem_host.so.3 on the library path")
        return None, (
            "not loaded (the gpu backend looks for it once the CUDA driver has a "
            "device); it would try " + ", ".join(tried)
        )
    words = []
    try:  # asks the library the gpu backend loaded; loads nothing
        major, minor, patch = _symmem.nvshmem_version(path)
        words.append(f"NVSHMEM {major}.{minor}.{patch}")
    except OSError as error:
        words.append(f"version unknown ({error})")
    real = os.path.realpath(path)
    for name, what in (
        ("SYMMEM_NVSHMEM_LIB", "SYMMEM_NVSHMEM_LIB"),
        ("SYMMEM_NVSHMEM_WHEEL_LIB", f"the {wheel} {wheel_version} wheel"),
    ):
        value = os.environ.get(name)
        if value and os.path.exists(value) and os.path.realpath(value) == real:
            words.append(f"from {what}")
            break
    else:
        words.append("from the library path")
    return path, "; ".join(words)


def gpu_backend_library(choice):
    path = _symmem.env("SYMMEM_GPU_BACKEND_LIB")
    if not path:
        return None, "not set (SYMMEM_GPU_BACKEND_LIB; the package ships _gpu_backend*.so)"
    if _loaded(os.path.basename(os.path.realpath(path))) is not None:
        return path, "loaded"
    return path, f"not loaded: {choice.gpu_why}"


def python_packages():
    """[(shown as, version or words)] without importing any of them."""
    rows = []
    for shown, module, distributions in PACKAGES:
        name, version = _distribution_version(distributions)
        if version is not None:
            rows.append((shown, version if name == distributions[0] else f"{version} ({name})"))
            continue
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        rows.append(
            (
                shown,
                "installed, version unknown (no package metadata)" if found else "not installed",
            )
        )
    return rows


# ---------------------------------------------------------------- the print-out


def _started_with():
    """The environment this process started with, before the package set its
    own variables at import (_libraries.py): /proc/self/environ; os.environ
    where /proc cannot tell."""
    try:
        with open("/proc/self/environ", "rb") as f:
            items = f.read().split(b"\0")
    except OSError:
        return dict(os.environ)
    pairs = (item.partition(b"=") for item in items if item)
    return {
        name.decode(errors="replace"): value.decode(errors="replace") for name, _, value in pairs
    }


def _print_environment():
    rows = _symmem.env_table()
    started = _started_with()
    for heading, groups, is_set, after in _SECTIONS:
        print(f"\nenvironment variables {heading}:")
        listed = 0
        for name, default, applies_to, help_text in rows:
            value = started.get(name)  # "" is unset, as the C library reads it
            if applies_to not in groups or is_set not in (None, bool(value)):
                continue
            ours = os.environ.get(name)  # what the package set at import
            shown = (
                f"{value} (set)"
                if value
                else f"{ours} (set by symmem)"
                if ours
                else default or "(unset)"
            )
            print(f"  {name:28} {shown:12} [{applies_to}]")
            print(f"  {'':28} {help_text}")
            listed += 1
        if not listed:
            print("  (none)")
        if after:
            print(f"  {after}")


# What each engine of the gpu backend is (docs/gpu.md, "GPU engines").
ENGINES = (
    (
        "nvshmem",
        "NVIDIA's NVSHMEM: a GPU of its own for each PE, PEs on several hosts, "
        "NVSHMEM's device library (Triton's and CuTe's nvshmem engines, module_init)",
    ),
    (
        "symmem",
        "symmem's own, no NVSHMEM needed: the PEs of one host (at most 8), which may "
        "share a GPU; PEs on one GPU time-share it, and CUDA MPS runs them side by side",
    ),
)


def _print_engines(choice, gpus):
    """The gpu backend's engines, and the one a job started here would get."""
    asked = _symmem.env("SYMMEM_GPU_ENGINE") or "auto"
    print(f"\nGPU engines (SYMMEM_GPU_ENGINE={asked}):")
    for name, words in ENGINES:
        print(f"  {name:8} {words}")
    if choice.job is None or choice.gpu_why is not None:
        print("  here: the gpu backend cannot run (see above)")
        return
    try:
        gpu_job = _symmem.launcher(backend="gpu")
    except Exception as error:  # the C library's refusal, whatever its type
        print(f"  here: {_GPU_REFUSED.sub('', _message(error))}")
        return
    print(f"  here: {gpu_job['engine']} ({gpu_job['engine_reason']})")
    if gpus is not None:
        print(
            f"  a job of more PEs than this host's {gpus} GPU(s) (python -m symmem.run -n N) "
            f"gets the symmem engine, its PEs sharing the GPUs"
        )


def info():
    print(
        f"symmem {_symmem.VERSION} (OpenSHMEM {_symmem.OPENSHMEM_SPEC_VERSION}), "
        f"Python {platform.python_version()} ({sys.executable}), "
        f"{platform.system()} {platform.release()} {platform.machine()}"
    )

    choice = backend_choice()  # first: it loads the libraries listed below
    cuda_path, cuda_words, gpus = cuda_driver()
    set_by = "set" if os.environ.get("SYMMEM_BACKEND") else "unset: the default"
    print(
        f"\nbackend: {choice.backend or '(none)'}   (SYMMEM_BACKEND={choice.requested}, {set_by})"
    )
    print(f"  why: {choice.reason}")
    if choice.job is not None:
        print(f"  for a PE started here with this environment: {_describe_job(choice.job)}")
    _print_engines(choice, gpus)

    print("\nlibraries:")
    rows = [
        ("symmem extension", _symmem.__file__, ""),
        ("gpu backend", *gpu_backend_library(choice)),
        ("CUDA driver", cuda_path, cuda_words),
        ("libnvshmem", *nvshmem_library()),
    ]
    for what, path, words in rows:
        text = f"{path} ({words})" if path and words else (path or words)
        print(f"  {what:17} {text}")

    print("\nPython packages:")
    for shown, version in python_packages():
        print(f"  {shown:17} {version}")

    _print_environment()
    return 0
