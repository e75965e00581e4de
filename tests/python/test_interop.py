"""The interop factories (numpy; torch where installed, column-major tensors
included; cupy's refusal on cpu, and its arrays on the gpu backend) and the
seed notebook's examples in examples/."""

import re
from pathlib import Path

import numpy as np
import pytest

from conftest import ON_GPU, assert_all_ok, not_on_gpu, not_through_rma

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


@not_on_gpu(
    "symmem.interop.numpy, memoryviews of symmetric arrays and interop.cupy's refusal "
    "are the cpu backend's"
)
@not_through_rma("it reads the peers' arrays through get_peer_array")
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
    # the gpu backend's tensors (DLPack bytes, then the dtype, whose view of
    # another size starts a root of torch's own): a view of a view is traced
    # to its Buffer, used while it lives and refused once it is freed
    for dtype in (torch.bfloat16, torch.float32, torch.uint8):
        buf = nvshmem.buffer(64)
        view = st._typed(torch.from_dlpack(buf), dtype, buf)[1:5].reshape(2, 2)[1]
        src = nvshmem.tensor((2,), dtype=dtype)
        src.fill_(3)
        nvshmem.put(view, src, me)
        nvshmem.quiet()
        check(bool((view == 3).all()), f"{dtype}: put into a typed view: {view}")
        nvshmem.free(buf)
        try:
            nvshmem.put(view, src, me)
            check(False, f"{dtype}: a view of a freed Buffer was accepted")
        except nvshmem.NvshmemInvalid as error:
            check("was freed" in str(error), f"{dtype}: {error}")
        nvshmem.free_tensor(src)
    # tensors torch makes itself over a symmetric array (it holds the array
    # out of Python's sight): used while the array lives; once it is freed
    # and a newer allocation has its address, refused, the newer one untouched
    import gc
    import numpy as np
    del buf, view, src, t, s  # freed above: nothing may hold their Buffers now
    gc.collect()
    AMBIGUOUS = ["torch made this tensor itself", "freed allocation", "still alive"]
    for make in (torch.from_numpy, torch.as_tensor, torch.from_dlpack):
        a = nvshmem.array((8,), dtype="float32")
        a[:] = 1
        view = make(a)[2:6]
        nvshmem.put(view, np.full(4, 5, np.float32), me)
        check(a.tolist() == [1, 1, 5, 5, 5, 5, 1, 1], f"{make.__name__}: put into a live view")
        nvshmem.free_array(a)
        b = nvshmem.array((8,), dtype="float32")
        check(b.ctypes.data == a.ctypes.data, f"{make.__name__}: b did not get a's address")
        b[:] = -1
        for tensor in (view, make(b)):  # which allocation each is over, nothing can tell
            try:
                nvshmem.put(tensor, np.full(4, 5, np.float32), me)
                check(False, f"{make.__name__}: a tensor over freed memory was accepted")
            except nvshmem.NvshmemInvalid as error:
                check(all(w in str(error) for w in [f"[pe {me}] put: dst"] + AMBIGUOUS),
                      f"{make.__name__}: {error}")
        check(b.tolist() == [-1] * 8, f"{make.__name__}: the refused put reached b: {b}")
        del view, a, tensor
        gc.collect()  # nothing holds the freed Buffer now: b's own tensors work
        nvshmem.put(make(b)[:4], np.full(4, 2, np.float32), me)
        check(b.tolist() == [2] * 4 + [-1] * 4, f"{make.__name__}: put into b's tensor: {b}")
        nvshmem.free_array(b)
        del b  # else its freed Buffer would make the next a's tensors ambiguous
    # a symmetric array or Buffer is not a tensor: refused by name, not an AttributeError
    arr = nvshmem.array((4,), dtype="float32")
    for obj in (arr, nvshmem.array_get_buffer(arr)[0]):
        try:
            nvshmem.tensor_get_buffer(obj)
            check(False, f"tensor_get_buffer({type(obj).__name__}) accepted")
        except nvshmem.NvshmemInvalid as error:
            check(f"tensor_get_buffer: tensor of type {type(obj).__name__} is not a torch "
                  "tensor" in str(error), str(error))
    nvshmem.free_array(arr)
    ok()
    nvshmem.finalize()
