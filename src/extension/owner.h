/* Which allocation an argument's memory belongs to, and whether that
 * allocation is still live. An address alone cannot tell: after a free the
 * allocator hands the same address to the next allocation, so an array over
 * the freed one would read and write the new one. The argument's object can:
 * it was made over a Buffer (a NumPy array through .base, a torch tensor or a
 * CuPy array through what the package recorded), and the Buffer knows its
 * allocation's generation (buffer.h). The walk and the check run for every
 * argument of every call, so they are inline and a few loads each. */
#ifndef SYMMEM_EXT_OWNER_H
#define SYMMEM_EXT_OWNER_H

#include "buffer.h"

/* The head of NumPy's array struct (PyArrayObject_fields in
 * numpy/ndarraytypes.h): NumPy's ABI, which every extension built against
 * NumPy compiles PyArray_BASE into, the same from NumPy 1.7 through 2.x.
 * symmem__ext_owner_set_ndarray checks it against ndarray.base first. */
typedef struct {
    PyObject_HEAD char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
} symmem__ext_ndarray_head_t;

/* An array's .base asked by name (borrowed), where the layout is not known. */
PyObject *symmem__ext_owner_base_by_name(PyObject *array);

/* The Buffer obj was made over, found in C (borrowed): a NumPy array's .base
 * (a view's base is the array it views), a memoryview's exporter
 * (np.frombuffer keeps one) or a DLPack capsule of ours (np.from_dlpack), up
 * to a Buffer; NULL where the chain ends elsewhere (private memory, or an
 * object C does not walk). */
static inline buffer_object_t *symmem__ext_owner_walk(module_state_t *st, PyObject *obj)
{
    for (int depth = 0; depth < 16 && obj != NULL; depth++) {
        if (Py_IS_TYPE(obj, st->ndarray_type) && st->ndarray_base_in_c)
            obj = ((symmem__ext_ndarray_head_t *)obj)->base; /* the common case first */
        else if (Py_IS_TYPE(obj, st->buffer_type))
            return (buffer_object_t *)obj;
        else if (PyMemoryView_Check(obj))
            obj = PyMemoryView_GET_BUFFER(obj)->obj;
        else if (st->ndarray_type != NULL && PyObject_TypeCheck(obj, st->ndarray_type))
            obj = st->ndarray_base_in_c ? ((symmem__ext_ndarray_head_t *)obj)->base
                                        : symmem__ext_owner_base_by_name(obj);
        else if (PyCapsule_CheckExact(obj)) /* np.from_dlpack(buffer) */
            return symmem__ext_buffer_of_capsule(obj);
        else
            return NULL;
    }
    return NULL;
}

/* The Buffer the package's owner_of hook names for obj (a new reference) in
 * *owner_p, or NULL; -1 with the hook's exception set if it failed. */
int symmem__ext_owner_ask(module_state_t *st, PyObject *obj, PyObject **owner_p);

/* Raises NvshmemInvalid: arg names memory of buf's allocation, which was freed. */
int symmem__ext_owner_refuse(module_state_t *st, const buffer_object_t *buf, const char *call,
                             const char *arg);

/* 0 if buf (NULL: no Buffer known) is still its allocation; else -1 with
 * NvshmemInvalid naming call and arg. */
static inline int symmem__ext_owner_check(module_state_t *st, const buffer_object_t *buf,
                                          const char *call, const char *arg)
{
    if (buf == NULL || symmem__ext_buffer_usable(buf)) return 0;
    return symmem__ext_owner_refuse(st, buf, call, arg);
}

/* Remembers numpy.ndarray (None or NULL: none) for the walk, and whether its
 * struct has the layout the walk reads (else it asks .base by name). */
void symmem__ext_owner_set_ndarray(module_state_t *st, PyObject *ndarray);

#endif
