"""Which engine runs the gpu backend (src/backends/gpu/engine_choice.c), and
what it says, without a GPU: a stand-in CUDA driver (and, where a test needs
one, a stand-in NVSHMEM) built here from the symbols the backend loads
(src/backends/gpu/libs.c), placed where the backend looks for them. Each
case asks _symmem.launcher(backend="gpu") in a fresh process with a
launcher's variables, as init would, and `python -m symmem info` shows the
choice. Nothing here starts a job: the stand-ins cannot run one."""

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from gpu_jobs import GPUS

ROOT = Path(__file__).resolve().parents[2]
LIBS_C = (ROOT / "src" / "backends" / "gpu" / "libs.c").read_text()

pytestmark = pytest.mark.skipif(
    GPUS > 0, reason="a real driver is here: the stand-in would hide it"
)

# The driver's answers that the choice reads: FAKE_GPUS devices, each with
# VMM and POSIX descriptors unless FAKE_NO_VMM is set.
DRIVER = r"""
#include <stdlib.h>
int cuInit(unsigned f) { (void)f; return 0; }
int cuDeviceGetCount(int *n) { *n = atoi(getenv("FAKE_GPUS") ? getenv("FAKE_GPUS") : "1"); return 0; }
int cuDeviceGet(int *d, int ordinal) { *d = ordinal; return 0; }
int cuDeviceGetAttribute(int *v, int attribute, int device)
{
    (void)device;
    *v = (attribute == 102 || attribute == 103) ? getenv("FAKE_NO_VMM") == NULL : 1;
    return 0;
}
"""
SPECIAL = ("cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetAttribute")


def _stub_library(tmp_path, name, symbols, prefix=""):
    """A shared object defining symbols (each returns 0), prefix's first."""
    source = prefix + "".join(f"int {s}(void) {{ return 0; }}\n" for s in symbols)
    (tmp_path / f"{name}.c").write_text(source)
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    out = tmp_path / name
    subprocess.run(
        [cc, "-shared", "-fPIC", "-o", str(out), str(tmp_path / f"{name}.c")], check=True
    )
    return out


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory):
    """A folder with libcuda.so.1, and the path of a libnvshmem_host.so.3."""
    folder = tmp_path_factory.mktemp("fake_cuda")
    driver = set(re.findall(r'LOAD\(cuda, \w+, "(\w+)"\)', LIBS_C))
    driver |= set(re.findall(r'dlsym\(cuda, "(\w+)"\)', LIBS_C))
    _stub_library(folder, "libcuda.so.1", sorted(driver - set(SPECIAL)), DRIVER)
    nvshmem = set(re.findall(r'LOAD_NV\(\w+, "(\w+)"\)', LIBS_C))
    assert "nvshmem_malloc" in nvshmem and "cuMemCreate" in driver
    elsewhere = folder / "nvshmem"  # not on the library path: only where named
    elsewhere.mkdir()
    return folder, _stub_library(elsewhere, "libnvshmem_host.so.3", sorted(nvshmem))


# torchrun's variables for PE 0 of `size` PEs, `local` of them on this host
def _torchrun(size, local):
    return {
        "RANK": "0",
        "WORLD_SIZE": str(size),
        "LOCAL_RANK": "0",
        "LOCAL_WORLD_SIZE": str(local),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": "29500",
    }


def _env(stand_ins, nvshmem, **extra):
    folder, libnvshmem = stand_ins
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SYMMEM_", "OMPI_", "PMI", "SLURM_", "RANK", "LOCAL_", "WORLD_"))
    }
    env["LD_LIBRARY_PATH"] = f"{folder}:{env.get('LD_LIBRARY_PATH', '')}"
    env["SYMMEM_NVSHMEM_LIB"] = str(libnvshmem) if nvshmem else "/nonexistent/libnvshmem_host.so.3"
    env["SYMMEM_NVSHMEM_WHEEL_LIB"] = "/nonexistent/wheel/libnvshmem_host.so.3"  # an installed one
    env.update(extra)
    return env


