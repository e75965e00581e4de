/* symmem.Buffer: a block of symmetric memory (or a view of a peer's copy).
 * It exports the buffer protocol (cpu) and DLPack; the exported capsule keeps
 * the Buffer alive and never frees symmetric memory. */
#include <stddef.h>

#include "args.h"
#include "buffer.h"
#include "concepts.h"
#include "dlpack.h"
#include "errors.h"
#include "../core/internal.h"

#include <structmember.h> /* T_PYSSIZET, READONLY (after Python.h) */

PyObject *symmem__ext_buffer_new(module_state_t *st, char *ptr, Py_ssize_t size, int pe, int owner,
                                 PyObject *base)
{
    buffer_object_t *buf = PyObject_GC_New(buffer_object_t, st->buffer_type);
    if (buf == NULL) return NULL;
    buf->ptr = ptr;
    buf->size = size;
    buf->pe = pe;
    buf->device = symmem_device();
    buf->owner = owner;
    buf->freed = 0;
    buf->base = Py_XNewRef(base);
    buf->weakrefs = NULL;
    if (base != NULL) buf->generation = ((buffer_object_t *)base)->generation;
    /* Size 0 has no address: a generation of its own, which finalize retires. */
    else
        buf->generation =
            ptr != NULL ? symmem__allocation_generation(ptr) : symmem__registry_new_generation();
    PyObject_GC_Track(buf);
    return (PyObject *)buf;
}

static int buffer_traverse(buffer_object_t *self, visitproc visit, void *arg)
{
    Py_VISIT(self->base);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int buffer_clear(buffer_object_t *self)
{
    Py_CLEAR(self->base);
    return 0;
}

static void buffer_dealloc(buffer_object_t *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (self->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject *)self);
    buffer_clear(self);
    type->tp_free(self);
    Py_DECREF(type);
}

static module_state_t *state_of(buffer_object_t *self)
{
    return symmem__ext_state(PyType_GetModule(Py_TYPE(self)));
}

static int buffer_getbuffer(buffer_object_t *self, Py_buffer *view, int flags)
{
    if (!symmem__ext_buffer_usable(self)) {
        symmem__ext_raise_invalid(state_of(self), "Buffer: the memory at 0x%llx was freed",
                                  (unsigned long long)(uintptr_t)self->ptr);
        return -1;
    }
    if (self->device >= 0) {
        /* The CPU must never touch GPU memory through a memoryview. */
        PyErr_Format(PyExc_BufferError,
                     "symmem.Buffer: device memory (cuda:%d) has no buffer protocol; use "
                     "__cuda_array_interface__ or __dlpack__ (CuPy, torch)",
                     self->device);
        return -1;
    }
    return PyBuffer_FillInfo(view, (PyObject *)self, self->ptr, self->size, 0, flags);
}

static PyObject *buffer_get_handle(buffer_object_t *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)self->ptr);
}

static PyObject *buffer_get_size(buffer_object_t *self, void *closure)
{
    (void)closure;
    return PyLong_FromSsize_t(self->size);
}

static PyObject *buffer_get_device(buffer_object_t *self, void *closure)
{
    (void)closure;
    if (self->device < 0) return PyUnicode_FromString("cpu");
    return PyUnicode_FromFormat("cuda:%d", self->device);
}

static PyObject *buffer_get_device_id(buffer_object_t *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(self->device);
}

/* Version 3 of the CUDA array interface: a 1-D uint8 array of the bytes. */
static PyObject *buffer_get_cai(buffer_object_t *self, void *closure)
{
    (void)closure;
    if (self->device < 0) {
        PyErr_SetString(PyExc_AttributeError,
                        "__cuda_array_interface__: this Buffer is host memory");
        return NULL;
    }
    if (!symmem__ext_buffer_usable(self))
        return symmem__ext_raise_invalid(state_of(self),
                                         "__cuda_array_interface__: the Buffer was freed");
    return Py_BuildValue("{s:(n),s:s,s:(KO),s:i,s:O,s:O}", "shape", self->size, "typestr", "|u1",
                         "data", (unsigned long long)(uintptr_t)self->ptr, Py_False, "version", 3,
                         "strides", Py_None, "stream", Py_None);
}

static PyObject *buffer_get_pe(buffer_object_t *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(self->pe);
}

static PyObject *buffer_get_freed(buffer_object_t *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(!symmem__ext_buffer_usable(self));
}

/* ---- DLPack ---- */

/* What a capsule owns: the managed tensor, its shape, and a Buffer reference. */
typedef struct {
    DLManagedTensorVersioned versioned;
    DLManagedTensor legacy;
    int64_t shape[1];
    int64_t strides[1];
    PyObject *owner;
} dlpack_export_t;

static void release_export(dlpack_export_t *export)
{
    /* May run without the GIL (called by a consumer's deleter). */
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_XDECREF(export->owner);
    PyGILState_Release(gil);
    PyMem_RawFree(export);
}

static void delete_versioned(DLManagedTensorVersioned *self)
{
    release_export((dlpack_export_t *)self->manager_ctx);
}