"""


def test_torch_interop(run_pes):
    pytest.importorskip("torch")
    assert_all_ok(run_pes(2, TORCH_INTEROP), 2)


# Column-major (Fortran-order) tensors, as tensor(..., morder="F") makes them,
# work as NumPy's column-major arrays do: whole, in memory order. Every PE
# checks what it received, element by element.
TORCH_FORTRAN = """
    import torch
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    WORLD = nvshmem.Teams.TEAM_WORLD

    def pattern(pe, dtype, cols=4):
        return (torch.arange(3 * cols).reshape(3, cols) + 100 * pe).to(dtype)

    for dtype in (torch.float32, torch.int64):
        src = nvshmem.tensor((3, 4), dtype=dtype, morder="F")
        dst = nvshmem.tensor((3, 4), dtype=dtype, morder="F")
        dev = src.device
        check(src.stride() == (1, 3) and not src.is_contiguous(),
              f"{dtype}: morder='F' gave strides {src.stride()}")
        src.copy_(pattern(me, dtype))
        dst.zero_()
        nvshmem.barrier_all()

        nvshmem.put(dst, src, nxt)
        nvshmem.barrier_all()
        check(torch.equal(dst, pattern(prv, dtype).to(dev)), f"{dtype}: put: {dst}")
        nvshmem.barrier_all()

        dst.zero_()
        nvshmem.get(dst, src, nxt)
        check(torch.equal(dst, pattern(nxt, dtype).to(dev)), f"{dtype}: get: {dst}")
        nvshmem.barrier_all()

        dst.zero_()  # NVSHMEM4Py's form: (dst, src, count, pe, stream)
        nvshmem.barrier_all()
        nvshmem.put_nbi(dst, src, 12, nxt, None)
        nvshmem.quiet()
        nvshmem.barrier_all()
        check(torch.equal(dst, pattern(prv, dtype).to(dev)), f"{dtype}: put_nbi: {dst}")
        nvshmem.barrier_all()

        # A column-major tensor off the heap is a source as well.
        private = pattern(10 + me, dtype).t().contiguous().t().to(dev)
        check(private.stride() == (1, 3), f"private strides {private.stride()}")
        nvshmem.put(dst, private, nxt)
        nvshmem.barrier_all()
        check(torch.equal(dst, pattern(10 + prv, dtype).to(dev)), f"{dtype}: put of private")
        nvshmem.barrier_all()

        nvshmem.reduce(WORLD, dst, src, "sum")
        want = sum(pattern(pe, dtype) for pe in range(n)).to(dev)
        check(torch.equal(dst, want), f"{dtype}: reduce sum: {dst}, expected {want}")
        nvshmem.barrier_all()

        nvshmem.broadcast(WORLD, dst, src, 0)
        check(torch.equal(dst, pattern(0, dtype).to(dev)), f"{dtype}: broadcast: {dst}")
        nvshmem.barrier_all()

        # fcollect: PE k's block is columns 4k..4k+3 of a column-major dst.
        gathered = nvshmem.tensor((3, 4 * n), dtype=dtype, morder="F")
        nvshmem.fcollect(WORLD, gathered, src)
        for pe in range(n):
            check(torch.equal(gathered[:, 4 * pe:4 * pe + 4], pattern(pe, dtype).to(dev)),
                  f"{dtype}: fcollect block {pe}: {gathered}")
        nvshmem.barrier_all()

        # Every other column leaves gaps: refused, naming the argument.
        expect_raises(nvshmem.NvshmemInvalid, ["put:", "dst", "not contiguous"],
                      nvshmem.put, dst[:, ::2], src[:, ::2], nxt)
        nvshmem.barrier_all()
        nvshmem.free_tensor(gathered)
        nvshmem.free_tensor(dst)
        nvshmem.free_tensor(src)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.parametrize("n", (2, 3))
def test_torch_fortran_order(run_pes, n):
    pytest.importorskip("torch")
    assert_all_ok(run_pes(n, TORCH_FORTRAN), n)


def test_resolver_takes_dense_tensors_in_either_order():
    """What the C module is handed for a tensor: its whole memory, row-major or
    column-major as NumPy arrays are taken; a tensor with gaps is refused."""
    torch = pytest.importorskip("torch")
    from symmem import _resolver

    dense = [
        torch.arange(6.0).reshape(3, 2).t(),  # column-major 2-D
        torch.arange(24).reshape(4, 3, 2).permute(2, 1, 0),  # column-major 3-D
        torch.arange(24.0).reshape(4, 6).t()[:, 1:3],  # its columns 1 and 2
        torch.arange(6, dtype=torch.bfloat16).reshape(2, 3),  # row-major
    ]
    for t, order in zip(dense, "FFFC"):
        address, nbytes, itemsize, name, readonly, keep, got_order = _resolver.resolve(t)
        assert got_order == order, (t.shape, t.stride(), got_order)
        assert (address, nbytes, itemsize, readonly, keep) == (
            t.data_ptr(),
            t.numel() * t.element_size(),
            t.element_size(),
            False,
            t,
        ), t.stride()
        assert name == str(t.dtype).replace("torch.", "")
    gaps = [
        torch.arange(24.0).reshape(4, 6)[:, ::2],  # every other column
        torch.arange(24.0).reshape(2, 3, 4).permute(0, 2, 1),  # neither order
        torch.arange(24.0).reshape(4, 6).t()[1:3],
    ]  # two rows of a column-major
    for t in gaps:
        with pytest.raises(ValueError, match="not contiguous"):
            _resolver.resolve(t)


# interop.cupy on the gpu backend: NVSHMEM4Py's morder= and except_on_del=.
CUPY_INTEROP = """
    import symmem.interop.cupy as scp
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    cp = xp()
    want = lambda pe: np.arange(12, dtype="float32").reshape(3, 4) + 100 * pe
    a = scp.array((3, 4), dtype="float32", morder="F", except_on_del=False)
    src = scp.array((3, 4), dtype="float32", morder="F")
    check(a.flags.f_contiguous and not a.flags.c_contiguous, f"morder='F': {a.strides}")
    src[:] = cp.asarray(want(me))
    a.fill(0)
    cp.cuda.Device().synchronize()
    nvshmem.barrier_all()
    nvshmem.put(a, src, nxt)
    nvshmem.barrier_all()
    check_equal(a, want(prv), "put of column-major CuPy arrays")
    raw = scp.bytearray((3, 4), dtype="float64", morder="F", except_on_del=False)
    check(raw.shape == (96,) and raw.dtype == np.uint8, f"bytearray: {raw.shape} {raw.dtype}")
    expect_raises(nvshmem.NvshmemInvalid, ["bytearray:", "morder='A'"], scp.bytearray, 4,
                  morder="A")
    nvshmem.barrier_all()
    for x in (raw, src, a):
        scp.free_array(x)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.skipif(not ON_GPU, reason="CuPy arrays are the gpu backend's (SYMMEM_BACKEND=gpu)")
@pytest.mark.parametrize("npes", [1, 2])  # 1: a host with one GPU still runs it
def test_cupy_interop(run_pes, npes):
    assert_all_ok(run_pes(npes, CUPY_INTEROP), npes)
