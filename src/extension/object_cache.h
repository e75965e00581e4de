/* What an object resolved to (its memory, or a stream handle), remembered
 * while the object lives: a weak reference keys each entry, so a dead object
 * never matches, and an address can't be mistaken for a new object's. It
 * spares CuPy arrays and stream objects a __cuda_array_interface__ dict or a
 * __cuda_stream__ tuple on every call. Only types whose memory can't move
 * under an existing object are stored (not torch tensors: resize_ moves them).
 * The entry holds the Buffer the memory belongs to weakly too: a strong
 * reference outlived its object (until the slot was reused) and kept a freed
 * allocation's Buffer alive, so that a tensor or array torch or CuPy made
 * over the newer allocation at its address was refused as ambiguous. */
#ifndef SYMMEM_OBJECT_CACHE_H
#define SYMMEM_OBJECT_CACHE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define OBJECT_CACHE_SIZE 64

typedef struct {
    PyObject *ref; /* weak reference to the object; NULL if the slot is empty */
    char *ptr;     /* the memory, or the stream handle */
    Py_ssize_t nbytes;
    Py_ssize_t itemsize;
    char format[16];
    int readonly;
    unsigned char order; /* resolve.h's SYMMEM__EXT_ORDER_* */
    PyObject *owner;     /* store's argument: the Buffer the memory belongs to, or NULL;
                            in the cache: a weak reference to it, or NULL */
} cache_entry_t;

typedef struct {
    cache_entry_t entries[OBJECT_CACHE_SIZE];
} object_cache_t;

/* The entry for obj, or NULL (also where the Buffer it named has died:
 * the caller then resolves obj afresh). */
const cache_entry_t *symmem__ext_object_cache_find(const object_cache_t *cache, PyObject *obj);
/* The Buffer of an entry that find gave (borrowed), or NULL: none. */
PyObject *symmem__ext_object_cache_owner(const cache_entry_t *entry);
/* Remembers value for obj if obj's type may be cached (no error either way);
 * the entry holds value->owner by a weak reference. */
void symmem__ext_object_cache_store(object_cache_t *cache, PyObject *obj,
                                    const cache_entry_t *value);
void symmem__ext_object_cache_clear(object_cache_t *cache);

#endif
