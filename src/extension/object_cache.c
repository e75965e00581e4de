/* The object cache of object_cache.h: one slot per address hash. */
#include "object_cache.h"

#include <string.h>

static size_t slot_of(PyObject *obj)
{
    return ((uintptr_t)obj >> 4) % OBJECT_CACHE_SIZE;
}

const cache_entry_t *symmem__ext_object_cache_find(const object_cache_t *cache, PyObject *obj)
{
    const cache_entry_t *entry = &cache->entries[slot_of(obj)];
    if (entry->ref == NULL) return NULL;
    /* A borrowed reference; Py_None once the object has died. */
    if (PyWeakref_GetObject(entry->ref) != obj) return NULL;
    return entry->owner == NULL || PyWeakref_GetObject(entry->owner) != Py_None ? entry : NULL;
}

PyObject *symmem__ext_object_cache_owner(const cache_entry_t *entry)
{
    return entry->owner != NULL ? PyWeakref_GetObject(entry->owner) : NULL;
}

static int may_cache(PyObject *obj)
{
    PyTypeObject *type = Py_TYPE(obj);
    return type->tp_weaklistoffset != 0 && strncmp(type->tp_name, "torch.", 6) != 0;
}

void symmem__ext_object_cache_store(object_cache_t *cache, PyObject *obj,
                                    const cache_entry_t *value)
{
    if (!may_cache(obj)) return;
    PyObject *ref = PyWeakref_NewRef(obj, NULL);
    PyObject *owner = ref && value->owner ? PyWeakref_NewRef(value->owner, NULL) : NULL;
    if (ref == NULL || (value->owner != NULL && owner == NULL)) {
        PyErr_Clear();
        Py_XDECREF(ref);
        return;
    }
    cache_entry_t *entry = &cache->entries[slot_of(obj)];
    Py_XDECREF(entry->ref);
    Py_XDECREF(entry->owner);
    *entry = *value;
    entry->ref = ref;
    entry->owner = owner;
}

void symmem__ext_object_cache_clear(object_cache_t *cache)
{
    for (size_t i = 0; i < OBJECT_CACHE_SIZE; i++) {
        Py_CLEAR(cache->entries[i].ref);
        Py_CLEAR(cache->entries[i].owner);
    }
}
