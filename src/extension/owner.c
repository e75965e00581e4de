/* The out-of-line parts of owner.h: the package's hook, the refusal, and
 * the check of NumPy's layout. */
#include "errors.h"
#include "ndarray_fast.h"
#include "owner.h"

PyObject *symmem__ext_owner_base_by_name(PyObject *array)
{
    PyObject *base = PyObject_GetAttrString(array, "base");
    if (base == NULL) PyErr_Clear();
    Py_XDECREF(base); /* borrowed: the array keeps its base alive */
    return base == Py_None ? NULL : base;
}

int symmem__ext_owner_ask(module_state_t *st, PyObject *obj, PyObject **owner_p)
{
    *owner_p = NULL;
    if (st->owner_of == NULL) return 0;
    PyObject *owner = PyObject_CallOneArg(st->owner_of, obj);
    if (owner == NULL) return -1;
    if (Py_IS_TYPE(owner, st->buffer_type))
        *owner_p = owner;
    else
        Py_DECREF(owner);
    return 0;
}

/* A freed allocation's address may already belong to a newer one, which the
 * call would read or write instead. */
int symmem__ext_owner_refuse(module_state_t *st, const buffer_object_t *buf, const char *call,
                             const char *arg)
{
    symmem__ext_raise_invalid(st,
                              "%s: %s refers to symmetric memory that was freed (free, "
                              "free_array, free_tensor or finalize freed its allocation at "
                              "0x%llx, %zd bytes); its address may now belong to a newer "
                              "allocation, so symmem refuses it",
                              call, arg, (unsigned long long)(uintptr_t)buf->ptr, buf->size);
    return -1;
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

void symmem__ext_owner_set_ndarray(module_state_t *st, PyObject *ndarray)
{
    Py_CLEAR(st->ndarray_type);
    st->ndarray_base_in_c = 0;
    if (ndarray != NULL && ndarray != Py_None && PyType_Check(ndarray)) {
        st->ndarray_type = (PyTypeObject *)Py_NewRef(ndarray);
        st->ndarray_base_in_c = ndarray_layout_known(st->ndarray_type);
    }
    symmem__ext_ndarray_probe(st);      /* resolve.c's fast read, where NumPy is as it reads */
    symmem__ext_owner_probe_dlpack(st); /* the search's way through np.from_dlpack(a) */
}
