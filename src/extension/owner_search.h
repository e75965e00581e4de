/* The search for the Buffer behind a view that left NumPy's chain of bases
 * (owner_search.c says how), and the check of every argument that is not a
 * Buffer itself: owner.h's walk, then this search where the walk ends at an
 * object it does not know. */
#ifndef SYMMEM_EXT_OWNER_SEARCH_H
#define SYMMEM_EXT_OWNER_SEARCH_H

#include "owner.h"

/* What the memory [ptr, ptr + nbytes) an object names belongs to, where
 * its chain ended at end (an object the walk does not know, or a foreign
 * DLPack capsule); ask (NULL: none) is the object to ask the package's
 * owner_of about first. OWNER_LIVE where the memory is in no symmetric heap
 * this process maps, or a Buffer found covering it is live (*found_p,
 * borrowed: NULL where none was looked for); OWNER_FREED where one covering
 * it was freed (*found_p); OWNER_UNTRACED where none covers it among what
 * ask's answer and end hold. Called with the GIL; sets no error. */
enum { SYMMEM__EXT_OWNER_LIVE, SYMMEM__EXT_OWNER_FREED, SYMMEM__EXT_OWNER_UNTRACED };
int symmem__ext_owner_search(module_state_t *st, PyObject *ask, PyObject *end, const void *ptr,
                             size_t nbytes, buffer_object_t **found_p);

/* owner_search's answer as an error: 0 (*found_p as there, if found_p) for
 * OWNER_LIVE, else -1 with NvshmemInvalid naming call and arg. */
int symmem__ext_owner_search_check(module_state_t *st, PyObject *ask, PyObject *end,
                                   const void *ptr, size_t nbytes, const char *call,
                                   const char *arg, buffer_object_t **found_p);

/* 0 if the memory [ptr, ptr + nbytes) that obj names may be used: the Buffer
 * its chain leads to is live, or the chain ends at private memory, or
 * owner_search finds it live; else -1 with NvshmemInvalid naming call and
 * arg. The check of every argument that is not a Buffer itself. */
static inline int symmem__ext_owner_verify(module_state_t *st, PyObject *obj, const void *ptr,
                                           size_t nbytes, const char *call, const char *arg)
{
    PyObject *end;
    buffer_object_t *buf = symmem__ext_owner_walk(st, obj, &end);
    if (buf != NULL || end == NULL) return symmem__ext_owner_check(st, buf, call, arg);
    return symmem__ext_owner_search_check(st, obj, end, ptr, nbytes, call, arg, NULL);
}

/* Finds NumPy's DLPack deleters (st->numpy_dlpack_deleters) by exporting a
 * probe array of st->ndarray_type: where the capsule's manager_ctx is the
 * probe, that deleter marks a capsule whose manager_ctx is the array it
 * exports. Sets no error. */
void symmem__ext_owner_probe_dlpack(module_state_t *st);

#endif
