"""bfloat16 on the cpu backend, where NumPy has it through ml_dtypes: arrays,
put, and every reduction op, with every PE's data checked."""

import pytest

from conftest import assert_all_ok, not_on_gpu

pytest.importorskip("ml_dtypes")

PROGRAM = """
import ml_dtypes
W = nvshmem.Teams.TEAM_WORLD
me, n = nvshmem.my_pe(), nvshmem.n_pes()
a = nvshmem.array((300,), dtype="bfloat16")
b = nvshmem.array((300,), dtype="bfloat16")
check(a.dtype == np.dtype(ml_dtypes.bfloat16), f"array dtype {a.dtype}")
a[:] = (np.arange(300) % 9 + me).astype(ml_dtypes.bfloat16)
parts = np.stack([(np.arange(300) % 9 + pe).astype(np.float32) for pe in range(n)])
for op, ref in (("sum", parts.sum(0)), ("min", parts.min(0)), ("max", parts.max(0)),
                ("prod", parts.prod(0))):
    nvshmem.reduce(W, b, a, op)
    check_equal(b.astype(np.float32), ref.astype(ml_dtypes.bfloat16).astype(np.float32),
                f"reduce {op}")
expect_raises(nvshmem.NvshmemInvalid, ["reduce:", "bitwise"], nvshmem.reduce, W, b, a, "xor")
nvshmem.barrier_all()
nvshmem.put(b, a, (me + 1) % n)
nvshmem.barrier_all()
check_equal(b.astype(np.float32), (np.arange(300) % 9 + (me - 1) % n).astype(np.float32), "put")
nvshmem.free_array(a)
nvshmem.free_array(b)
ok()
nvshmem.finalize()
"""


@not_on_gpu("ml_dtypes' bfloat16 arrays are NumPy arrays; the gpu smoke test covers torch bfloat16")
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_bfloat16_reduce_and_put(run_pes, n):
    assert_all_ok(run_pes(n, "nvshmem.init()\n" + PROGRAM), n)
