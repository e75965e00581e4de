/* symmem._symmem: the module definition. Multi-phase init: executing the
 * module has each concept file add its part; the exceptions, the Buffer type
 * and the resolver live in module state (no C globals). */
#include "args.h"
#include "concepts.h"
#include "ndarray_fast.h"
#include "../core/internal.h"

static int module_exec(PyObject *module)
{
    symmem__launcher_link(); /* a PE of symmem.run dies with it, even before init */
    /* The exception types first: every other part may raise them. */
    static int (*const parts[])(PyObject *) = {
        symmem__ext_errors_exec,       symmem__ext_exceptions_exec,   symmem__ext_buffer_exec,
        symmem__ext_resolve_exec,      symmem__ext_ndarray_fast_exec, symmem__ext_vocabulary_exec,
        symmem__ext_dtypes_exec,       symmem__ext_lifecycle_exec,    symmem__ext_memory_exec,
        symmem__ext_rma_exec,          symmem__ext_p_g_exec,          symmem__ext_signals_exec,
        symmem__ext_sync_exec,         symmem__ext_teams_exec,        symmem__ext_atomics_exec,
        symmem__ext_collectives_exec,  symmem__ext_device_exec,       symmem__ext_raw_memory_exec,
        symmem__ext_library_info_exec,
    };
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        if (parts[i](module) < 0) return -1;
    return 0;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    module_state_t *st = symmem__ext_state(module);
    Py_VISIT(st->error_type);
    Py_VISIT(st->invalid_type);
    Py_VISIT(st->buffer_type);
    Py_VISIT(st->resolver);
    Py_VISIT(st->owner_of);
    Py_VISIT(st->dtype_namer);
    Py_VISIT(st->ndarray_type);
    return 0;
}

static int module_clear(PyObject *module)
{
    module_state_t *st = symmem__ext_state(module);
    Py_CLEAR(st->error_type);
    Py_CLEAR(st->invalid_type);
    Py_CLEAR(st->buffer_type);
    Py_CLEAR(st->resolver);
    Py_CLEAR(st->owner_of);
    Py_CLEAR(st->dtype_namer);
    Py_CLEAR(st->ndarray_type);
    symmem__ext_ndarray_forget(st);
    symmem__ext_keywords_clear(st);
    symmem__ext_object_cache_clear(&st->arrays);
    symmem__ext_object_cache_clear(&st->streams);
    return 0;
}

static void module_free(void *module)
{
    module_clear((PyObject *)module);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "symmem._symmem",
    .m_doc = "The C core of symmem: symmetric memory, one-sided operations, signals.",
    .m_size = sizeof(module_state_t),
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__symmem(void)
{
    return PyModuleDef_Init(&module_def);
}
