/* A NumPy array's memory read straight from NumPy's structs, for the
 * common case of every put and get: an exact numpy.ndarray of a plain number
 * dtype, contiguous, aligned, in native byte order. Exporting its buffer
 * instead (PyObject_GetBuffer) builds a format string and a shape and
 * strides block in NumPy on every call, a quarter of a small put.
 *
 * Nothing here is trusted before it is checked: when the package names
 * numpy.ndarray (_set_resolver), symmem__ext_ndarray_probe makes arrays of
 * every number dtype, in C and Fortran order, sliced, read-only, byte-swapped
 * and 0-d, and compares each field read from the structs with what NumPy
 * says through .shape, .strides, .flags, .dtype and a buffer export. The
 * table it fills (each dtype's scalar type, byte order, item size and buffer
 * format, as NumPy exports them) is the only source of those values; a dtype
 * it lacks, or any array that is not plain (unaligned, not contiguous,
 * read-only where the call writes, swapped, a subclass), takes the buffer
 * protocol as before, which gives its result or its error. */
#ifndef SYMMEM_EXT_NDARRAY_FAST_H
#define SYMMEM_EXT_NDARRAY_FAST_H

#include "memory_desc.h"

/* How one NumPy dtype (by its type character) looks in a buffer export. */
typedef struct {
    PyTypeObject *typeobj; /* its scalar type (np.float32; borrowed: NumPy's
                              static types live as long as the process); NULL: none */
    Py_ssize_t itemsize;
    char byteorder; /* '=' or '|', as the probe's array had it */
    char format[5]; /* the export's format, byte order prefix removed ("f", "Zd") */
} symmem__ext_ndarray_kind_t;

/* The probe's findings (module state's ndarray_fast, NULL where it failed). */
struct symmem__ext_ndarray_fast {
    int enabled;                           /* 0 once a test has switched it off */
    symmem__ext_ndarray_kind_t kinds[128]; /* by type character */
};

/* Probes st->ndarray_type (NULL: none), setting st->ndarray_fast where every
 * check passes and NULL otherwise. Sets no error. */
void symmem__ext_ndarray_probe(module_state_t *st);
/* Frees st->ndarray_fast (module clear). */
void symmem__ext_ndarray_forget(module_state_t *st);

/* 1 with mem filled as the buffer protocol would fill it (ptr, nbytes,
 * itemsize, format, order; keep holds obj, view stays empty) where obj, an exact
 * numpy.ndarray, is plain and a known dtype (writable: and may be written);
 * 0 where the buffer protocol must take it. Sets no error; the caller checks
 * the owner as for any array. */
int symmem__ext_ndarray_read(const module_state_t *st, PyObject *obj, int writable, memory_t *mem);

#endif
