"""One vocabulary (include/symmem/vocabulary.h): every name and code the
extension exports is the header's list as C compiles it, the codes are the
ABI they always were, and what a backend can do is a capability, never a
comparison with its name."""

import ast
import json
import re
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
    # the op symmem_dev_atomic32 / 64 take (device_rma.cuh's switch)
    "DEVICE_ATOMICS": {
        "fetch": 0,
        "set": 1,
        "swap": 2,
        "compare_swap": 3,
        "fetch_add": 4,
        "fetch_and": 5,
        "fetch_or": 6,
        "fetch_xor": 7,
        "fetch_add_float": 8,
    },
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
    printf("%s[\"%s\", %d, %d, \"%s\", %d]", COMMA(first), name, code, size, nvshmem, \
           SYMMEM_DTYPE_##NAME == code && (int)sizeof(ctype) == size), first = 0;
#define OP(NAME, name, code, bitwise, combine) \
    printf("%s[\"%s\", %d, %d]", COMMA(first), name, code, SYMMEM_OP_##NAME == code), first = 0;
#define ATOMIC(NAME, name, code, operands, fetches, floats, device) \
    printf("%s[\"%s\", %d, %d, %d, %d, %d]", COMMA(first), name, code, fetches, floats, \
           SYMMEM_DEV_ATOMIC_##device, SYMMEM_ATOMIC_##NAME == code), first = 0;
#define DEV_ATOMIC(NAME, name, code) \
    printf("%s[\"%s\", %d, %d]", COMMA(first), name, code, SYMMEM_DEV_ATOMIC_##NAME == code), \
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
    LIST("DEVICE_ATOMICS", SYMMEM_DEVICE_ATOMICS, DEV_ATOMIC)
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
    assert _symmem.DTYPES == {name: size for name, _, size, _, _ in lists["DTYPES"]}
    assert list(_symmem.DTYPES) == [
        name for name, *_ in sorted(lists["DTYPES"], key=lambda r: r[1])
    ]
    assert _symmem.DTYPE_CODES == {name: code for name, code, *_ in lists["DTYPES"]}
    assert _symmem.DTYPE_NVSHMEM_NAMES == {name: nv for name, _, _, nv, _ in lists["DTYPES"]}
    assert _symmem.REDUCE_OPS == tuple(
        name for name, *_ in sorted(lists["REDUCE_OPS"], key=lambda r: r[1])
    )
    assert [name for name, _ in _symmem.ATOMIC_OPS] == [
        name for name, *_ in sorted(lists["ATOMIC_OPS"], key=lambda r: r[1])
    ]
    assert _symmem.ATOMIC_TRAITS == {
        name: {"fetches": bool(fetches), "floats": bool(floats), "device_op": device}
        for name, _, fetches, floats, device, _ in lists["ATOMIC_OPS"]
    }
    assert list(_symmem.ATOMIC_TRAITS) == [name for name, _ in _symmem.ATOMIC_OPS]
    for table in ("SIGNAL_OPS", "COMPARISONS", "CALL_KINDS", "CAPABILITIES", "DEVICE_ATOMICS"):
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


def test_each_atomic_runs_as_the_device_instruction_of_its_meaning():
    # the non-fetch forms as their fetch forms (the old value dropped), inc as
    # fetch_add (of 1), fetch as a read
    device_names = {code: name for name, code in _symmem.DEVICE_ATOMICS.items()}
    for name, traits in _symmem.ATOMIC_TRAITS.items():
        op = name.removeprefix("atomic_").replace("inc", "add")
        if op not in _symmem.DEVICE_ATOMICS:
            op = "fetch_" + op
        assert device_names[traits["device_op"]] == op, name


PACKAGE = ROOT / "python" / "symmem"


def _package_files(under=PACKAGE):
    return [p for p in sorted(under.rglob("*.py")) if "_mpi_sources" not in p.parts]


def _vocabulary_codes():
    """Each table of the vocabulary as {name: code}, as the extension exports it."""
    return {
        "DTYPE_CODES": _symmem.DTYPE_CODES,
        "REDUCE_OPS": {name: code for code, name in enumerate(_symmem.REDUCE_OPS)},
        "ATOMIC_OPS": {name: code for code, (name, _) in enumerate(_symmem.ATOMIC_OPS)},
        "ATOMIC_TRAITS' device_op": {
            name: traits["device_op"] for name, traits in _symmem.ATOMIC_TRAITS.items()
        },
        "DEVICE_ATOMICS": _symmem.DEVICE_ATOMICS,
        "SIGNAL_OPS": _symmem.SIGNAL_OPS,
        "COMPARISONS": _symmem.COMPARISONS,
        "CALL_KINDS": _symmem.CALL_KINDS,
    }


def test_no_package_file_writes_the_vocabulary_s_codes_again():
    # A dict literal that maps two or more of a table's names to their codes
    # is a hand-written copy (the device library's atomic ops were one, in
    # two files): it must be made from the extension's table instead.
    copies = []
    for path in _package_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Dict):
                continue
            pairs = {
                k.value: v.value
                for k, v in zip(node.keys, node.values)
                if isinstance(k, ast.Constant)
                and isinstance(k.value, str)
                and isinstance(v, ast.Constant)
                and type(v.value) is int
            }
            for table, codes in _vocabulary_codes().items():
                same = [name for name, code in pairs.items() if codes.get(name) == code]
                if len(same) >= 2:
                    copies.append(f"{path.relative_to(ROOT)}:{node.lineno}: {table} {same}")
    assert not copies, "make these from _symmem's tables:\n" + "\n".join(copies)


def test_no_device_module_writes_an_atomic_op_s_traits_again():
    # which atomics fetch or take floats, and the device library's op numbers
    # (FLOAT_ADD = 8 was one), come from _symmem.ATOMIC_TRAITS and
    # DEVICE_ATOMICS; a literal set of the names of one trait is a copy.
    traits = _symmem.ATOMIC_TRAITS
    columns = {
        trait: {name for name, row in traits.items() if row[trait]}
        for trait in ("fetches", "floats")
    }
    numbers = {name.replace("_", "") for name in _symmem.DEVICE_ATOMICS} | {"floatadd"}
    copies = []
    for path in _package_files(PACKAGE / "device"):
        for node in ast.walk(ast.parse(path.read_text())):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
                names = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                copies += [f"{where}: {t}" for t, column in columns.items() if names == column]
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for target in node.targets:
                    name = getattr(target, "id", "").lower().replace("_", "")
                    if type(node.value.value) is int and name in numbers:
                        copies.append(f"{where}: {target.id} = {node.value.value}")
    assert not copies, "read these from _symmem.ATOMIC_TRAITS:\n" + "\n".join(copies)


# How C and CUDA code would write a collective's kind as a bare number: a
# comparison with one, an int parameter of the gpu backend, a call name
# followed by one, or a define of its own per collective.
_KIND_NAMES = "|".join(_symmem.CALL_KINDS)
BARE_KINDS = {
    "compared with a number": (re.compile(r"\bkind\s*[!=<>]=?\s*\d"), "all"),
    "an int": (re.compile(r"\bint\s+kind\b"), "gpu"),
    # move_bytes(g, "alltoall", 0, team, ...)
    "a number after the call's name": (re.compile(r'"(?:%s)",\s*\d+,\s*team' % _KIND_NAMES), "all"),
    # #define SYMMEM__FCOLLECT 0
    "numbered here": (
        re.compile(r"#\s*define\s+(?:\w+__)?(?:%s)\s+\d" % _KIND_NAMES.upper()),
        "all",
    ),
}


def test_the_gpu_code_names_a_collective_by_the_vocabulary_s_kind():
    # The gpu backend's byte movers took kinds 0, 1, 2 of their own, and the
    # device library numbered its pushes itself: SYMMEM_CALL_* (calls.h) and
    # device_collectives.cuh's SYMMEM__CALL_* are vocabulary.h's codes.
    gpu = ROOT / "src" / "backends" / "gpu"
    files = [p for p in sorted(gpu.rglob("*")) if p.suffix in (".c", ".h", ".cu", ".cuh")]
    files += sorted((ROOT / "include" / "symmem").glob("*.cuh"))
    found = []
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for what, (pattern, where) in BARE_KINDS.items():
                if pattern.search(line) and (where == "all" or gpu in path.parents):
                    found.append(f"{path.relative_to(ROOT)}:{number}: kind {what}: {line.strip()}")
    assert not found, "\n".join(found)


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
