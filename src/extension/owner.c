/* The out-of-line parts of owner.h: the package's hook and the refusal. */
#include "errors.h"
#include "owner.h"

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
