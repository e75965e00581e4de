/* What module.c calls while executing the module: each concept file adds
 * its functions, constants and tables (and errors.c and buffer_type.c their
 * types); 0, or -1 with an exception set. */
#ifndef SYMMEM_EXT_CONCEPTS_H
#define SYMMEM_EXT_CONCEPTS_H

#include "extension.h"

int symmem__ext_errors_exec(PyObject *module);       /* errors.c: exception types first */
int symmem__ext_exceptions_exec(PyObject *module);   /* exceptions.c */
int symmem__ext_buffer_exec(PyObject *module);       /* buffer_type.c */
int symmem__ext_resolve_exec(PyObject *module);      /* resolve.c */
int symmem__ext_ndarray_fast_exec(PyObject *module); /* ndarray_fast.c */
int symmem__ext_vocabulary_exec(PyObject *module);   /* vocabulary.c */
int symmem__ext_dtypes_exec(PyObject *module);       /* dtypes.c */
int symmem__ext_lifecycle_exec(PyObject *module);    /* lifecycle.c */
int symmem__ext_memory_exec(PyObject *module);       /* memory.c */
int symmem__ext_rma_exec(PyObject *module);          /* rma.c */
int symmem__ext_p_g_exec(PyObject *module);          /* p_g.c */
int symmem__ext_signals_exec(PyObject *module);      /* signals.c */
int symmem__ext_sync_exec(PyObject *module);         /* sync.c */
int symmem__ext_teams_exec(PyObject *module);        /* teams.c */
int symmem__ext_atomics_exec(PyObject *module);      /* atomics.c */
int symmem__ext_collectives_exec(PyObject *module);  /* collectives.c */
int symmem__ext_device_exec(PyObject *module);       /* device.c */
int symmem__ext_raw_memory_exec(PyObject *module);   /* raw_memory.c */
int symmem__ext_library_info_exec(PyObject *module); /* library_info.c */

#endif
