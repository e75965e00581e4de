"""One layout for the host and the device (include/symmem/device_layout.h):
the numbers the extension exports for the code that cannot include the
header (symmem.device.triton's engine, Numba's njit checks) are the
header's as C, nvcc and NVRTC compile it, and that code takes them from the
extension instead of writing them down; the error record is written in one
set of steps (device_primitives.cuh's symmem__fail_at, and the PTX of
symmem.device._error_record for Triton), and the CUDA C's memory-model
primitives are device_primitives.cuh's alone."""

import ast
import ctypes
import json
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from symmem import _symmem

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "include" / "symmem" / "device_layout.h"

# table key -> (C type, field) for the offsets, "sizeof" for sizes; the rest
# are macros of the header.
STRUCTS = {
    "DEVICE_STATE_LAYOUT": (
        "symmem_device_state_t",
        {"consts_copy": None, "MAGIC": None, "VERSION": None, "HOST_MAPPED": None},
    ),
    "DEVICE_CONSTS_LAYOUT": ("symmem_device_consts_t", {"PEERS": None}),
}
MACROS = {
    ("DEVICE_STATE_LAYOUT", "consts_copy"): "SYMMEM_DEVICE_CONSTS_COPY_OFFSET",
    ("DEVICE_STATE_LAYOUT", "MAGIC"): "SYMMEM_DEVICE_STATE_MAGIC",
    ("DEVICE_STATE_LAYOUT", "VERSION"): "SYMMEM_DEVICE_STATE_VERSION",
    ("DEVICE_STATE_LAYOUT", "HOST_MAPPED"): "SYMMEM_DEVICE_HOST_MAPPED",
    ("DEVICE_CONSTS_LAYOUT", "PEERS"): "SYMMEM_DEVICE_CONST_PEERS",
    ("DEVICE_LAYOUT", "max_teams"): "SYMMEM_DEV_MAX_TEAMS",
    ("DEVICE_LAYOUT", "sync_word"): "SYMMEM_DEVICE_SYNC_WORD",
    ("DEVICE_LAYOUT", "spins"): "SYMMEM_DEV_SPINS",
    ("DEVICE_LAYOUT", "error_call_bytes"): "sizeof(((symmem_device_error_t *)0)->call)",
}
PREFIXES = {"team_": "symmem_device_team_t", "error_": "symmem_device_error_t"}


def expressions():
    """(table, key) -> the C expression of the header that gives its value."""
    found = {}
    for table in ("DEVICE_STATE_LAYOUT", "DEVICE_CONSTS_LAYOUT", "DEVICE_LAYOUT"):
        for key in getattr(_symmem, table):
            if (table, key) in MACROS:
                found[table, key] = MACROS[table, key]
            elif table == "DEVICE_LAYOUT" and key.startswith(("ERR_", "WAIT_")):
                found[table, key] = "SYMMEM_DEV_" + key
            elif table == "DEVICE_LAYOUT":
                prefix = next(p for p in PREFIXES if key.startswith(p))
                field = key[len(prefix) :]
                found[table, key] = (
                    f"sizeof({PREFIXES[prefix]})"
                    if field == "size"
                    else f"__builtin_offsetof({PREFIXES[prefix]}, {field})"
                )
            else:
                struct = STRUCTS[table][0]
                found[table, key] = (
                    f"sizeof({struct})" if key == "size" else f"__builtin_offsetof({struct}, {key})"
                )
    return found


def test_every_exported_number_is_the_header_s_as_c_compiles_it(tmp_path):
    found = expressions()
    prints = "".join(
        f'    printf("{"," if i else ""}%llu", (unsigned long long)({expr}));\n'
        for i, expr in enumerate(found.values())
    )
    program = tmp_path / "layout.c"
    program.write_text(
        '#include <stdio.h>\n#include "symmem/device_layout.h"\n'
        'int main(void)\n{\n    printf("[");\n' + prints + '    printf("]");\n    return 0;\n}\n'
    )
    cc = sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc"
    subprocess.run(
        [
            cc,
            "-std=gnu11",
            "-I",
            str(ROOT / "include"),
            "-o",
            str(tmp_path / "layout"),
            str(program),
        ],
        check=True,
    )
    values = json.loads(
        subprocess.run(
            [str(tmp_path / "layout")], capture_output=True, text=True, check=True
        ).stdout
    )
    assert len(values) == len(found) > 40
    for ((table, key), expr), value in zip(found.items(), values):
        assert getattr(_symmem, table)[key] == value, f"_symmem.{table}[{key!r}]: {expr}"


