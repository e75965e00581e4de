/* The search of owner_search.h for the Buffer behind a view that left NumPy's
 * chain of bases: as_strided and sliding_window_view end it at a DummyArray,
 * np.asarray(obj) at obj, np.from_dlpack(a) at NumPy's DLPack capsule. After
 * free_array(a) and a new allocation at a's address, such a view would reach
 * the new allocation: its address alone cannot tell whose memory it was made
 * over.
 *
 * The design: the address decides whether there is anything to find, the
 * objects what it is. Memory outside every symmetric heap this process maps
 * (the core's device state block knows where they lie) cannot be a newer
 * allocation's and passes, as private memory does. Memory inside one must
 * lead to a Buffer covering it: an exporter keeps what it exports alive
 * (NumPy's protocol), so it holds the array it was made from. The search
 * asks the package's owner_of first (torch's and CuPy's ways), then follows,
 * breadth first and at most SEARCH_OBJECTS objects, what the garbage
 * collector's traversal shows an object holds (tp_traverse: attributes, a
 * dict's values, a tuple's items), arrays' .base, memoryviews' exporters,
 * and DLPack capsules: ours (the Buffer) and NumPy's (manager_ctx, the array
 * that exported it, as a probe has checked). A covering Buffer that was freed
 * refuses the view, a live one passes it, none refuses it too: nothing then
 * tells a stale view from a live one. Only views that leave the chain pay. */
#include "dlpack.h"
#include "errors.h"
#include "owner_search.h"

#define SEARCH_OBJECTS 64

/* The objects seen so far, each held (a new reference), in the order found. */
typedef struct {
    module_state_t *st;
    PyObject *items[SEARCH_OBJECTS];
    int count;
} search_t;

/* The (manager_ctx, deleter) of a capsule holding a DLPack tensor, whatever
 * a consumer renamed it to ("used_dltensor_versioned"); 0 where it holds
 * none. Sets no error. */
static int capsule_tensor(PyObject *capsule, void **context_p, void **deleter_p)
{
    const char *name = PyCapsule_GetName(capsule);
    void *pointer = PyCapsule_GetPointer(capsule, name);
    if (pointer == NULL || name == NULL || strstr(name, "dltensor") == NULL) {
        PyErr_Clear();
        return 0;
    }
    size_t len = strlen(name);
    if (len >= 10 && strcmp(name + len - 10, "_versioned") == 0) {
        DLManagedTensorVersioned *t = pointer;
        *context_p = t->manager_ctx;
        *deleter_p = (void *)t->deleter;
    } else {
        DLManagedTensor *t = pointer;
        *context_p = t->manager_ctx;
        *deleter_p = (void *)t->deleter;
    }
    return 1;
}

/* The array a NumPy DLPack capsule was exported from (borrowed), or NULL:
 * NumPy keeps the exporting array as manager_ctx, which the probe checked
 * for the deleter this capsule has. */
static PyObject *numpy_exporter(const module_state_t *st, PyObject *capsule)
{
    void *context, *deleter;
    if (!capsule_tensor(capsule, &context, &deleter) || deleter == NULL) return NULL;
    for (int i = 0; i < 2; i++)
        if (deleter == st->numpy_dlpack_deleters[i]) return (PyObject *)context;
    return NULL;
}

static void add(search_t *s, PyObject *obj)
{
    if (obj == NULL || s->count == SEARCH_OBJECTS || PyType_Check(obj) || PyModule_Check(obj))
        return;
    for (int i = 0; i < s->count; i++)
        if (s->items[i] == obj) return;
    s->items[s->count++] = Py_NewRef(obj);
}

/* tp_traverse's visit: every object the traversed one holds that may lead
 * to memory (anything the garbage collector tracks: containers, instances;
 * and the kinds that lead by themselves). */
static int visit(PyObject *obj, void *arg)
{
    search_t *s = arg;
    if (PyObject_IS_GC(obj) || Py_IS_TYPE(obj, s->st->buffer_type) || PyCapsule_CheckExact(obj) ||
        (s->st->ndarray_type != NULL && PyObject_TypeCheck(obj, s->st->ndarray_type)))
        add(s, obj);
    return 0;
}

/* The objects obj leads to, added to s. */
static void follow(search_t *s, PyObject *obj)
{
    module_state_t *st = s->st;
    if (st->ndarray_type != NULL && PyObject_TypeCheck(obj, st->ndarray_type))
        add(s, symmem__ext_ndarray_base(st, obj));
    else if (PyMemoryView_Check(obj))
        add(s, PyMemoryView_GET_BUFFER(obj)->obj);
    else if (PyCapsule_CheckExact(obj)) {
        buffer_object_t *ours = symmem__ext_buffer_of_capsule(obj);
        add(s, ours ? (PyObject *)ours : numpy_exporter(st, obj));
    } else if (PyObject_IS_GC(obj) && Py_TYPE(obj)->tp_traverse != NULL)
        Py_TYPE(obj)->tp_traverse(obj, visit, s);
}

