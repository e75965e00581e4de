/* The out-of-line parts of numpy_abi.h: .base by name, and the check of
 * NumPy's layout. */
#include "numpy_abi.h"

PyObject *symmem__ext_ndarray_base_by_name(PyObject *array)
{
    PyObject *base = PyObject_GetAttrString(array, "base");
    if (base == NULL) PyErr_Clear();
    Py_XDECREF(base); /* borrowed: the array keeps its base alive */
    return base == Py_None ? NULL : base;
}

/* Whether ndarray's struct has the layout the walk reads: a probe array's
 * .base, read both ways. */
static int ndarray_layout_known(PyTypeObject *ndarray)
{
    PyObject *owner = PyBytes_FromStringAndSize("12345678", 8);
    PyObject *probe = owner ? PyObject_CallMethod((PyObject *)ndarray, "__new__", "O(n)sO",
                                                  (PyObject *)ndarray, (Py_ssize_t)8, "u1", owner)
                            : NULL;
    PyObject *base =
        probe && PyObject_TypeCheck(probe, ndarray) ? PyObject_GetAttrString(probe, "base") : NULL;
    int known = base != NULL && base == ((symmem__ext_ndarray_head_t *)probe)->base;
    PyErr_Clear();
    Py_XDECREF(base);
    Py_XDECREF(probe);
    Py_XDECREF(owner);
    return known;
}

void symmem__ext_ndarray_set_type(module_state_t *st, PyObject *ndarray)
{
    Py_CLEAR(st->ndarray_type);
    st->ndarray_base_in_c = 0;
    if (ndarray != NULL && ndarray != Py_None && PyType_Check(ndarray)) {
        st->ndarray_type = (PyTypeObject *)Py_NewRef(ndarray);
        st->ndarray_base_in_c = ndarray_layout_known(st->ndarray_type);
    }
}
