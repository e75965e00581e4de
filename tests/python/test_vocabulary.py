"""One vocabulary (include/symmem/vocabulary.h): every name and code the
extension exports is the header's list as C compiles it, the codes are the
ABI they always were, and what a backend can do is a capability, never a
comparison with its name."""

import json
import subprocess
import sysconfig
from pathlib import Path

import pytest
from conftest import assert_all_ok

import symmem
from symmem import _symmem

ROOT = Path(__file__).resolve().parents[2]

# The codes are ABI: the library's, device code's and Python's numbers.
ABI = {
    "DTYPE_CODES": {
        "bool": 0,
        "int8": 1,
        "int16": 2,
        "int32": 3,
        "int64": 4,
        "uint8": 5,
        "uint16": 6,
        "uint32": 7,
        "uint64": 8,
        "float16": 9,
        "bfloat16": 10,
        "float32": 11,
        "float64": 12,
    },
    "SIGNAL_OPS": {"SIGNAL_SET": 9, "SIGNAL_ADD": 10},
    "COMPARISONS": {"CMP_EQ": 0, "CMP_NE": 1, "CMP_GT": 2, "CMP_LE": 3, "CMP_LT": 4, "CMP_GE": 5},
}

# Each list's rows printed as JSON [name, code, ...] by a C program over the header.
PROGRAM = r"""
#include <stdio.h>
#include "symmem/vocabulary.h"
#define COMMA(first) (first ? "" : ",")
int main(void)
{
    int first;
    printf("{");
#define LIST(title, list, row) first = 1; printf("\"%s\": [", title); list(row) printf("],\n");
#define DTYPE(NAME, name, code, size, ctype, nvshmem, kind) \
    printf("%s[\"%s\", %d, %d, %d]", COMMA(first), name, code, size, \
           SYMMEM_DTYPE_##NAME == code && (int)sizeof(ctype) == size), first = 0;
#define OP(NAME, name, code, bitwise, combine) \
    printf("%s[\"%s\", %d, %d]", COMMA(first), name, code, SYMMEM_OP_##NAME == code), first = 0;
#define ATOMIC(NAME, name, code, operands, fetches, floats) \
    printf("%s[\"%s\", %d, %d]", COMMA(first), name, code, SYMMEM_ATOMIC_##NAME == code), \
        first = 0;
#define SIGNAL(NAME, name, code) \
    printf("%s[\"%s\", %d, %d]", COMMA(first), name, code, SYMMEM_SIGNAL_##NAME == code), \
        first = 0;
#define CMP(NAME, name, code, op) \
    printf("%s[\"%s\", %d, %d]", COMMA(first), name, code, SYMMEM_CMP_##NAME == code), first = 0;
#define KIND(NAME, name, code, shape, moves_data) \
    printf("%s[\"%s\", %d, 1]", COMMA(first), name, code), first = 0;
#define CAP(NAME, name, bit, help) \
    printf("%s[\"%s\", %d, %d]", COMMA(first), name, SYMMEM_CAP_##NAME, \
           SYMMEM_CAP_##NAME == 1 << bit), first = 0;
    LIST("DTYPES", SYMMEM_DTYPES, DTYPE)
    LIST("REDUCE_OPS", SYMMEM_REDUCE_OPS, OP)
    LIST("ATOMIC_OPS", SYMMEM_ATOMIC_OPS, ATOMIC)
    LIST("SIGNAL_OPS", SYMMEM_SIGNAL_OPS, SIGNAL)
    LIST("COMPARISONS", SYMMEM_COMPARISONS, CMP)
    LIST("CALL_KINDS", SYMMEM_CALL_KINDS, KIND)
    LIST("CAPABILITIES", SYMMEM_CAPABILITIES, CAP)
    printf("\"end\": []}");
    return 0;
}
"""


