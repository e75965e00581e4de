"""NVSHMEM4Py's shared-memory staging names (SmemAmount, ask_smem, give_smem,
release_smem) and the device-side get_multicast_array in @numba.njit code
on the cpu backend (issue 34: the two names NVSHMEM4Py's own device tests
needed). A kernel that gives its staging memory and puts from it delivers
the data; get_multicast_array fails the compile, naming the call and why."""

import pytest

from conftest import assert_all_ok, cpu_only

pytest.importorskip("numba")
pytestmark = cpu_only("@numba.njit device code runs on the cpu backend's host heap")

STAGED_PUT = """
import numba
from numba.core.errors import TypingError
import symmem.core.device.numba as dev   # NVSHMEM4Py's import path

@numba.njit
def staged_put(dst, src, smem, pe):
    # NVSHMEM4Py's TMA shape: ask, give the staging memory, copy, release
    need = dev.ask_smem(dev.SmemAmount.SMEM_RECOMMENDED)
    dev.give_smem(smem)
    dev.put(dst, src, pe)
    dev.quiet()
    dev.release_smem()
    return need, dev.ask_smem(1), dev.ask_smem(dev.SmemAmount.SMEM_BARRIERS_ONLY)

@numba.njit
def multicast_store(team, x):
    mc = dev.get_multicast_array(team, x)
    mc[0] = 1.0

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
src = nvshmem.array((64,), dtype="float32")
dst = nvshmem.array((64,), dtype="float32")
src[:] = np.arange(64) + 100 * me
dst[:] = -1
smem = np.zeros(nvshmem.ask_smem(), dtype=np.uint8)  # what the kernel is launched with
nvshmem.barrier_all()
sizes = staged_put(dst, src, smem, (me + 1) % n)
nvshmem.barrier_all()
check(sizes == (16, 16, 16), f"ask_smem in njit code: {sizes}")
check_equal(dst, np.arange(64, dtype="float32") + 100 * ((me - 1) % n), "the staged put")
msg = expect_raises(TypingError, ["get_multicast_array: NVLink multicast needs the gpu "
                                  "backend; the running backend is cpu"],
                    multicast_store, nvshmem.Teams.TEAM_WORLD, dst)
expect_raises(TypingError, ["give_smem: smem must be a C-contiguous array"],
              staged_put, dst, src, np.zeros((4, 4), dtype=np.uint8)[:, 1], 0)
ok()
for a in (src, dst):
    nvshmem.free_array(a)
nvshmem.finalize()
"""


@pytest.mark.parametrize("n", [1, 2])
def test_staging_names_and_multicast_in_njit_code(run_pes, n):
    assert_all_ok(run_pes(n, STAGED_PUT, timeout=120), n)