def _nvcc():
    for base in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if base and os.access(os.path.join(base, "bin", "nvcc"), os.X_OK):
            return os.path.join(base, "bin", "nvcc")
    return shutil.which("nvcc")


def asserts(found, sizes_only):
    out = ""
    for (table, key), expr in found.items():
        if sizes_only and "offsetof" in expr:
            continue
        value = getattr(_symmem, table)[key]
        out += f'static_assert(({expr}) == {value}ull, "{table}[{key}]");\n'
    return out


@pytest.mark.skipif(_nvcc() is None, reason="no nvcc here (a CUDA toolkit)")
def test_nvcc_sees_the_exported_layout_on_the_host_and_the_device(tmp_path):
    source = tmp_path / "layout.cu"
    source.write_text(
        '#include "symmem/device_layout.h"\n'
        + asserts(expressions(), False)
        + "__global__ void k() {}\n"
    )
    result = subprocess.run(
        [
            _nvcc(),
            "-arch=sm_90",
            "-c",
            "-I",
            str(ROOT / "include"),
            "-o",
            str(tmp_path / "layout.o"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_nvrtc_sees_the_exported_sizes():
    try:
        nvrtc = ctypes.CDLL("libnvrtc.so.13")
    except OSError:
        try:
            nvrtc = ctypes.CDLL("/usr/local/cuda/lib64/libnvrtc.so")
        except OSError:
            pytest.skip("no NVRTC here (a CUDA toolkit or wheel)")
    # NVRTC has no offsetof: sizes and macros; device_layout.h's own asserts
    # check the offsets it can.
    text = HEADER.read_text() + asserts(expressions(), True)
    program = ctypes.c_void_p()
    assert (
        nvrtc.nvrtcCreateProgram(ctypes.byref(program), text.encode(), b"layout.cu", 0, None, None)
        == 0
    )
    options = (ctypes.c_char_p * 2)(b"-arch=compute_90", b"-std=c++17")
    status = nvrtc.nvrtcCompileProgram(program, 2, options)
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(program, log)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(program))
    assert status == 0, log.value.decode()


# The Triton engine's module constants that are no part of the layout.
TRITON_OWN_NUMBERS = {"CONSTS", "STATE", "REDUCE_BLOCK"}


def test_the_triton_engine_writes_no_layout_number():
    path = ROOT / "python" / "symmem" / "device" / "triton" / "_own.py"
    tree = ast.parse(path.read_text())
    written = []
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) == "tl.constexpr"
            and node.value.args
            and isinstance(node.value.args[0], ast.Constant)
        ):
            written += [t.id for t in node.targets if t.id not in TRITON_OWN_NUMBERS]
    assert not written, f"read these from _symmem's layout tables: {written}"
    # fail()'s PTX writes the error record at the exported offsets.
    assert not re.search(r"\[\$1\+\d", path.read_text()), "an offset written into PTX"


# ---- the error record's writers: the device library's one (C) and the PTX
# of the engines that write it from inline asm (Triton's) ----

PRIMITIVES = ROOT / "include" / "symmem" / "device_primitives.cuh"


def _c_writer_steps():
    """symmem__fail_at's steps, in the order its source takes them."""
    text = PRIMITIVES.read_text()
    body = text[text.index("void symmem__fail_at(") :]
    body = body[: body.index("\n}\n")]
    patterns = [
        (r"atomicCAS\(&e->set, 0u, 2u\)", lambda m: ("claim", "set")),
        (r"e->(what|pe|arg|value) =", lambda m: ("write", m.group(1))),
        (r"e->call\[i\] =", lambda m: ("write", "call")),
        (r"__threadfence_system\(\)", lambda m: ("fence",)),
        (r"&e->set = 1u", lambda m: ("publish", "set")),
        (r"__trap\(\)", lambda m: ("trap",)),
    ]
    found = []
    for pattern, step in patterns:
        found += [(m.start(), step(m)) for m in re.finditer(pattern, body)]
    steps = []
    for _, step in sorted(found):
        if not steps or step != steps[-1] or step != ("write", "call"):
            steps.append(step)  # the two loops over call are one write
    return steps


