/* put_signal to a peer in this PE's NVLink domain, as one kernel: the
 * threads store the data through the peer mapping, the block synchronises,
 * and thread 0 fences at system scope and then sets or adds to the peer's
 * signal. NVSHMEM's nvshmemx_putmem_signal_on_stream takes a copy-engine
 * copy and then a signal kernel; on 2 x H200 a ping-pong's half round trip
 * drops from 10.7 to 3.8 us at 8 B and from 22.7 to 19.0 us at 4 MiB.
 * Large messages use a grid of copy-only blocks and then a one-block signal
 * launch, so no block waits on another (a grid-wide counter would be shared
 * by launches on different streams). The PTX is made here and compiled by
 * the driver at init, like the atomics'. */
#include <stdio.h>
#include <string.h>

#include "put_signal.h"

/* Element widths the copy loop can use, widest first: v4.u32 is 16 bytes. */
static const struct {
    int log2;
    const char *regs;  /* the registers %v that one element needs */
    const char *load;  /* from the source address %a */
    const char *store; /* to the destination address %b */
} widths[] = {
    {4, ".reg .b32 %v<4>;", "ld.global.v4.u32 {%v0, %v1, %v2, %v3}, [%a];",
     "st.global.v4.u32 [%b], {%v0, %v1, %v2, %v3};"},
    {3, ".reg .b64 %v;", "ld.global.u64 %v, [%a];", "st.global.u64 [%b], %v;"},
    {2, ".reg .b32 %v;", "ld.global.u32 %v, [%a];", "st.global.u32 [%b], %v;"},
    {0, ".reg .b16 %v;", "ld.global.u8 %v, [%a];", "st.global.u8 [%b], %v;"},
};
#define NWIDTHS (sizeof(widths) / sizeof(widths[0]))

/* put_signal_<bytes>(src, dst, nbytes, sig, value, add): a grid-stride copy
 * of whole elements, block 0 copies the tail bytes, then thread 0 of each
 * block fences; if sig is not 0, thread 0 of the (one) block signals. */
static int kernel_text(char *out, size_t size, int w)
{
    return snprintf(
        out, size,
        ".visible .entry put_signal_%d(.param .u64 p_src, .param .u64 p_dst, "
        ".param .u64 p_n, .param .u64 p_sig, .param .u64 p_value, .param .u32 p_add)\n"
        "{\n"
        ".reg .pred %%p<3>; .reg .b32 %%r<7>; .reg .b16 %%t;\n"
        ".reg .b64 %%src, %%dst, %%n, %%sig, %%value, %%i, %%step, %%words, %%a, %%b, %%old;\n"
        "%s\n"
        "ld.param.u64 %%src, [p_src]; ld.param.u64 %%dst, [p_dst];\n"
        "ld.param.u64 %%n, [p_n]; ld.param.u64 %%sig, [p_sig];\n"
        "ld.param.u64 %%value, [p_value]; ld.param.u32 %%r1, [p_add];\n"
        "mov.u32 %%r2, %%ctaid.x; mov.u32 %%r3, %%ntid.x; mov.u32 %%r4, %%tid.x;\n"
        "mov.u32 %%r5, %%nctaid.x;\n"
        "mul.wide.u32 %%i, %%r2, %%r3; cvt.u64.u32 %%a, %%r4; add.u64 %%i, %%i, %%a;\n"
        "mul.wide.u32 %%step, %%r5, %%r3;\n"
        "shr.u64 %%words, %%n, %d;\n"
        "WORDS:\n"
        "setp.ge.u64 %%p1, %%i, %%words; @%%p1 bra TAIL;\n"
        "shl.b64 %%a, %%i, %d; add.u64 %%b, %%dst, %%a; add.u64 %%a, %%src, %%a;\n"
        "%s\n%s\n"
        "add.u64 %%i, %%i, %%step; bra WORDS;\n"
        "TAIL:\n"
        "setp.ne.u32 %%p1, %%r2, 0; @%%p1 bra COPIED;\n"
        "shl.b64 %%i, %%words, %d; cvt.u64.u32 %%a, %%r4; add.u64 %%i, %%i, %%a;\n"
        "cvt.u64.u32 %%step, %%r3;\n"
        "BYTES:\n"
        "setp.ge.u64 %%p1, %%i, %%n; @%%p1 bra COPIED;\n"
        "add.u64 %%a, %%src, %%i; add.u64 %%b, %%dst, %%i;\n"
        "ld.global.u8 %%t, [%%a]; st.global.u8 [%%b], %%t;\n"
        "add.u64 %%i, %%i, %%step; bra BYTES;\n"
        "COPIED:\n"
        /* The barrier makes the block's stores thread 0's to release: its
         * system-scope fence then orders them all before the signal. */
        "bar.sync 0;\n"
        "setp.ne.u32 %%p1, %%r4, 0; @%%p1 bra DONE;\n"
        "fence.sc.sys;\n"
        "setp.eq.u64 %%p1, %%sig, 0; @%%p1 bra DONE;\n"
        "setp.ne.u32 %%p2, %%r1, 0;\n"
        "@%%p2 atom.sys.global.add.u64 %%old, [%%sig], %%value;\n"
        "@!%%p2 atom.sys.global.exch.b64 %%old, [%%sig], %%value;\n"
        "DONE:\n"
        "ret;\n"
        "}\n",
        1 << widths[w].log2, widths[w].regs, widths[w].log2, widths[w].log2, widths[w].load, widths[w].store,
        widths[w].log2);
}

int symmem__gpu_put_signal_ptx(char *out, size_t size)
{
    /* fence.sc.sys needs PTX 6.0 and sm_70, which NVSHMEM 3 needs anyway. */
    int n = snprintf(out, size, ".version 6.0\n.target sm_70\n.address_size 64\n");
    for (size_t w = 0; w < NWIDTHS && n < (int)size; w++)
        n += kernel_text(out + n, size - (size_t)n, (int)w);
    return n < (int)size ? 0 : -1;
}

int symmem__gpu_put_signal_width(const void *dst, const void *src, size_t nbytes)
{
    uintptr_t bits = (uintptr_t)dst | (uintptr_t)src;
    for (size_t w = 0; w + 1 < NWIDTHS; w++)
        if (bits % ((uintptr_t)1 << widths[w].log2) == 0 && nbytes >> widths[w].log2 > 0)
            return 1 << widths[w].log2;
    return 1;
}
