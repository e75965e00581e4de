/* The CUDA C of the atomics that go through NVSHMEM's device library: for a
 * PE this PE has no load/store mapping of (another node), NVSHMEM's own
 * device atomics pick the network transport. Each kernel has the name of
 * its PTX twin (atomics_ptx.c: amo_<op>_<type>) and one more parameter, the
 * PE; the target is the local symmetric address. Float adds have no NVSHMEM
 * atomic: a compare-and-swap loop on the bits does them. */
#include <stdio.h>
#include <string.h>

#include "atomics.h"

/* NVSHMEM's device API alone: its collectives' headers need the C++ library
 * NVRTC does not have, and are not used. */
static const char prelude[] =
    "#include \"non_abi/nvshmem_build_options.h\"\n"
    "#include \"device/nvshmem_defines.h\"\n"
    "typedef unsigned int u32;\n"
    "typedef unsigned long long u64;\n"
    "#define KERNEL(name, T) extern \"C\" __global__ void name(T *t, u64 v, u64 c, T *r, int pe)\n";

/* PTX op and type -> the NVSHMEM call that returns the old value. */
static const struct {
    const char *op, *type, *body;
} kernels[] = {
    {"or", "b32", "*r = nvshmem_uint32_atomic_fetch_or(t, (u32)v, pe);"},
    {"or", "b64", "*r = nvshmem_uint64_atomic_fetch_or(t, v, pe);"},
    {"exch", "b32", "*r = nvshmem_uint32_atomic_swap(t, (u32)v, pe);"},
    {"exch", "b64", "*r = nvshmem_uint64_atomic_swap(t, v, pe);"},
    {"add", "u32", "*r = nvshmem_uint32_atomic_fetch_add(t, (u32)v, pe);"},
    {"add", "u64", "*r = nvshmem_uint64_atomic_fetch_add(t, v, pe);"},
    {"and", "b32", "*r = nvshmem_uint32_atomic_fetch_and(t, (u32)v, pe);"},
    {"and", "b64", "*r = nvshmem_uint64_atomic_fetch_and(t, v, pe);"},
    {"xor", "b32", "*r = nvshmem_uint32_atomic_fetch_xor(t, (u32)v, pe);"},
    {"xor", "b64", "*r = nvshmem_uint64_atomic_fetch_xor(t, v, pe);"},
    {"cas", "b32", "*r = nvshmem_uint32_atomic_compare_swap(t, (u32)c, (u32)v, pe);"},
    {"cas", "b64", "*r = nvshmem_uint64_atomic_compare_swap(t, c, v, pe);"},
    /* old: what the target held; each try adds to it, and the swap holds
     * only if the target still held old */
    {"add", "f32",
     "u32 old = nvshmem_uint32_atomic_fetch(t, pe), seen;\n"
     "    float add = __uint_as_float((u32)v);\n"
     "    while ((seen = nvshmem_uint32_atomic_compare_swap(\n"
     "                t, old, __float_as_uint(__uint_as_float(old) + add), pe)) != old)\n"
     "        old = seen;\n"
     "    *r = old;"},
    {"add", "f64",
     "u64 old = nvshmem_uint64_atomic_fetch(t, pe), seen;\n"
     "    double add = __longlong_as_double((long long)v);\n"
     "    while ((seen = nvshmem_uint64_atomic_compare_swap(t, old, (u64)__double_as_longlong(\n"
     "                __longlong_as_double((long long)old) + add), pe)) != old)\n"
     "        old = seen;\n"
     "    *r = old;"},
};
#define NKERNELS (sizeof(kernels) / sizeof(kernels[0]))

int symmem__gpu_nvshmem_atomics_cu(char *out, size_t size)
{
    int n = snprintf(out, size, "%s", prelude);
    for (size_t i = 0; i < NKERNELS && n < (int)size; i++) {
        const char *type = kernels[i].type[1] == '6' ? "u64" : "u32";
        n += snprintf(out + n, size - (size_t)n, "KERNEL(amo_%s_%s, %s)\n{\n    %s\n}\n",
                      kernels[i].op, kernels[i].type, type, kernels[i].body);
    }
    return n < (int)size ? 0 : -1;
}
