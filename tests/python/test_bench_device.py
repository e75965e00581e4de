"""The bench's device operations (gpu backend), what can be checked without a
GPU: which runs they join, where they are refused, their sizes, and the
device and Triton tables built from what the device workers print."""

import os
import sys

import pytest

from bench_options import _parse
from symmem.bench import plan


def test_device_operations_join_the_default_run_on_gpus_with_two_pes():
    every_host, every_device = ",".join(plan.OPS), ",".join(plan.DEVICE_OPS)
    # on the gpu backend the atomic and symmem's init + finalize too
    gpu_host = ",".join([*plan.OPS, *plan.ATOMIC_OPS, *plan.INIT_OPS])
    opts = _parse("--backend", "gpu", "-n", "2")
    assert (opts.ops, opts.device_ops) == (gpu_host, every_device)
    for argv, host in (
        (("--backend", "gpu", "-n", "1"), gpu_host),
        (("--backend", "cpu", "-n", "2"), every_host),
    ):
        opts = _parse(*argv)
        assert (opts.ops, opts.device_ops) == (host, ""), argv
    opts = _parse("--backend", "gpu", "--ops", "device")
    assert (opts.ops, opts.device_ops) == ("", every_device)
    # names and groups mix; each operation once, in the order first named
    opts = _parse("--backend", "gpu", "-n", "3", "--ops", "barrier,device_barrier,host")
    assert opts.ops == "barrier," + ",".join(op for op in plan.OPS if op != "barrier")
    assert opts.device_ops == "device_barrier"


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ("--backend", "cpu", "--ops", "put,device_put"),
            "--ops: device_put: device operations run on the gpu backend (on the cpu backend the "
            "device calls are the 'symmem njit' library",
        ),
        (
            ("--backend", "gpu", "-n", "1", "--ops", "device_p_lat"),
            "--ops: device_p_lat: device operations need 2 PEs or more (PE 0 puts to PE 1); got -n 1",
        ),
        (
            ("--backend", "gpu", "--ops", "device,teleport"),
            "--ops: unknown teleport; choose from host, device, triton, cute, init, put,",
        ),
    ],
)
def test_device_operations_where_they_cannot_run_are_refused(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        _parse(*argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_device_put_sizes_keep_within_1k_to_64m():
    assert plan.sizes("device_put", 8, 1 << 30, 2) == [1 << s for s in range(10, 27, 2)]
    assert plan.sizes("device_put_grid", 3000, 1 << 20, 2) == [
        3000,
        12000,
        48000,
        192000,
        768000,
        1 << 20,
    ]
    assert plan.sizes("device_put", 128 << 20, 1 << 30, 2) == []
    assert plan.sizes("device_put_signal", 64, 1 << 20, 2) == [8]
    assert plan.sizes("device_barrier_block", 64, 1 << 20, 2) == [0]
    # a put kernel moves 1 GiB, in at most 16384 puts
    assert [plan.device_reps(s) for s in (1 << 10, 1 << 16, 1 << 20, 64 << 20)] == [
        16384,
        16384,
        1024,
        16,
    ]


@pytest.mark.parametrize("size", [1 << 10, 3000, 1 << 20, 16 << 20, 64 << 20])
def test_a_grid_put_s_slices_start_16_byte_aligned_and_cover_the_size(size):
    programs = 264  # 2 a SM of an H200
    chunk = plan.device_chunk(size, programs)
    assert chunk % 16 == 0
    covered = sum(max(0, min(chunk, size - i * chunk)) for i in range(programs))
    assert covered == size
    assert chunk - size / programs < 16  # an even share, give or take the rounding


# What the two device workers print (PE 0), two rounds, with other output between.
CANNED_DEVICE_OUTPUT = [
    '{"lib": "symmem device", "op": "init", "seconds": 2.5, "n_pes": 2}',
    "some line a worker printed",
    '{"lib": "symmem device", "op": "device_put", "bytes": 1048576, "us": 23.3, "round": 1}',
    '{"lib": "symmem host", "op": "device_put", "bytes": 1048576, "us": 10.0, "round": 1}',
    '{"lib": "nvshmem device", "op": "device_put", "bytes": 1048576, "us": 24.465, "round": 1}',
    '{"lib": "symmem device", "op": "device_put", "bytes": 1048576, "us": 23.9, "round": 2}',
    '{"lib": "nvshmem device", "op": "device_put", "bytes": 1048576, "us": 25.0, "round": 2}',
    '{"lib": "symmem device", "op": "device_put_signal", "bytes": 8, "us": 2.9, "round": 1}',
    '{"lib": "symmem host", "op": "device_put_signal", "bytes": 8, "us": 11.6, "round": 1}',
    '{"lib": "nvshmem device", "op": "device_put_signal", "bytes": 8, "us": 2.8, "round": 1}',
    '{"lib": "symmem device", "op": "device_put_signal", "bytes": 8, "us": 3.02, "round": 2}',
    '{"lib": "nvshmem device", "op": "device_put_signal", "bytes": 8, "us": 2.82, "round": 2}',
    '{"lib": "symmem device", "op": "device_barrier", "bytes": 0, "us": 3.49, "round": 1}',
    '{"lib": "symmem host", "op": "device_barrier", "bytes": 0, "us": 12.33, "round": 1}',
]


def test_the_device_table_has_one_line_per_operation_with_both_ratios(tmp_path):
    from symmem.bench import libraries, report

    script = "import sys; sys.stdout.write(sys.argv[1])"
    with open(tmp_path / "log", "w") as log:
        records = list(
            libraries.stream_records(
                [sys.executable, "-c", script, "\n".join(CANNED_DEVICE_OUTPUT) + "\n"],
                dict(os.environ),
                log,
            )
        )
    assert len(records) == len(CANNED_DEVICE_OUTPUT) - 1  # the other line went to the log
    assert "some line a worker printed" in (tmp_path / "log").read_text()
    lines = report.text_tables(records, 2).splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("== device (2 PEs): "))
    assert lines[title + 1].split() == [
        "operation",
        "size",
        "symmem",
        "device",
        "us",
        "nvshmem",
        "device",
        "us",
        "symmem",
        "host",
        "us",
        "device",
        "GB/s",
        "nvshmem",
        "/",
        "device",
        "host",
        "/",
        "device",
    ]
    # each library's fastest round; GB/s of symmem's device put; the other's time over
    # symmem device's: NVSHMEM's put 1.05x slower, the host's put 0.43x (faster)
    assert lines[title + 2].split() == [
        "device_put",
        "1M",
        "23.300",
        "24.465",
        "10.000",
        "45.00",
        "1.05x",
        "0.43x",
    ]
    # symmem's ping-pong 3.6% behind NVSHMEM's, within its own 4.1% spread between rounds
    assert lines[title + 3].split() == [
        "device_put_signal",
        "8",
        "2.900",
        "2.800",
        "11.600",
        "0.97x",
        "~",
        "4.00x",
    ]
    # no nvshmem device line for the barrier: "-", and no ratio
    assert lines[title + 4].split() == ["device_barrier", "3.490", "-", "12.330", "3.53x"]
    assert "== device_put" not in "\n".join(lines)  # no per-library table for device ops
    md = report.markdown(records, 2)
    assert "| device_put | 1M | 23.300 | 24.465 | 10.000 | 45.00 | 1.05x | 0.43x |" in md
    assert "| device_barrier |  | 3.490 | - | 12.330 |  |  | 3.53x |" in md
    assert "| symmem device | 2.50 |" in md  # its start-up
    rows = {(r["op"], r["lib"]): r for r in report.rows(records, 2)}
    assert rows["device_put", "symmem device"]["symmem_speedup"] is None  # the baseline
    assert abs(rows["device_put", "nvshmem device"]["symmem_speedup"] - 1.05) < 1e-9


def test_the_triton_table_puts_the_two_engines_side_by_side():
    from symmem.bench import report

    records = [
        dict(lib="symmem triton", op="triton_put", bytes=1 << 20, us=20.0, round=1),
        dict(lib="nvshmem triton", op="triton_put", bytes=1 << 20, us=21.0, round=1),
        dict(lib="symmem triton", op="triton_put_signal", bytes=8, us=2.0, round=1),
        dict(lib="nvshmem triton", op="triton_put_signal", bytes=8, us=1.9, round=1),
        dict(lib="symmem device", op="device_put", bytes=1 << 20, us=23.3, round=1),
    ]
    lines = report.text_tables(records, 2).splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("== triton (2 PEs): "))
    assert lines[title + 1].split() == [
        "operation",
        "size",
        "symmem",
        "triton",
        "us",
        "nvshmem",
        "triton",
        "us",
        "symmem",
        "triton",
        "GB/s",
        "nvshmem",
        "/",
        "symmem",
    ]
    # symmem's engine's bandwidth; NVSHMEM's time over symmem's
    assert lines[title + 2].split() == ["triton_put", "1M", "20.000", "21.000", "52.43", "1.05x"]
    assert lines[title + 3].split() == ["triton_put_signal", "8", "2.000", "1.900", "0.95x"]
    # the Numba kernels keep their own table, without the Triton rows
    device = next(i for i, line in enumerate(lines) if line.startswith("== device (2 PEs): "))
    assert lines[device + 2].split()[:3] == ["device_put", "1M", "23.300"]
    assert "triton" not in lines[device + 2]
    assert "| triton_put | 1M | 20.000 | 21.000 | 52.43 | 1.05x |" in report.markdown(records, 2)


def test_each_device_library_gets_only_the_operations_it_runs():
    from symmem.bench import libraries
    from symmem.bench.__main__ import choose_libraries

    opts = _parse("--backend", "gpu", "-n", "2", "--ops", "triton_put,device_barrier")
    assert libraries.device_ops("symmem triton", opts) == "triton_put"
    assert libraries.device_ops("nvshmem device", opts) == "device_barrier"
    opts = _parse(
        "--backend", "gpu", "-n", "2", "--ops", "triton", "--libs", "symmem device,symmem triton"
    )
    chosen, skipped = choose_libraries(opts)
    assert skipped["symmem device"] == "--ops has no device operation"
    assert [name for name, _ in chosen] in ([], ["symmem triton"])  # [] where it cannot run
    assert "symmem triton" in skipped or chosen
