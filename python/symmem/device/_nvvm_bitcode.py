"""NVSHMEM's device bitcode as libNVVM takes it, for CuTe kernels on NVSHMEM's
engine.

CuTe DSL links the bitcode into each kernel and hands the result to libNVVM,
which refuses a function with an explicit section: NVSHMEM 3.4's
libnvshmem_device.bc puts 68 of them in ".text.compute" ("Explicit section
marker .text.compute is not allowed", NVVM_ERROR_INVALID_IR). Triton, which
compiles with its own LLVM, does not mind, so only the CuTe engine takes this
copy: the same module with the functions' sections dropped (a section places
code in an object file; a GPU kernel's code has no such place), made once per
bitcode file with llvmlite (which numba brings) and kept in
~/.cache/symmem/cute under a hash of the original. defined_functions lists
what a bitcode defines (symmem.bindings.device.cute refuses a call its
NVSHMEM lacks, naming it), kept there too."""

import fcntl
import hashlib
import os
import re
from pathlib import Path

from symmem._errors import invalid

# `define ... section "name" ...`: a function definition's section attribute
_FUNCTION_SECTION = re.compile(r'^(define [^\n]*?) section "[^"]*"', re.MULTILINE)


def _cache_dir():
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(home) / "symmem" / "cute"


def without_function_sections(data, call):
    """The bitcode `data` with every function's section dropped, as bitcode;
    None if no function has one."""
    try:
        import llvmlite.binding as llvm
    except ImportError:
        raise invalid(
            f"{call}: NVSHMEM's device bitcode needs its functions' sections dropped "
            "before libNVVM takes it, which is done with llvmlite: pip install llvmlite"
        ) from None
    text = str(llvm.parse_bitcode(data))
    cleaned, dropped = _FUNCTION_SECTION.subn(r"\1", text)
    if dropped == 0:
        return None
    module = llvm.parse_assembly(cleaned)
    module.verify()
    return module.as_bitcode()


def for_nvvm(path, call="symmem.device.cute"):
    """The path of a copy of the bitcode at `path` that libNVVM takes (path
    itself where nothing needs dropping). The first process to ask makes the
    copy; the others wait for it (a lock beside it)."""
    data = Path(path).read_bytes()
    key = hashlib.sha256(data).hexdigest()[:16]
    cache = _cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    out = cache / f"{Path(path).stem}-{key}.bc"
    same = cache / f"{Path(path).stem}-{key}.unchanged"  # nothing to drop: use the original
    with open(cache / f"{Path(path).stem}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.exists():
            return str(out)
        if same.exists():
            return str(path)
        bitcode = without_function_sections(data, call)
        if bitcode is None:
            same.touch()
            return str(path)
        partial = out.with_name(f"{out.name}.{os.getpid()}")
        partial.write_bytes(bitcode)
        os.replace(partial, out)  # whole or absent, for readers without the lock
    return str(out)


def defined_functions(path, call="symmem.bindings.device.cute"):
    """The names of the functions the bitcode at path defines (not only
    declares), kept beside the copies above as a list, made once per file."""
    data = Path(path).read_bytes()
    key = hashlib.sha256(data).hexdigest()[:16]
    cache = _cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    listing = cache / f"{Path(path).stem}-{key}.functions"
    if not listing.exists():
        try:
            import llvmlite.binding as llvm
        except ImportError:
            raise invalid(
                f"{call}: listing NVSHMEM's device bitcode's functions needs llvmlite: "
                "pip install llvmlite"
            ) from None
        module = llvm.parse_bitcode(data)
        names = sorted(f.name for f in module.functions if not f.is_declaration)
        partial = listing.with_name(f"{listing.name}.{os.getpid()}")
        partial.write_text("\n".join(names) + "\n")
        os.replace(partial, listing)  # whole or absent
    return set(listing.read_text().split())
