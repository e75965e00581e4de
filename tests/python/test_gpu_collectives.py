"""The gpu backend's collectives on 2+ GPUs: symmem's own against NumPy's
answer on every team and stream, a PE dying inside one, and collectives that
do not match (each PE raises) or wait for each other on the GPU."""

import pytest

from gpu_jobs import GPU_DIR, _assert_all_ok, _gpus_for, _launch, needs_gpus, with_symmem_run_only


MODES = ["symmem", "one_shot", "two_shot", "push_one_shot", "push_two_shot"]


@needs_gpus
@pytest.mark.parametrize(
    "mode, n",
    # every mode at 2 and 4 PEs; 8 PEs (on one GPU: the symmem engine) in the default
    [(mode, n) for n in (2, 4) for mode in MODES] + [("symmem", 8)],
)
def test_symmem_s_own_collectives_give_numpy_s_answer_on_every_team_and_stream(mode, n):
    _gpus_for(n)
    env = {"SYMMEM_BACKEND": "gpu", "SYMMEM_GPU_COLLECTIVES": mode}
    if mode.startswith("push"):  # a staging half of 128 KiB: sizes from a few KiB take rounds
        env["SYMMEM_GPU_STAGING"] = "256K"
    # PEs sharing a GPU take turns: a time slice for each of its thousands of
    # collectives, more with more PEs
    result = _launch(n, GPU_DIR / "collectives.py", env=env, timeout=200 if n <= 2 else 150 * n)
    _assert_all_ok(result, n, mode)


@needs_gpus
@with_symmem_run_only
@pytest.mark.parametrize("mode", ["stream", "blocking"])
@pytest.mark.parametrize("call", ["reduce", "fcollect", "barrier"])
def test_a_pe_dying_inside_a_collective_ends_it_on_the_others(call, mode):
    result = _launch(
        2,
        GPU_DIR / "dead_in_collective.py",
        call,
        mode,
        env={"SYMMEM_BACKEND": "gpu", "SYMMEM_TIMEOUT": "60"},
    )
    out = result.stdout + result.stderr
    assert "PE 0 ended after" in result.stdout, out
    if mode == "stream":  # the kernel trapped: the stream's synchronize raised
        assert f"a kernel stopped in the device call {call}: PE 1 died" in out, out
    else:
        assert f"[pe 0] {call}: PE 1 exited with code 5" in result.stdout, out
    assert "PE 1 (pid" in result.stderr and "exited with code 5" in result.stderr, out
    # and the GPUs serve the next job
    _assert_all_ok(_launch(2, GPU_DIR / "barrier.py", env={"SYMMEM_BACKEND": "gpu"}), 2)


MISMATCH_CASES = [
    "reduce_count",
    "reduce_dtype",
    "reduce_op",
    "broadcast_root",
    "team",
    "reduce_vs_barrier",
    "stream",
]


@needs_gpus
@with_symmem_run_only
@pytest.mark.parametrize("case", MISMATCH_CASES)
def test_mismatched_collectives_raise_on_every_gpu_pe(case):
    # each case in a fresh job: a collective launched before the mismatch
    # was seen may still wait on the GPU
    result = _launch(
        2, GPU_DIR / "mismatch.py", case, env={"SYMMEM_BACKEND": "gpu", "SYMMEM_TIMEOUT": "60"}
    )
    _assert_all_ok(result, 2, f"mismatch: {case}")
    for pe in range(2):
        assert f"PE {pe} OK (mismatch: {case}" in result.stdout, result.stdout + result.stderr
        took = float(result.stdout.split(f"PE {pe} OK (mismatch: {case}, after ")[1].split(" s")[0])
        assert took < 30, result.stdout  # long before SYMMEM_TIMEOUT


@needs_gpus
@with_symmem_run_only
def test_stream_collectives_that_wait_for_each_other_on_the_gpu_end_the_wait():
    # PE 0 in reduce on a split team, PE 1 in reduce on WORLD, each on a
    # stream, both then in the stream's synchronize: after 10 s of no
    # collective call, each PE names the cycle and stops its GPU work
    result = _launch(
        2,
        GPU_DIR / "mismatch.py",
        "team_stream",
        env={"SYMMEM_BACKEND": "gpu", "SYMMEM_TIMEOUT": "60"},
    )
    _assert_all_ok(result, 2, "mismatch: team_stream")
    for pe in range(2):
        assert f"PE {pe} OK (mismatch: team_stream, after " in result.stdout, (
            result.stdout + result.stderr
        )
        took = float(
            result.stdout.split(f"PE {pe} OK (mismatch: team_stream, after ")[1].split(" s")[0]
        )
        assert 9 < took < 30, result.stdout  # STUCK_AFTER is 10 s
        assert (
            f"[pe {pe}] symmem: collectives made on streams wait for each other on the "
            f"GPU: PE {pe} is in reduce(sum, float32, 8 elements, team "
        ) in result.stderr, result.stderr
    for words in (
        "PE 0 is in reduce(sum, float32, 8 elements, team ",
        "PE 1 is in reduce(sum, float32, 8 elements, team WORLD), waiting for PE 0",
    ):
        assert words in result.stderr, result.stderr
    assert "team WORLD), waiting for PE 1" not in result.stderr, result.stderr  # PE 0's is split


@needs_gpus
def test_matched_collectives_raise_nothing_on_the_gpu():
    result = _launch(
        2, GPU_DIR / "mismatch.py", "matched", env={"SYMMEM_BACKEND": "gpu", "SYMMEM_TIMEOUT": "60"}
    )
    _assert_all_ok(result, 2, "mismatch: matched, 200 collectives")
