/* bfloat16: the top half of a float32. One definition for every place that
 * converts (p/g in the extension, the cpu engine's reductions). */
#ifndef SYMMEM_CORE_BFLOAT16_H
#define SYMMEM_CORE_BFLOAT16_H

#include <stdint.h>
#include <string.h>

static inline float symmem__bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Rounded to nearest even; a NaN stays a NaN (rounding must not carry it
 * into infinity). */
static inline uint16_t symmem__float_to_bf16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    if ((bits & 0x7fffffff) > 0x7f800000) return (uint16_t)((bits >> 16) | 0x40);
    bits += 0x7fff + ((bits >> 16) & 1);
    return (uint16_t)(bits >> 16);
}

#endif