@pytest.fixture(scope="module")
def header_lists(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vocabulary")
    (folder / "lists.c").write_text(PROGRAM)
    cc = sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc"
    subprocess.run(
        [
            cc,
            "-std=gnu11",
            "-Wall",
            "-Werror",
            "-I",
            str(ROOT / "include"),
            "-o",
            str(folder / "lists"),
            str(folder / "lists.c"),
        ],
        check=True,
    )
    out = subprocess.run([str(folder / "lists")], capture_output=True, text=True, check=True)
    lists = json.loads(out.stdout)
    for title, rows in lists.items():  # each enum constant is its row's code
        assert all(row[-1] == 1 for row in rows), (title, rows)
    return lists


def test_every_exported_table_is_the_header_s_list(header_lists):
    lists = header_lists
    assert _symmem.DTYPES == {name: size for name, _, size, _ in lists["DTYPES"]}
    assert list(_symmem.DTYPES) == [
        name for name, *_ in sorted(lists["DTYPES"], key=lambda r: r[1])
    ]
    assert _symmem.DTYPE_CODES == {name: code for name, code, *_ in lists["DTYPES"]}
    assert _symmem.REDUCE_OPS == tuple(
        name for name, *_ in sorted(lists["REDUCE_OPS"], key=lambda r: r[1])
    )
    assert [name for name, _ in _symmem.ATOMIC_OPS] == [
        name for name, *_ in sorted(lists["ATOMIC_OPS"], key=lambda r: r[1])
    ]
    for table in ("SIGNAL_OPS", "COMPARISONS", "CALL_KINDS", "CAPABILITIES"):
        assert getattr(_symmem, table) == {name: code for name, code, _ in lists[table]}, table


def test_the_codes_are_the_abi_they_always_were():
    for table, codes in ABI.items():
        assert getattr(_symmem, table) == codes, table
    assert _symmem.REDUCE_OPS == ("sum", "min", "max", "prod", "and", "or", "xor")
    assert [name for name, _ in _symmem.ATOMIC_OPS] == [
        "atomic_fetch",
        "atomic_set",
        "atomic_inc",
        "atomic_fetch_inc",
        "atomic_add",
        "atomic_fetch_add",
        "atomic_and",
        "atomic_fetch_and",
        "atomic_or",
        "atomic_fetch_or",
        "atomic_xor",
        "atomic_fetch_xor",
        "atomic_swap",
        "atomic_compare_swap",
    ]
    # the Python enums are made from the same tables
    assert {m.name: m.value for m in symmem.SignalOp} == _symmem.SIGNAL_OPS
    assert {m.name: m.value for m in symmem.ComparisonType} == _symmem.COMPARISONS


def test_every_capability_is_one_bit_with_a_name():
    bits = list(_symmem.CAPABILITIES.values())
    assert all(b > 0 and b & (b - 1) == 0 for b in bits) and len(set(bits)) == len(bits)
    assert set(_symmem.CAPABILITIES) >= {
        "device_memory",
        "peer_load_store",
        "host_rma",
        "device_calls",
        "stream_ordered",
        "multicast",
        "spans_hosts",
        "mpi_processes",
    }


# in CAPABILITIES' order
CPU_CAPABILITIES = ("peer_load_store", "host_rma")
GPU_CAPABILITIES = (
    "device_memory",
    "peer_load_store",
    "device_calls",
    "stream_ordered",
    "spans_hosts",
)
# its PEs are MPI processes (mpirun starts them; init can take a communicator),
# and nothing else: its RMA calls can wait (the GIL is let go), peers' heaps
# load and store on one node only, and it spans hosts through MPI
# (src/backends/mpi/ops.c)
MPI_CAPABILITIES = ("mpi_processes",)


def test_before_init_no_backend_can_anything():
    assert not _symmem.initialized() and _symmem.capabilities() == ()
    # the launcher's preview says what the backend it would choose can do
    assert _symmem.launcher(backend="cpu")["capabilities"] == CPU_CAPABILITIES


CAPABILITIES_WHILE_RUNNING = """
import symmem._symmem as S
nvshmem.init()
me = nvshmem.my_pe()
expected = {"cpu": %r, "gpu": %r, "mpi": %r}[S.backend_name()]
check_equal(S.capabilities(), expected, "capabilities()")
nvshmem.finalize()
check_equal(S.capabilities(), (), "capabilities() after finalize")
print(f"PE {me} OK", flush=True)
"""


@pytest.mark.parametrize("n", [1, 2])
def test_the_running_backend_s_capabilities(run_pes, n):
    # the gpu backend (where the suite runs on it) keeps its heap on the GPU,
    # runs device code and stream-ordered calls and spans hosts; the mpi
    # backend's PEs are MPI processes
    code = CAPABILITIES_WHILE_RUNNING % (CPU_CAPABILITIES, GPU_CAPABILITIES, MPI_CAPABILITIES)
    assert_all_ok(run_pes(n, code), n)
