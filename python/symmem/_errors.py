"""The two exception types (made by the C module) and helpers that build
messages naming the call, the argument, the value and the PE."""
from symmem import _symmem

NvshmemError = _symmem.NvshmemError
NvshmemInvalid = _symmem.NvshmemInvalid


def _prefix():
    pe = _symmem.my_pe()
    return f"[pe {pe}] " if pe >= 0 else ""


def invalid(message):
    """An NvshmemInvalid whose message starts with this PE's number."""
    error = NvshmemInvalid(_prefix() + message)
    error.msg = str(error)
    error.status = 1
    return error


def require_initialized(call):
    if not _symmem.initialized():
        raise invalid(f"{call}: symmem is not initialized (call init() first)")
