"""The device error record (include/symmem/device_layout.h's
symmem_device_error_t) as PTX, for an engine that writes it from inline asm
(symmem.device.triton's fail()): the same record in the same steps as the
device library's one writer, symmem__fail_at
(include/symmem/device_primitives.cuh), with every offset from
_symmem.DEVICE_LAYOUT. No Triton here, so tests/python/test_device_layout.py
checks the steps against the layout and the C writer where Triton is not
installed.

The steps: claim the record (set 0 -> 2 by compare-and-swap; 0 as the
address: no record), write what, pe, arg, value and the call's name
(NUL-padded, as 8-byte words), fence.sc.sys, set = 1 (the gpu backend's
watch thread reads set with acquire, which pairs with that fence), fence
again, then trap whether or not this thread claimed it."""

from symmem import _symmem

_L = _symmem.DEVICE_LAYOUT
CALL_BYTES = _L["error_call_bytes"]
CALL_WORDS = CALL_BYTES // 8

# Operands: $0 a dummy result, $1 the record's address, $2 what, $3 pe,
# $4 arg (32-bit), $5 value (64-bit), then the call's name in CALL_WORDS
# 64-bit words (call_words).
CONSTRAINTS = "=r,l,r,r,r,l" + ",l" * CALL_WORDS
FAIL_PTX = (
    f"""{{
        .reg .pred claimed;
        .reg .b32 old;
        setp.ne.u64 claimed, $1, 0;
        @claimed atom.global.cas.b32 old, [$1+{_L["error_set"]}], 0, 2;
        @claimed setp.eq.u32 claimed, old, 0;
        @claimed st.global.u32 [$1+{_L["error_what"]}], $2;
        @claimed st.global.u32 [$1+{_L["error_pe"]}], $3;
        @claimed st.global.u32 [$1+{_L["error_arg"]}], $4;
        @claimed st.global.u64 [$1+{_L["error_value"]}], $5;
"""
    + "".join(
        f"""        @claimed st.global.u64 [$1+{_L["error_call"] + 8 * i}], ${6 + i};
"""
        for i in range(CALL_WORDS)
    )
    + f"""        @claimed fence.sc.sys;
        @claimed st.volatile.global.u32 [$1+{_L["error_set"]}], 1;
        @claimed fence.sc.sys;
        trap;
        mov.u32 $0, 0;
        }}"""
)


def call_words(name):
    """The record's call field for name (at most CALL_BYTES - 1 characters,
    NUL-padded) as CALL_WORDS little-endian signed 64-bit integers."""
    raw = name.encode()[: CALL_BYTES - 1].ljust(CALL_BYTES, b"\0")
    return tuple(
        int.from_bytes(raw[8 * i : 8 * i + 8], "little", signed=True) for i in range(CALL_WORDS)
    )
