"""get_peer_array in @numba.njit code on the cpu backend: the array over a
peer's copy, read and written straight through the mapping (a store that
nothing reads afterwards included: numba must not drop it as dead); off-heap
memory and a bad PE raise the host call's exceptions."""

import pytest

from conftest import assert_all_ok, not_on_gpu, not_through_rma

pytest.importorskip("numba")
pytestmark = [
    not_on_gpu("@numba.njit device code runs on the host heap (the cpu and mpi backends)"),
    not_through_rma(
        "njit device calls reach the PEs of this node only (to others "
        "they raise: test_mpi_backend.py's njit test)"
    ),
]

PEER_ARRAY = """
    import numba
    import symmem.core.device.numba as dev

    @numba.njit
    def double_the_peers(a, pe):
        peer = dev.get_peer_array(a, pe)
        total = peer.sum()
        for i in range(peer.size):
            peer[i] = peer[i] * 2
        dev.quiet()
        return total

    @numba.njit
    def store_only(a, pe, value):
        dev.get_peer_array(a, pe)[0] = value  # nothing reads it here: must not be dropped

    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    right, left = (me + 1) % n, (me - 1) % n
    for dtype in ("int16", "float64"):
        a = nvshmem.array((1001,), dtype=dtype)
        a[:] = np.arange(1001, dtype=dtype) + me
        nvshmem.barrier_all()
        total = double_the_peers(a[1:1000], right)  # a slice: an offset into the heap
        nvshmem.barrier_all()
        want = (np.arange(1001, dtype=dtype) + me)
        want[1:1000] *= 2
        check_equal(a, want, f"{dtype} after the left PE doubled it")
        check(total == (np.arange(1, 1000, dtype=dtype) + right).sum(), f"sum {total}")
        nvshmem.free_array(a)
    a = nvshmem.array((4,), dtype="int16")
    a[:] = 0
    nvshmem.barrier_all()
    store_only(a, right, me + 7)
    nvshmem.barrier_all()
    check(a[0] == left + 7, f"a store through the peer's array: {a}")
    expect_raises(nvshmem.NvshmemInvalid, [f"[pe {me}] get_peer_array: pe {n} is out of range"],
                  double_the_peers, a, n)
    expect_raises(nvshmem.NvshmemInvalid, ["get_peer_array: array (address",
                                           "is not memory on the symmetric heap"],
                  double_the_peers, np.zeros(4, dtype="int16"), 0)
    expect_raises(nvshmem.NvshmemInvalid, ["get_peer_array: array is not a contiguous array"],
                  double_the_peers, a[::2], 0)
    nvshmem.barrier_all()
    nvshmem.free_array(a)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.parametrize("n", [1, 3])
def test_get_peer_array_reads_and_writes_the_peers_copy(run_pes, n):
    assert_all_ok(run_pes(n, PEER_ARRAY, timeout=180), n)
