/* Tiny helpers for the C tests: each test is a program that prints
 * "expected X, got Y" and exits non-zero on the first wrong value. */
#ifndef SYMMEM_C_TEST_H
#define SYMMEM_C_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "symmem/symmem.h"

#define OK(call)                                                                                   \
    do {                                                                                           \
        symmem_status_t _st = (call);                                                              \
        if (_st != SYMMEM_OK) {                                                                    \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,              \
                    symmem_status_string(_st), symmem_last_error());                               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* The call must fail with this status. */
#define FAILS(call, expected)                                                                      \
    do {                                                                                           \
        symmem_status_t _st = (call);                                                              \
        if (_st != (expected)) {                                                                   \
            fprintf(stderr, "%s:%d: %s: expected %s, got %s\n", __FILE__, __LINE__, #call,         \
                    symmem_status_string(expected), symmem_status_string(_st));                    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define EXPECT_EQ(expected, got)                                                                   \
    do {                                                                                           \
        long long _e = (long long)(expected), _g = (long long)(got);                               \
        if (_e != _g) {                                                                            \
            fprintf(stderr, "%s:%d: pe %d: %s: expected %lld, got %lld\n", __FILE__, __LINE__,     \
                    symmem_my_pe(), #got, _e, _g);                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* For tests whose forked processes play PEs without symmem: cond must hold
 * in this process, whose number is the test's `me`; the rest says why. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: process %d: %s: ", __FILE__, __LINE__, me, #cond);             \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif
