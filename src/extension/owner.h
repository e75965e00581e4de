/* Which allocation an argument's memory belongs to, and whether that
 * allocation is still live. An address alone cannot tell: after a free the
 * allocator hands the same address to the next allocation, so an array over
 * the freed one would read and write the new one. The argument's object can:
 * it was made over a Buffer (a NumPy array through .base, a torch tensor or a
 * CuPy array through what the package recorded), and the Buffer knows its
 * allocation's generation (buffer.h). The walk and the check run for every
 * argument of every call, so they are inline and a few loads each.
 *
 * Some views leave NumPy's chain of bases: as_strided and
 * sliding_window_view end it at an object with __array_interface__,
 * np.asarray(obj) at obj, np.from_dlpack(a) at NumPy's DLPack capsule. Where
 * the walk ends at such an object and the memory lies in a symmetric heap as
 * this process maps it, owner_search.h (the layer above this one) looks for
 * the Buffer among what that object holds (the exporter must keep its memory
 * alive, so it holds the array it was made from), and a view it cannot trace
 * to one is refused: its allocation may have been freed and its address
 * handed out again. */
#ifndef SYMMEM_EXT_OWNER_H
#define SYMMEM_EXT_OWNER_H

#include "buffer.h"
#include "numpy_abi.h"

/* The Buffer obj was made over, found in C (borrowed): a NumPy array's .base
 * (a view's base is the array it views), a memoryview's exporter
 * (np.frombuffer keeps one) or a DLPack capsule of ours (np.from_dlpack), up
 * to a Buffer; NULL where the chain ends elsewhere, with *end_p the object it
 * ends at (borrowed): NULL for an array with no base (private memory), else
 * an object C does not walk (owner_search.h's). *end_p is set only where it
 * returns NULL. */
static inline buffer_object_t *symmem__ext_owner_walk(module_state_t *st, PyObject *obj,
                                                      PyObject **end_p)
{
    buffer_object_t *ours;
    for (int depth = 0; depth < 16 && obj != NULL; depth++) {
        if (Py_IS_TYPE(obj, st->ndarray_type) && st->ndarray_base_in_c)
            obj = ((symmem__ext_ndarray_head_t *)obj)->base; /* the common case first */
        else if (Py_IS_TYPE(obj, st->buffer_type))
            return (buffer_object_t *)obj;
        else if (PyMemoryView_Check(obj))
            obj = PyMemoryView_GET_BUFFER(obj)->obj;
        else if (st->ndarray_type != NULL && PyObject_TypeCheck(obj, st->ndarray_type))
            obj = symmem__ext_ndarray_base(st, obj);
        else if (PyCapsule_CheckExact(obj) && (ours = symmem__ext_buffer_of_capsule(obj)) != NULL)
            return ours; /* np.from_dlpack(buffer) */
        else
            break;
    }
    *end_p = obj; /* an object not walked, or a chain too long */
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

#endif
