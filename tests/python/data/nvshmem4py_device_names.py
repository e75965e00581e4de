"""Writes NVSHMEM4Py's raw device bindings (nvshmem.bindings.device.numba,
.numba_cuda_mlir and .cute) as one line a function: the module, the name,
the return type and the parameter types, in one notation for the three
DSLs. test_bindings_device.py compares symmem.bindings.device's table with
it, name for name. Reads the wheel's generated files as text (importing
them needs numba-cuda, numba-cuda-mlir and the CuTe DSL, and NVSHMEM's
headers); nothing of them is kept but the names and types.

    pip download nvshmem4py-cu12==0.4.1 --no-deps -d /tmp/nv4py
    unzip -q /tmp/nv4py/nvshmem4py_cu12-0.4.1-*.whl -d /tmp/nv4py/whl
    python tests/python/data/nvshmem4py_device_names.py /tmp/nv4py/whl \\
        > tests/python/data/nvshmem4py_0.4.1_device.txt

The notation: int32, uint64, float16, bfloat16, float32, float64, bool,
float64x2 (NVSHMEM's double2), "*T" a pointer to T ("*void" untyped),
"enum" the nvshmemx_smem_amount_t member numba's ask_smem takes, "void"
no value. A line lists the modules that have the name with that signature,
and, where CuTe is one, the C function its extern names:
"numba,numba_cuda_mlir,cute int_p void(*int32, int32, int32) nvshmem_int_p".
numba_cuda_mlir's ptr, added by its __init__.py, has two lines (two cases)."""

import re
import sys
from pathlib import Path

COMMANDS = (
    "pip download nvshmem4py-cu12==0.4.1 --no-deps -d /tmp/nv4py",
    "unzip -q /tmp/nv4py/nvshmem4py_cu12-0.4.1-*.whl -d /tmp/nv4py/whl",
    "python tests/python/data/nvshmem4py_device_names.py /tmp/nv4py/whl "
    "> tests/python/data/nvshmem4py_0.4.1_device.txt",
)

_CUTE_TYPES = {
    "Int8": "int8",
    "Int16": "int16",
    "Int32": "int32",
    "Int64": "int64",
    "Uint8": "uint8",
    "Uint16": "uint16",
    "Uint32": "uint32",
    "Uint64": "uint64",
    "Float16": "float16",
    "BFloat16": "bfloat16",
    "Float32": "float32",
    "Float64": "float64",
    "Boolean": "bool",
}


def _numba_type(text):
    text = text.strip()
    m = re.fullmatch(r"CPointer\((\w+)\)", text)
    if m:
        return "*" + m.group(1)
    if text.startswith("IntEnumMember("):
        return "enum"
    return text


def _split(args):
    """Top-level comma-separated pieces of args."""
    out, depth, cur = [], 0, ""
    for ch in args:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        cur += ch
    if cur.strip():
        out.append(cur)
    return [p.strip() for p in out]


def numbast(path):
    """(name, ret, params) of a Numbast module's functions, in its order."""
    src = Path(path).read_text()
    names = re.search(r"_FUNCTION_SYMBOLS = \[(.*?)\]", src, re.S).group(1)
    names = [n.strip().strip('"') for n in names.split(",") if n.strip()]
    cases = dict(
        re.findall(r'key = globals\(\)\["(\w+)"\]\n    cases = \[signature\((.*?)\)\]\n', src)
    )
    rows = []
    for name in names:
        ret, *params = _split(cases[name])
        rows.append((name, _numba_type(ret), [_numba_type(p) for p in params if p]))
    return rows


def _cute_type(text):
    text = text.strip()
    m = re.fullmatch(r"_CutePtrType\(cutlass\.(\w+)(, .*)?\)", text)
    if m:
        return "*" + _CUTE_TYPES[m.group(1)]
    if text == "None":
        return "void"
    return _CUTE_TYPES[text.split(".")[-1]]


def cute(path):
    """(name, ret, params, C symbol) of the CuTe module's externs, in its order."""
    src = Path(path).read_text()
    rows = []
    for symbol, name, args, ret in re.findall(
        r'@cute\.extern\(name="(\w+)", source=_BC\)\ndef (\w+)\((.*?)\) -> (.*?): \.\.\.', src
    ):
        params = [_cute_type(a.split(":", 1)[1]) for a in _split(args)]
        rows.append((name, _cute_type(ret), params, symbol))
    return rows


def ptr_cases(path):
    """numba_cuda_mlir's ptr, which its __init__.py adds: (name, ret, params)."""
    src = Path(path).read_text()
    cases = re.search(r"class _typing_ptr\(.*?cases = \[(.*?)\]", src, re.S).group(1)
    rows = []
    for case in re.findall(r"_signature\((.*?)\),?\n", cases):
        ret, *params = [_numba_type(re.sub(r"\b_", "", p)) for p in _split(case)]
        rows.append(("ptr", ret, params))
    return rows


def main(root):
    device = Path(root) / "nvshmem" / "bindings" / "device"
    mlir = device / "numba_cuda_mlir"
    found = {
        "numba": numbast(device / "numba" / "_numbast.py"),
        "numba_cuda_mlir": numbast(mlir / "_numbast.py") + ptr_cases(mlir / "__init__.py"),
        "cute": cute(device / "cute" / "_cuteast.py"),
    }
    lines, symbols = {}, {}  # name -> {signature: [modules]}, in the order names first appear
    for module, rows in found.items():
        for name, ret, params, *symbol in rows:
            lines.setdefault(name, {}).setdefault(f"{ret}({', '.join(params)})", []).append(module)
            symbols.update({name: symbol[0]} if symbol else {})
    print("# NVSHMEM4Py 0.4.1's raw device bindings: modules name signature [C symbol, for CuTe]")
    print("# made by (tests/python/data/nvshmem4py_device_names.py says what each field is):")
    for command in COMMANDS:
        print(f"#   {command}")
    for name, signatures in lines.items():
        for signature, modules in signatures.items():
            symbol = f" {symbols[name]}" if "cute" in modules else ""
            print(f"{','.join(modules)} {name} {signature}{symbol}")


if __name__ == "__main__":
    main(sys.argv[1])