static void delete_legacy(DLManagedTensor *self)
{
    release_export((dlpack_export_t *)self->manager_ctx);
}

/* The Buffer behind a capsule that holds one of our exports, whatever the
 * consumer renamed it to (NumPy's from_dlpack keeps "numpy_dltensor..." as
 * the array's .base): ours where the deleter is ours. Borrowed, or NULL. */
buffer_object_t *symmem__ext_buffer_of_capsule(PyObject *capsule)
{
    const char *name = PyCapsule_GetName(capsule);
    void *pointer = PyCapsule_GetPointer(capsule, name);
    if (pointer == NULL) {
        PyErr_Clear();
        return NULL;
    }
    size_t len = name ? strlen(name) : 0;
    dlpack_export_t *export = NULL;
    if (len >= 10 && strcmp(name + len - 10, "_versioned") == 0) {
        DLManagedTensorVersioned *t = pointer;
        if (t->deleter == delete_versioned) export = t->manager_ctx;
    } else if (name != NULL && strstr(name, "dltensor") != NULL) {
        DLManagedTensor *t = pointer;
        if (t->deleter == delete_legacy) export = t->manager_ctx;
    }
    return export ? (buffer_object_t *)export->owner : NULL;
}

/* Frees an export nobody consumed (the capsule still has its first name). */
static void capsule_destructor(PyObject *capsule)
{
    if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        DLManagedTensorVersioned *t = PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (t->deleter) t->deleter(t);
    } else if (PyCapsule_IsValid(capsule, "dltensor")) {
        DLManagedTensor *t = PyCapsule_GetPointer(capsule, "dltensor");
        if (t->deleter) t->deleter(t);
    }
}

