"""init/finalize, init_status, get_version, my_pe/n_pes, Teams, barriers, and the
symmem.core alias, at 1..4 PEs."""
import pytest

import symmem
from conftest import assert_all_ok

N_PES = (1, 2, 3, 4)


def test_enum_values():
    Teams, S = symmem.Teams, symmem.InitStatus
    assert [(t.name, int(t)) for t in Teams] == [
        ("TEAM_INVALID", -1), ("TEAM_WORLD", 0), ("TEAM_SHARED", 1), ("TEAM_NODE", 2),
        ("TEAM_SAME_MYPE_NODE", 3), ("TEAM_SAME_GPU", 4), ("TEAM_GPU_LEADERS", 5)]
    assert (S.STATUS_NOT_INITIALIZED, S.STATUS_IS_BOOTSTRAPPED, S.STATUS_IS_INITIALIZED,
            S.STATUS_LIMITED_MPG, S.STATUS_FULL_MPG) == (0, 1, 2, 3, 4)
    assert hasattr(S, "STATUS_INVALID")
    assert int(S.STATUS_INVALID) not in (0, 1, 2, 3, 4)
    assert (int(symmem.SignalOp.SIGNAL_SET), int(symmem.SignalOp.SIGNAL_ADD)) == (9, 10)
    C = symmem.ComparisonType
    assert [(c.name, int(c)) for c in C] == [
        ("CMP_EQ", 0), ("CMP_NE", 1), ("CMP_GT", 2), ("CMP_LE", 3), ("CMP_LT", 4), ("CMP_GE", 5)]


def test_status_and_version_before_init():
    # Only queries here: this process never initialises symmem.
    assert symmem.init_status() == symmem.InitStatus.STATUS_NOT_INITIALIZED
    v = symmem.get_version()
    for field in ("openshmem_spec_version", "nvshmem4py_version", "libnvshmem_version",
                  "symmem_version", "backend"):
        assert isinstance(getattr(v, field), str), field
    assert v.symmem_version == symmem.__version__


def test_core_alias_module():
    import symmem.core as core
    assert core.core is core
    for name in ("array", "put", "get", "init", "finalize", "signal_wait", "Teams",
                 "NvshmemError", "NvshmemInvalid", "interop", "get_unique_id", "barrier_all"):
        assert hasattr(core, name), name
        assert hasattr(core.core, name), name
    assert core.core.array is symmem.array
    assert core.put is symmem.put


LIFECYCLE = """
    import re
    N = int(sys.argv[1])
    S = nvshmem.InitStatus
    check(nvshmem.init_status() == S.STATUS_NOT_INITIALIZED, "status before init")
    check(int(nvshmem.init_status()) == 0, "status before init is 0")
    nvshmem.init()
    nvshmem.init()  # a second init is harmless
    check(nvshmem.init_status() == S.STATUS_IS_INITIALIZED, "status after init")
    check(int(nvshmem.init_status()) == 2, "STATUS_IS_INITIALIZED == 2")

    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    check(me == int(os.environ["SYMMEM_RANK"]), f"my_pe {me} != launcher rank")
    check(n == N, f"n_pes {n} != {N}")
    check(isinstance(me, int) and isinstance(n, int), "my_pe/n_pes are ints")

    v = nvshmem.get_version()
    want = "gpu" if os.environ.get("SYMMEM_BACKEND") == "gpu" else "cpu"
    check(v.backend == want, f"backend {v.backend!r}, expected {want!r}")
    if want == "gpu":  # NVSHMEM's version, as it reports it
        check(re.fullmatch(r"[0-9]+[.][0-9]+[.][0-9]+", v.libnvshmem_version),
              f"libnvshmem_version {v.libnvshmem_version!r}")
    else:
        check(v.libnvshmem_version == "", f"libnvshmem_version {v.libnvshmem_version!r}")
    check(v.symmem_version == nvshmem.__version__, "symmem_version")
    check(v.nvshmem4py_version == v.symmem_version, "nvshmem4py_version is symmem's")
    check(isinstance(v.openshmem_spec_version, str) and v.openshmem_spec_version,
          "openshmem_spec_version")

    T = nvshmem.Teams
    check(nvshmem.team_my_pe(T.TEAM_WORLD) == me, "team_my_pe(TEAM_WORLD)")
    check(nvshmem.team_n_pes(T.TEAM_WORLD) == n, "team_n_pes(TEAM_WORLD)")
    check(nvshmem.team_my_pe(0) == me and nvshmem.team_n_pes(0) == n, "TEAM_WORLD as int")

    # Every PE writes its number into slot me of every PE's array.
    seen = nvshmem.array((n,), dtype="int64")
    seen[:] = -1
    nvshmem.barrier_all()
    for pe in range(n):
        nvshmem.p(seen[me:me + 1], me * 10 + 7, pe)
    nvshmem.barrier_all()
    check_equal(seen, np.arange(n) * 10 + 7, "every PE's number")
    nvshmem.barrier_all()  # everyone has checked before the next round writes

    # Barriers in all their forms, with data checked after each.
    for round_, (call, kwargs) in enumerate([
            (nvshmem.barrier_all, {}), (nvshmem.barrier_all, {"stream": None}),
            (nvshmem.sync_all, {}), (nvshmem.sync_all, {"stream": None})]):
        nvshmem.p(seen[me:me + 1], 100 * round_ + me, (me + 1) % n)
        nvshmem.quiet()
        call(**kwargs)
        prev = (me - 1) % n
        check(seen[prev] == 100 * round_ + prev, f"round {round_} via {call.__name__}")
        call(**kwargs)
    nvshmem.barrier_all(None)
    nvshmem.sync_all(None)

    nvshmem.free_array(seen)
    ok()
    nvshmem.finalize()
    nvshmem.finalize()  # a second finalize is harmless
    check(nvshmem.init_status() != S.STATUS_IS_INITIALIZED, "status after finalize")
"""


@pytest.mark.parametrize("n", N_PES)
def test_lifecycle(run_pes, n):
    assert_all_ok(run_pes(n, LIFECYCLE, args=[n]), n)


CORE_ALIAS = """
    import symmem.core as nvshmem
    nvshmem.init(initializer_method="auto")    # the launcher's environment, explicitly
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    if n != 3:
        raise AssertionError(f"PE {me}: n_pes {n}")
    a = nvshmem.core.array((4,), dtype="int32")
    b = nvshmem.core.array((4,), dtype="int32")
    b[:] = me + 1
    nvshmem.core.barrier_all()
    nvshmem.core.put(a, b, (me + 1) % n)
    nvshmem.core.barrier_all()
    prev = (me - 1) % n
    if not (a == prev + 1).all():
        raise AssertionError(f"PE {me}: {a}")
    nvshmem.core.free_array(a)
    nvshmem.core.free_array(b)
    print(f"PE {me} OK")
    nvshmem.core.finalize()
"""


def test_core_alias_program(run_pes):
    assert_all_ok(run_pes(3, CORE_ALIAS), 3)
