"""The interop factories (numpy; torch where installed; cupy's refusal on cpu)
and the seed notebook's examples in examples/."""
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import assert_all_ok, cpu_only

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("n", (1, 2, 3, 4))
def test_example_ring(run_pes, n):
    result = run_pes(n, EXAMPLES / "ring.py")
    assert result.rc == 0, str(result)
    for pe in range(n):
        prv = (pe - 1) % n
        [line] = result.lines(pe)
        match = re.fullmatch(rf"PE {pe} of {n} received from PE {prv}: \[(.*)\]", line)
        assert match, line
        got = np.array(match.group(1).split(), dtype=float)
        assert np.array_equal(got, np.arange(10) + 100 * prv), line


def test_example_put_signal(run_pes):
    result = run_pes(2, EXAMPLES / "put_signal.py")
    assert result.rc == 0, str(result)
    assert result.lines(0) == ["PE 0 sent its block to PE 1 and set the signal"], str(result)
    lines = result.lines(1)
    assert lines[0] == "PE 1 saw signal=1 and received:", str(result)
    rows = [np.array(line.strip(" []").split(), dtype=float) for line in lines[1:]]
    assert len(rows) == 4 and all(np.array_equal(row, np.ones(4)) for row in rows), lines


NUMPY_INTEROP = """
    import symmem.interop.numpy as snp
    import symmem.interop as interop
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    check(interop.numpy is snp, "symmem.interop.numpy")
    for dt in DTYPES:
        a = snp.empty((2, 3), dtype=dt)
        check(isinstance(a, np.ndarray) and a.shape == (2, 3) and a.dtype == np.dtype(dt),
              f"{dt}: empty")
        a[:] = 0
        nvshmem.barrier_all()
        snp.get_peer_array(a, nxt)[:] = values(me, dt, 6).reshape(2, 3)
        nvshmem.barrier_all()
        check_equal(a, values(prv, dt, 6).reshape(2, 3), f"{dt}: interop peer store")
        nvshmem.barrier_all()
        snp.free_array(a)
    # the NumPy array protocol objects work as put arguments too
    b = snp.empty((4,), dtype="float32")
    b[:] = 0
    nvshmem.barrier_all()
    nvshmem.put(memoryview(b), np.arange(4, dtype="float32") + me, nxt)
    nvshmem.barrier_all()
    check_equal(b, np.arange(4, dtype="float32") + prv, "memoryview of a symmetric array")
    nvshmem.barrier_all()
    snp.free_array(b)

    # CuPy arrays need the gpu backend: a clear NotImplementedError naming cpu
    for call in (lambda: interop.cupy.empty((4,)), lambda: interop.cupy.array((4,)),
                 lambda: interop.cupy.bytearray((4,))):
        expect_raises(NotImplementedError, ["gpu backend", "cpu"], call)
    ok()
    nvshmem.finalize()
"""


@cpu_only("symmem.interop.numpy, memoryviews of symmetric arrays and interop.cupy's refusal "
          "are the cpu backend's")
@pytest.mark.parametrize("n", (1, 3))
def test_numpy_interop(run_pes, n):
    assert_all_ok(run_pes(n, NUMPY_INTEROP), n)


TORCH_INTEROP = """
    import torch
    import symmem.interop.torch as st
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    for dtype in (torch.float32, torch.int64, torch.float16, torch.uint8, torch.bool,
                  torch.bfloat16):
        t = st.empty((2, 4), dtype=dtype)
        s = nvshmem.tensor((2, 4), dtype=dtype)
        check(isinstance(t, torch.Tensor) and t.shape == (2, 4) and t.dtype == dtype,
              f"{dtype}: tensor")
        t.zero_()
        s.copy_((torch.arange(8).reshape(2, 4) + me) % 2 == 0 if dtype == torch.bool
                else (torch.arange(8).reshape(2, 4) + 10 * me).to(dtype))
        nvshmem.barrier_all()
        nvshmem.put(t, s, nxt)
        nvshmem.barrier_all()
        want = ((torch.arange(8).reshape(2, 4) + prv) % 2 == 0 if dtype == torch.bool
                else (torch.arange(8).reshape(2, 4) + 10 * prv).to(dtype)).to(t.device)
        check(torch.equal(t, want), f"{dtype}: put of tensors {t} {want}")
        buf, nbytes, name = nvshmem.tensor_get_buffer(t)
        check(nbytes == t.numel() * t.element_size(), f"{dtype}: tensor_get_buffer")
        nvshmem.barrier_all()
        t.zero_()
        nvshmem.barrier_all()
        nvshmem.get_peer_tensor(t, nxt).copy_(s)
        nvshmem.barrier_all()
        check(torch.equal(t, want), f"{dtype}: get_peer_tensor store")
        nvshmem.barrier_all()
        nvshmem.free_tensor(t)
        st.free_tensor(s)
    ok()
    nvshmem.finalize()
"""


def test_torch_interop(run_pes):
    pytest.importorskip("torch")
    assert_all_ok(run_pes(2, TORCH_INTEROP), 2)
