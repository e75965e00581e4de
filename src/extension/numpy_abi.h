/* NumPy's array type as C reads it (NumPy's ABI): the head of its struct,
 * the type the package names as numpy.ndarray and whether its struct is the
 * one read here, and an array's .base. The ground of everything that reads
 * NumPy: owner.h walks .base through it, from the struct only where
 * symmem__ext_ndarray_set_type found NumPy's own answer there, and
 * ndarray_fast.h reads further into the struct after a probe of its own. */
#ifndef SYMMEM_EXT_NUMPY_ABI_H
#define SYMMEM_EXT_NUMPY_ABI_H

#include "extension.h"

/* The head of NumPy's array struct (PyArrayObject_fields in
 * numpy/ndarraytypes.h): NumPy's ABI, which every extension built against
 * NumPy compiles PyArray_BASE into, the same from NumPy 1.7 through 2.x.
 * symmem__ext_ndarray_set_type checks it against ndarray.base first. */
typedef struct {
    PyObject_HEAD char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
} symmem__ext_ndarray_head_t;

/* An array's .base asked by name (borrowed), where the layout is not known. */
PyObject *symmem__ext_ndarray_base_by_name(PyObject *array);

/* The .base of obj, an instance of st->ndarray_type (borrowed; NULL: none):
 * read from the struct where its layout is known, else asked by name. */
static inline PyObject *symmem__ext_ndarray_base(const module_state_t *st, PyObject *obj)
{
    return st->ndarray_base_in_c ? ((symmem__ext_ndarray_head_t *)obj)->base
                                 : symmem__ext_ndarray_base_by_name(obj);
}

/* Remembers numpy.ndarray (None or NULL: none) as st->ndarray_type, and
 * whether its struct has the layout read here (st->ndarray_base_in_c; else
 * .base is asked by name). Sets no error. */
void symmem__ext_ndarray_set_type(module_state_t *st, PyObject *ndarray);

#endif