def _ptx_writer_steps(ptx):
    """The same steps in the PTX, each store checked for its field's width
    (from the exported offsets); the call's words must cover its bytes."""
    layout = _symmem.DEVICE_LAYOUT
    names = ("set", "what", "pe", "arg", "value", "call")
    at = {layout["error_" + name]: name for name in names}
    ends = sorted(at) + [layout["error_size"]]
    width = {at[o]: ends[i + 1] - o for i, o in enumerate(sorted(at))}
    steps, call_bytes = [], []
    for line in ptx.splitlines():
        line = line.strip().removeprefix("@claimed ")
        store = re.match(
            r"(atom\.global\.cas\.b32 \w+,|st\.(?:volatile\.)?global\.u(\d+)) "
            r"\[\$1\+(\d+)\], (.+);",
            line,
        )
        if store:
            offset, what = int(store.group(3)), store.group(1)
            field = at.get(offset) or ("call" if offset > layout["error_call"] else None)
            assert field is not None, f"a store at offset {offset}: {line}"
            if what.startswith("atom"):
                assert store.group(4) == "0, 2", line
                steps.append(("claim", field))
            elif what.startswith("st.volatile"):
                assert store.group(4) == "1", line
                steps.append(("publish", field))
            elif field == "call":
                call_bytes.append((offset, int(store.group(2)) // 8))
                if steps[-1] != ("write", "call"):
                    steps.append(("write", "call"))
            else:
                assert int(store.group(2)) // 8 == width[field], f"{field}: {line}"
                steps.append(("write", field))
        elif line.startswith(("fence.sc.sys", "trap")):
            steps.append(("fence",) if line.startswith("fence") else ("trap",))
    start = layout["error_call"]
    assert call_bytes == [(start + 8 * i, 8) for i in range(layout["error_call_bytes"] // 8)], (
        call_bytes
    )
    return steps


def test_the_ptx_error_record_writer_takes_the_device_library_s_steps():
    # symmem.device.triton's fail() writes the record from this PTX: the same
    # fields at the exported offsets, in the order of symmem__fail_at, with
    # the same claim, fences and publication.
    from symmem.device import _error_record

    c_steps = _c_writer_steps()
    assert c_steps == [
        ("claim", "set"),
        ("write", "what"),
        ("write", "pe"),
        ("write", "arg"),
        ("write", "value"),
        ("write", "call"),
        ("fence",),
        ("publish", "set"),
        ("fence",),
        ("trap",),
    ], c_steps
    assert _ptx_writer_steps(_error_record.FAIL_PTX) == c_steps
    assert not re.search(r"\[\$1\+\d", Path(_error_record.__file__).read_text())


def test_the_ptx_writer_s_call_name_is_the_c_writer_s():
    # at most 31 characters, NUL-padded to the record's 32 bytes, as the host
    # reads them (device_state.c)
    from symmem.device import _error_record

    size = _symmem.DEVICE_LAYOUT["error_call_bytes"]
    for name in ("put", "putmem_signal_nbi_block", "x" * 40):
        words = _error_record.call_words(name)
        raw = b"".join(w.to_bytes(8, "little", signed=True) for w in words)
        assert len(raw) == size and raw == name.encode()[: size - 1].ljust(size, b"\0"), name


# What only device_primitives.cuh may write in CUDA C: the memory model's
# instructions, the clock, a cast to the error record, a trap.
WRITTEN_ONCE = {
    "a fence": r'"\s*fence\.(?:sc|acq_rel)\.sys',
    "an acquire load": r'"\s*ld\.acquire\.sys',
    "a relaxed 64-bit store": r'"\s*st\.relaxed\.sys\.global\.u64 ',
    "the clock": r"%%globaltimer",
    "the error record": r"\(symmem_device_error(?:_t)? \*\)",
    "a trap": r"\b__trap\(\);",
}


def test_the_primitives_and_the_error_record_are_written_once():
    # meet.cuh had its own ld_acquire, st_relaxed, now_ns and fail(): the
    # own kernels, the device library and the tests' CUDA take them from
    # device_primitives.cuh.
    files = sorted((ROOT / "include" / "symmem").glob("*.cuh"))
    files += sorted((ROOT / "src" / "backends" / "gpu" / "kernels").glob("*.cu*"))
    files += sorted((ROOT / "tests" / "gpu").glob("*.cu*"))
    found = []
    for path in files:
        if path == PRIMITIVES:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found += [
                f"{path.relative_to(ROOT)}:{number}: {what}: {line.strip()}"
                for what, pattern in WRITTEN_ONCE.items()
                if re.search(pattern, line)
            ]
    assert not found, "use device_primitives.cuh's:\n" + "\n".join(found)
    text = PRIMITIVES.read_text()
    assert all(re.search(pattern, text) for pattern in WRITTEN_ONCE.values())