int symmem__ext_owner_search(module_state_t *st, PyObject *ask, PyObject *end, const void *ptr,
                             size_t nbytes, buffer_object_t **found_p)
{
    *found_p = NULL;
    if (!symmem__heap_mapped_at(ptr, nbytes)) return SYMMEM__EXT_OWNER_LIVE;
    uintptr_t start = (uintptr_t)ptr;
    search_t s = {.st = st, .count = 0};
    buffer_object_t *live = NULL, *freed = NULL;
    PyObject *asked = NULL;
    if (ask != NULL && symmem__ext_owner_ask(st, ask, &asked) < 0) PyErr_Clear();
    add(&s, asked);
    Py_XDECREF(asked); /* s holds it */
    add(&s, end);
    for (int i = 0; i < s.count && freed == NULL; i++) {
        PyObject *obj = s.items[i];
        if (Py_IS_TYPE(obj, st->buffer_type)) {
            buffer_object_t *buf = (buffer_object_t *)obj;
            uintptr_t low = (uintptr_t)buf->ptr, high = low + (size_t)buf->size;
            if (start < low || start + nbytes > high) continue; /* not this memory's */
            if (!symmem__ext_buffer_usable(buf))
                freed = buf; /* one freed view is enough: the memory may be another's */
            else if (live == NULL)
                live = buf;
        } else {
            follow(&s, obj);
        }
    }
    PyErr_Clear(); /* a .base asked by name may have raised */
    /* Borrowed: end holds each of them (and end lives through the call). */
    *found_p = freed ? freed : live;
    for (int i = 0; i < s.count; i++) Py_DECREF(s.items[i]);
    return freed  ? SYMMEM__EXT_OWNER_FREED
           : live ? SYMMEM__EXT_OWNER_LIVE
                  : SYMMEM__EXT_OWNER_UNTRACED;
}

int symmem__ext_owner_search_check(module_state_t *st, PyObject *ask, PyObject *end,
                                   const void *ptr, size_t nbytes, const char *call,
                                   const char *arg, buffer_object_t **found_p)
{
    buffer_object_t *found;
    int answer = symmem__ext_owner_search(st, ask, end, ptr, nbytes, &found);
    if (found_p != NULL) *found_p = found;
    if (answer == SYMMEM__EXT_OWNER_LIVE) return 0;
    if (answer == SYMMEM__EXT_OWNER_FREED) return symmem__ext_owner_refuse(st, found, call, arg);
    symmem__ext_raise_invalid(st,
                              "%s: %s names symmetric memory at 0x%llx (%zu bytes) through an "
                              "object of type %s that leads to no array symmem made over it "
                              "(an exporter that keeps no reference to it), so symmem cannot tell "
                              "whether that array was freed and its address given to a newer "
                              "allocation, and refuses it; pass the array (or a NumPy view of "
                              "it), or keep a reference to it in the object that exports it",
                              call, arg, (unsigned long long)(uintptr_t)ptr, nbytes,
                              Py_TYPE(end)->tp_name);
    return -1;
}

void symmem__ext_owner_probe_dlpack(module_state_t *st)
{
    st->numpy_dlpack_deleters[0] = st->numpy_dlpack_deleters[1] = NULL;
    if (st->ndarray_type == NULL) return;
    PyObject *probe =
        PyObject_CallFunction((PyObject *)st->ndarray_type, "(n)s", (Py_ssize_t)4, "u1");
    PyObject *max_version = Py_BuildValue("(ii)", 1, 0);
    PyObject *kwargs = max_version ? Py_BuildValue("{s:O}", "max_version", max_version) : NULL;
    PyObject *method = probe ? PyObject_GetAttrString(probe, "__dlpack__") : NULL;
    for (int i = 0; method != NULL && kwargs != NULL && i < 2; i++) {
        /* [0]: a legacy export (no max_version), [1]: a versioned one (NumPy 2.1 on) */
        PyObject *empty = PyTuple_New(0);
        PyObject *capsule = empty ? PyObject_Call(method, empty, i ? kwargs : NULL) : NULL;
        void *context = NULL, *deleter = NULL;
        if (capsule != NULL && PyCapsule_CheckExact(capsule) &&
            capsule_tensor(capsule, &context, &deleter) && context == (void *)probe)
            st->numpy_dlpack_deleters[i] = deleter;
        Py_XDECREF(capsule); /* unconsumed: its destructor releases the probe */
        Py_XDECREF(empty);
        PyErr_Clear();
    }
    PyErr_Clear();
    Py_XDECREF(method);
    Py_XDECREF(kwargs);
    Py_XDECREF(max_version);
    Py_XDECREF(probe);
}