static PyObject *buffer_dlpack_impl(buffer_object_t *self, PyObject *max_version, PyObject *copy)
{
    module_state_t *st = state_of(self);
    if (!symmem__ext_buffer_usable(self))
        return symmem__ext_raise_invalid(st, "__dlpack__: the Buffer was freed");
    if (copy == Py_True)
        return symmem__ext_raise_invalid(st, "__dlpack__: copy=True is not supported: a copy "
                                             "would not be symmetric memory");
    if (copy != Py_None && copy != Py_False)
        return symmem__ext_raise_invalid(st,
                                         "__dlpack__: copy must be None, True or False, "
                                         "got %s",
                                         Py_TYPE(copy)->tp_name);
    int versioned = 0;
    if (max_version != Py_None) {
        /* DLPack: a (major, minor) tuple of ints, the newest the consumer reads. */
        long major = -1;
        if (PyTuple_Check(max_version) && PyTuple_GET_SIZE(max_version) == 2 &&
            PyLong_Check(PyTuple_GET_ITEM(max_version, 0)) &&
            PyLong_Check(PyTuple_GET_ITEM(max_version, 1)))
            major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
        PyErr_Clear();
        if (major < 0) {
            PyObject *repr = PyObject_Repr(max_version);
            symmem__ext_raise_invalid(st,
                                      "__dlpack__: max_version=%.60s is not None or a "
                                      "(major, minor) tuple of ints >= 0",
                                      repr ? PyUnicode_AsUTF8(repr) : "?");
            Py_XDECREF(repr);
            return NULL;
        }
        versioned = major >= 1;
    }
    dlpack_export_t *export = PyMem_RawCalloc(1, sizeof(*export));
    if (export == NULL) return PyErr_NoMemory();
    export->shape[0] = self->size;
    export->strides[0] = 1;
    export->owner = Py_NewRef((PyObject *)self);
    DLTensor tensor = {
        .data = self->ptr,
        .device = self->device < 0 ? (DLDevice){kDLCPU, 0} : (DLDevice){kDLCUDA, self->device},
        .ndim = 1,
        .dtype = {kDLUInt, 8, 1},
        .shape = export->shape,
        .strides = export->strides,
        .byte_offset = 0,
    };
    PyObject *capsule;
    if (versioned) {
        export->versioned.version = (DLPackVersion){DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
        export->versioned.manager_ctx = export;
        export->versioned.deleter = delete_versioned;
        export->versioned.dl_tensor = tensor;
        capsule = PyCapsule_New(&export->versioned, "dltensor_versioned", capsule_destructor);
    } else {
        export->legacy.manager_ctx = export;
        export->legacy.deleter = delete_legacy;
        export->legacy.dl_tensor = tensor;
        capsule = PyCapsule_New(&export->legacy, "dltensor", capsule_destructor);
    }
    if (capsule == NULL) release_export(export);
    return capsule;
}

/* __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None):
 * the stream needs no ordering (the memory is ready) and dl_device no copy. */
static PyObject *buffer_dlpack(buffer_object_t *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    static const char *const names[] = {"stream", "max_version", "dl_device", "copy", NULL};
    static const symmem__ext_params_t params = {"__dlpack__", names, 0, 0};
    PyObject *v[4];
    if (symmem__ext_parse(state_of(self), &params, args, nargs, kwnames, v) < 0) return NULL;
    return buffer_dlpack_impl(self, v[1] ? v[1] : Py_None, v[3] ? v[3] : Py_None);
}

static PyObject *buffer_dlpack_device(buffer_object_t *self, PyObject *unused)
{
    (void)unused;
    if (self->device < 0) return Py_BuildValue("(ii)", kDLCPU, 0);
    return Py_BuildValue("(ii)", kDLCUDA, self->device);
}

static PyObject *buffer_repr(buffer_object_t *self)
{
    /* PyUnicode_FromFormat has no %llx: format the address here. */
    char address[32];
    snprintf(address, sizeof(address), "0x%llx", (unsigned long long)(uintptr_t)self->ptr);
    return PyUnicode_FromFormat("<symmem.Buffer %s%s size=%zd pe=%d%s>",
                                self->owner ? "" : "peer view ", address, self->size, self->pe,
                                symmem__ext_buffer_usable(self) ? "" : " freed");
}

static PyGetSetDef buffer_getset[] = {
    {"handle", (getter)buffer_get_handle, NULL, "The address of the memory (int).", NULL},
    {"ptr", (getter)buffer_get_handle, NULL, "Alias of handle.", NULL},
    {"size", (getter)buffer_get_size, NULL, "Size in bytes.", NULL},
    {"device", (getter)buffer_get_device, NULL, "Where the memory is: 'cpu' or 'cuda:N'.", NULL},
    {"device_id", (getter)buffer_get_device_id, NULL, "CUDA ordinal, -1 for host memory.", NULL},
    {"__cuda_array_interface__", (getter)buffer_get_cai, NULL, "CUDA array interface (gpu).", NULL},
    {"pe", (getter)buffer_get_pe, NULL, "Whose copy of the memory this is.", NULL},
    {"freed", (getter)buffer_get_freed, NULL, "True once free() released it.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef buffer_methods[] = {
    SYMMEM__EXT_METHOD(
        "__dlpack__", buffer_dlpack,
        "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n"
        "--\n\nA DLPack capsule over the bytes (a 1-D uint8 tensor)."),
    SYMMEM__EXT_NOARGS(
        "__dlpack_device__", buffer_dlpack_device,
        "__dlpack_device__($self, /)\n--\n\n(device_type, device_id) of the memory."),
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(buffer_doc,
             "Buffer()\n--\n\n"
             "A block of symmetric memory, or a view of a peer's copy of one.\n\n"
             "Made by symmem.buffer() (and under every array and tensor symmem makes),\n"
             "get_peer_buffer() and register_external_buffer(); never directly.\n"
             ".handle is its address on this PE, .size its bytes, .device where it is\n"
             "('cpu' or 'cuda:N'). Host memory (the cpu backend) has the buffer\n"
             "protocol, so memoryview() and np.frombuffer() read it; every Buffer has\n"
             "__dlpack__, and device memory __cuda_array_interface__, for\n"
             "torch.from_dlpack() and CuPy. Any call that takes memory takes a Buffer\n"
             "(as bytes: give dtype= where the call needs elements). Using one after\n"
             "free() raises NvshmemInvalid; it never touches unmapped memory.\n\n"
             "Example:\n"
             "    >>> buf = symmem.buffer(16)\n"
             "    >>> buf.size, buf.pe == symmem.my_pe()\n"
             "    (16, True)\n"
             "    >>> words = np.frombuffer(buf, dtype=np.int32)  # cpu backend\n"
             "    >>> words[:] = 7\n"
             "    >>> symmem.atomic_add(buf, 1, offset=2, dtype=\"int32\")\n"
             "    >>> words.tolist()\n"
             "    [7, 7, 8, 7]\n"
             "    >>> del words\n"
             "    >>> symmem.free(buf)\n"
             "    >>> buf.freed\n"
             "    True\n");

/* Weak references, for the package's set of Buffers (heap types name the
 * slot this way before Python 3.12's Py_TPFLAGS_MANAGED_WEAKREF). */
static PyMemberDef buffer_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(buffer_object_t, weakrefs), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot buffer_slots[] = {
    {Py_tp_members, buffer_members},
    {Py_tp_doc, (void *)buffer_doc}, /* PyType_FromSpec copies it */
    {Py_tp_dealloc, buffer_dealloc},
    {Py_tp_traverse, buffer_traverse},
    {Py_tp_clear, buffer_clear},
    {Py_tp_repr, buffer_repr},
    {Py_tp_getset, buffer_getset},
    {Py_tp_methods, buffer_methods},
    {Py_bf_getbuffer, buffer_getbuffer},
    {0, NULL},
};

static PyType_Spec buffer_spec = {
    .name = "symmem.Buffer",
    .basicsize = sizeof(buffer_object_t),
    /* Not instantiable: a Buffer made by Buffer() would have no memory. */
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = buffer_slots,
};

int symmem__ext_buffer_exec(PyObject *module)
{
    module_state_t *st = symmem__ext_state(module);
    st->buffer_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &buffer_spec, NULL);
    if (st->buffer_type == NULL) return -1;
    return PyModule_AddObjectRef(module, "Buffer", (PyObject *)st->buffer_type);
}