def _choice(stand_ins, nvshmem=False, **extra):
    """_symmem.launcher(backend='gpu') in a fresh process: its engine and
    reason, or ('refused', the error's message)."""
    code = (
        "import json\nfrom symmem import _symmem\n"
        "try:\n    j = _symmem.launcher(backend='gpu')\n"
        "    print(json.dumps([j['engine'], j['engine_reason']]))\n"
        "except Exception as e:\n    print(json.dumps(['refused', str(e)]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(stand_ins, nvshmem, **extra),
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_auto_takes_nvshmem_where_each_pe_has_a_gpu_and_it_loads(stand_ins):
    engine, why = _choice(stand_ins, True, FAKE_GPUS="2", **_torchrun(2, 2))
    assert engine == "nvshmem", why
    assert why == "auto: NVSHMEM loads and each PE of this host has a GPU of its own"


def test_auto_takes_symmem_where_pes_share_a_gpu(stand_ins):
    engine, why = _choice(stand_ins, True, FAKE_GPUS="1", **_torchrun(4, 4))
    assert engine == "symmem", why
    assert why == "auto: 4 PEs on this host but only 1 GPUs, and NVSHMEM takes one GPU a PE"


def test_auto_takes_symmem_where_nvshmem_is_absent(stand_ins):
    engine, why = _choice(stand_ins, False, FAKE_GPUS="2", **_torchrun(2, 2))
    assert engine == "symmem", why
    assert why.startswith("auto: NVSHMEM does not load: libnvshmem_host.so.3 not found"), why
    assert "/nonexistent/libnvshmem_host.so.3" in why


def test_a_job_across_hosts_needs_nvshmem_and_says_so(stand_ins):
    engine, why = _choice(stand_ins, True, FAKE_GPUS="1", **_torchrun(4, 1))
    assert (engine, why) == (
        "nvshmem",
        "auto: the job's PEs are on several hosts (LOCAL_WORLD_SIZE=1 < WORLD_SIZE=4)",
    )
    engine, why = _choice(stand_ins, False, FAKE_GPUS="1", **_torchrun(4, 1))
    assert engine == "refused", why
    assert (
        "this job's PEs are on several hosts (LOCAL_WORLD_SIZE=1 < WORLD_SIZE=4), which "
        "needs the nvshmem engine, but NVSHMEM does not load"
    ) in why
    engine, why = _choice(
        stand_ins, True, SYMMEM_GPU_ENGINE="symmem", FAKE_GPUS="1", **_torchrun(4, 1)
    )
    assert engine == "refused", why
    assert (
        "SYMMEM_GPU_ENGINE=symmem, but the symmem engine runs the PEs of one host, and this "
        "job's are on several (LOCAL_WORLD_SIZE=1 < WORLD_SIZE=4): SYMMEM_GPU_ENGINE=nvshmem "
        "runs it"
    ) in why
    # the test hook that plays every PE on a host of its own counts as several hosts
    engine, why = _choice(
        stand_ins, True, SYMMEM_ONE_HOST_PER_PE="1", FAKE_GPUS="2", **_torchrun(2, 2)
    )
    assert (engine, why) == (
        "nvshmem",
        "auto: the job's PEs are on several hosts (SYMMEM_ONE_HOST_PER_PE=1)",
    )


def test_nvshmem_asked_for_where_it_cannot_run_says_why(stand_ins):
    engine, why = _choice(
        stand_ins, True, SYMMEM_GPU_ENGINE="nvshmem", FAKE_GPUS="1", **_torchrun(2, 2)
    )
    assert engine == "refused", why
    assert (
        "SYMMEM_GPU_ENGINE=nvshmem, but 2 PEs on this host but only 1 GPUs, and NVSHMEM takes "
        "one GPU a PE (SYMMEM_GPU_ENGINE=symmem lets PEs share a GPU)"
    ) in why
    engine, why = _choice(stand_ins, False, SYMMEM_GPU_ENGINE="nvshmem", **_torchrun(1, 1))
    assert engine == "refused" and "SYMMEM_GPU_ENGINE=nvshmem, but NVSHMEM does not load" in why


def test_the_symmem_engine_s_limits(stand_ins):
    engine, why = _choice(stand_ins, False, FAKE_GPUS="1", **_torchrun(9, 9))
    assert engine == "refused", why
    assert "the symmem engine runs at most 8 PEs (its collective kernels' limit)" in why
    assert "this job has 9" in why
    engine, why = _choice(stand_ins, False, FAKE_NO_VMM="1", **_torchrun(2, 2))
    assert engine == "refused", why
    assert "cuda:0 cannot map CUDA VMM memory (cuMemCreate)" in why
    engine, why = _choice(
        stand_ins, False, SYMMEM_GPU_UNMAPPED_PE="1", FAKE_GPUS="1", **_torchrun(2, 2)
    )
    assert engine == "refused", why
    assert "SYMMEM_GPU_UNMAPPED_PE plays a PE on another node" in why
    for variable in ("SYMMEM_GPU_COLLECTIVES", "SYMMEM_GPU_KERNELS"):
        engine, why = _choice(stand_ins, False, FAKE_GPUS="1", **{variable: "nvshmem"})
        assert engine == "refused", why
        assert f"{variable}=nvshmem asks for NVSHMEM's kernels, which only the nvshmem" in why


def test_a_bad_engine_choice_is_refused_naming_the_choices(stand_ins):
    engine, why = _choice(stand_ins, True, SYMMEM_GPU_ENGINE="fast", **_torchrun(1, 1))
    assert engine == "refused", why
    assert "SYMMEM_GPU_ENGINE='fast' is not one of 'auto', 'symmem', 'nvshmem'" in why


def test_info_shows_the_engines_and_the_one_a_job_here_gets(stand_ins):
    result = subprocess.run(
        [sys.executable, "-m", "symmem", "info"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(stand_ins, True, FAKE_GPUS="1", **_torchrun(4, 4)),
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "GPU engines (SYMMEM_GPU_ENGINE=auto):" in out, out
    assert "  nvshmem  NVIDIA's NVSHMEM: a GPU of its own for each PE" in out, out
    assert "  symmem   symmem's own, no NVSHMEM needed: the PEs of one host" in out, out
    assert (
        "  here: symmem (auto: 4 PEs on this host but only 1 GPUs, and NVSHMEM takes one GPU a PE)"
    ) in out, out
