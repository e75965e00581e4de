"""team_init on the gpu backend: a team whose members number themselves in
reverse order, made from a unique id, reduces and broadcasts in that order.
Run: python -m symmem.run -n 2 tests/gpu/team_init.py"""

import cupy as cp
import numpy as np

import symmem as nvshmem

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
config = nvshmem.TeamConfig(uniqueid=0x1234_5678_9ABC)
team = nvshmem.team_init(config, 0, n, n - 1 - me)
assert nvshmem.team_my_pe(team) == n - 1 - me and nvshmem.team_n_pes(team) == n
for i in range(n):
    assert nvshmem.team_translate_pe(team, i, nvshmem.Teams.TEAM_WORLD) == n - 1 - i
src = nvshmem.array((1024,), dtype="float32")
dst = nvshmem.array((1024,), dtype="float32")
src[:] = me + 1
nvshmem.reduce(team, dst, src, "sum")
assert float(dst[0]) == n * (n + 1) / 2 and bool((dst == dst[0]).all())
src[:] = cp.arange(1024, dtype=cp.float32) + 100 * me
nvshmem.broadcast(team, dst, src, root=0)  # team PE 0 is world PE n-1
assert np.array_equal(cp.asnumpy(dst), np.arange(1024, dtype=np.float32) + 100 * (n - 1))
nvshmem.barrier(team)
nvshmem.team_destroy(team)
# the seeds' spelling, in world order
team = nvshmem.team_init(nvshmem.TeamConfig(uniqueid=77), 0, n_pes=n, my_pe=me)
nvshmem.fcollect(team, dst[:n], src[:1])
assert cp.asnumpy(dst[:n]).tolist() == [100.0 * p for p in range(n)]
nvshmem.team_destroy(team)
nvshmem.free_array(src)
nvshmem.free_array(dst)
nvshmem.finalize()
print(f"PE {me} OK (team_init)")
