"""NVSHMEM4Py's memory-side types on real PEs: NvshmemResource's allocate,
deallocate and get_peer_buffer, an NvshmemStream as a call's stream, the
queries after init, and torch tensors made with morder="F" (put into,
viewed on a peer and freed). Each PE checks the data it received."""

import pytest

from _launch import assert_all_ok, run_pes
from conftest import not_through_rma

RESOURCE = """
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
on_gpu = nvshmem.get_version().backend == "gpu"
res = nvshmem.NvshmemResource(None)
check(res.is_host_accessible != on_gpu and res.is_device_accessible == on_gpu, "accessible")
dst = res.allocate(8 * n)
src = res.allocate(8, stream=None, release=True)
check(isinstance(dst, nvshmem.Buffer) and dst.size == 8 * n, f"allocate gave {dst!r}")
buffer_view(src, "int64")[:] = xp().asarray([1000 + me])
buffer_view(dst, "int64")[:] = xp().asarray([-1] * n)
nvshmem.barrier_all()
# an NvshmemStream over handle 0 (the default stream; the cpu backend takes any)
stream = nvshmem.NvshmemStream(0)
nvshmem.put(buffer_view(dst, "int64")[me:me + 1], buffer_view(src, "int64"), remote_pe=nxt,
            stream=stream)
nvshmem.quiet(stream=stream)
nvshmem.barrier_all(stream=stream)
check(host(buffer_view(dst, "int64"))[prv] == 1000 + prv, "a put on an NvshmemStream")
if not on_gpu:
    peer = res.get_peer_buffer(dst, nxt)
    check(np.frombuffer(peer, dtype="int64")[me] == 1000 + me, "get_peer_buffer")
nvshmem.barrier_all()
handle = dst.handle
res.deallocate(handle, 8 * n)
expect_raises(nvshmem.NvshmemInvalid, ["NvshmemResource.deallocate:", f"ptr={handle!r}",
                                             f"[pe {me}]"], res.deallocate, handle, 8 * n)
res.deallocate(src.handle, 8)
# the queries after init
check(nvshmem.query_thread() == nvshmem.ThreadSupport.THREAD_SERIALIZED, "query_thread")
check(nvshmem.ask_smem(nvshmem.SmemAmount.SMEM_MINIMUM) == 16, "ask_smem")
expect_raises(nvshmem.NvshmemInvalid, ["ask_smem:", "amount=7", f"[pe {me}]"], nvshmem.ask_smem,
              7)
check(nvshmem.get_name().startswith(f"symmem v{nvshmem.__version__}"), nvshmem.get_name())
nvshmem.finalize()
ok(me)
"""


@not_through_rma("it reads the peers' buffers through get_peer_buffer")
@pytest.mark.timeout(60)
@pytest.mark.parametrize("n", (1, 2, 3))
def test_resource_and_stream(tmp_path, n):
    assert_all_ok(run_pes(tmp_path, n, RESOURCE, timeout=45), n)


TORCH_MORDER = """
import torch
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
t = nvshmem.tensor((2, 3), dtype=torch.float32, morder="F")
c = nvshmem.tensor((2, 3), dtype=torch.float32)
check(t.shape == (2, 3) and t.stride() == (1, 2), f"column-major: {t.stride()}")
check(c.stride() == (3, 1), f"row-major by default: {c.stride()}")
t[:] = torch.arange(6, dtype=torch.float32).reshape(2, 3) + 10 * me
nvshmem.barrier_all()
buf, nbytes, dtype = nvshmem.tensor_get_buffer(t)
check(nbytes == 24 and dtype == "float32", f"tensor_get_buffer: {nbytes}, {dtype}")
peer = nvshmem.get_peer_tensor(t, nxt)
check(peer.stride() == (1, 2) and torch.equal(peer.cpu(), torch.arange(6.).reshape(2, 3)
                                              + 10 * nxt), f"the next PE's tensor: {peer}")
# memory order: element [1, 0] is the second in memory
check(buffer_view(buf, "float32").tolist()[:2] == [10 * me, 10 * me + 3], "memory order")
b = nvshmem.bytetensor((2, 3), dtype=torch.float32, morder="F")
check(b.dtype == torch.uint8 and b.numel() == 24, "bytetensor")
for call, fn in (("tensor", nvshmem.tensor), ("bytetensor", nvshmem.bytetensor)):
    expect_raises(nvshmem.NvshmemInvalid, [f"{call}:", "morder='X'", f"[pe {me}]"], fn, (2,),
                  torch.float32, False, "X")
nvshmem.barrier_all()
for x in (b, c, t):
    nvshmem.free_tensor(x)
nvshmem.finalize()
ok(me)
"""


@pytest.mark.timeout(90)
@pytest.mark.parametrize("n", (1, 2))
def test_torch_tensor_morder(tmp_path, n):
    pytest.importorskip("torch")
    assert_all_ok(run_pes(tmp_path, n, TORCH_MORDER, timeout=60), n)
