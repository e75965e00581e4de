/* Teams, collectives and atomics from Python. Element counts come from src:
 * reduce/broadcast move src's elements, fcollect gathers team_n_pes blocks
 * of src's size, alltoall and reducescatter split src into team_n_pes
 * blocks; a dst that is too small is an error before any PE communicates. */
#include <string.h>

#include "symmem_python.h"

static int as_int(module_state_t *st, PyObject *obj, const char *call, const char *arg, int *out)
{
    long value = PyLong_AsLong(obj);
    if (value == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        raise_invalid(st, "%s: %s must be an int, got %s", call, arg, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (value < INT32_MIN || value > INT32_MAX) {
        raise_invalid(st, "%s: %s=%ld is out of range", call, arg, value);
        return -1;
    }
    *out = (int)value;
    return 0;
}

static PyObject *done(module_state_t *st, symmem_status_t status)
{
    return status == SYMMEM_OK ? Py_NewRef(Py_None) : raise_status(st, status);
}

/* ---- teams ---- */

static PyObject *py_team_query(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    /* (what, team[, pe, dest_team]): 0 my_pe, 1 n_pes, 2 translate, 3 world_pe */
    int what, team, pe = 0, dest = 0;
    module_state_t *st = module_state(module);
    if (nargs < 2 || as_int(st, args[0], "team", "what", &what) < 0 ||
        as_int(st, args[1], "team", "team", &team) < 0 ||
        (nargs > 2 && as_int(st, args[2], "team", "pe", &pe) < 0) ||
        (nargs > 3 && as_int(st, args[3], "team", "dest_team", &dest) < 0))
        return NULL;
    switch (what) {
    case 0: return PyLong_FromLong(symmem_team_my_pe(team));
    case 1: return PyLong_FromLong(symmem_team_n_pes(team));
    case 2: return PyLong_FromLong(symmem_team_translate_pe(team, pe, dest));
    default: return PyLong_FromLong(symmem_team_world_pe(team, pe));
    }
}

static PyObject *py_team_split_strided(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    module_state_t *st = module_state(module);
    const char *call = "team_split_strided";
    int parent, start, stride, size;
    if (nargs != 4 || as_int(st, args[0], call, "parent_team", &parent) < 0 ||
        as_int(st, args[1], call, "start", &start) < 0 ||
        as_int(st, args[2], call, "stride", &stride) < 0 ||
        as_int(st, args[3], call, "size", &size) < 0)
        return NULL;
    symmem_team_t team;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_team_split_strided(parent, start, stride, size, &team);
    Py_END_ALLOW_THREADS
    return status == SYMMEM_OK ? PyLong_FromLong(team) : raise_status(st, status);
}

static PyObject *py_team_split_2d(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    module_state_t *st = module_state(module);
    int parent, xrange;
    if (nargs != 2 || as_int(st, args[0], "team_split_2d", "parent_team", &parent) < 0 ||
        as_int(st, args[1], "team_split_2d", "xrange", &xrange) < 0)
        return NULL;
    symmem_team_t x, y;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_team_split_2d(parent, xrange, &x, &y);
    Py_END_ALLOW_THREADS
    return status == SYMMEM_OK ? Py_BuildValue("(ii)", x, y) : raise_status(st, status);
}

/* team_init(key, npes, index) -> handle */
static PyObject *py_team_init(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    module_state_t *st = module_state(module);
    int npes, index;
    if (nargs != 3) return raise_invalid(st, "team_init: bad internal call");
    unsigned long long key = PyLong_AsUnsignedLongLongMask(args[0]);
    if ((key == (unsigned long long)-1 && PyErr_Occurred()) ||
        as_int(st, args[1], "team_init", "npes", &npes) < 0 ||
        as_int(st, args[2], "team_init", "pe_idx_in_team", &index) < 0)
        return NULL;
    symmem_team_t team;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_team_init(key, npes, index, &team);
    Py_END_ALLOW_THREADS
    return status == SYMMEM_OK ? PyLong_FromLong(team) : raise_status(st, status);
}

static PyObject *py_team_destroy(PyObject *module, PyObject *arg)
{
    module_state_t *st = module_state(module);
    int team;
    if (as_int(st, arg, "team_destroy", "team", &team) < 0) return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_team_destroy(team);
    Py_END_ALLOW_THREADS
    return done(st, status);
}

/* team_barrier(kind, team, stream): kind 0 barrier, 1 sync */
static PyObject *py_team_barrier(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    module_state_t *st = module_state(module);
    int kind, team;
    symmem_stream_t stream;
    if (nargs != 3 || as_int(st, args[0], "barrier", "kind", &kind) < 0 ||
        as_int(st, args[1], kind ? "sync" : "barrier", "team", &team) < 0 ||
        stream_resolve(st, args[2], kind ? "sync" : "barrier", &stream) < 0)
        return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = kind ? symmem_team_sync(team, stream) : symmem_team_barrier(team, stream);
    Py_END_ALLOW_THREADS
    return done(st, status);
}

/* ---- collectives ---- */

static const char *const collective_names[] = {"reduce", "reducescatter", "alltoall",
                                                "fcollect", "broadcast", NULL};
enum { REDUCE, REDUCESCATTER, ALLTOALL, FCOLLECT, BROADCAST };

/* The symmem dtype of mem, or of dtype_name when given (raw Buffers). */
static int collective_dtype(module_state_t *st, const memory_t *mem, PyObject *dtype_name,
                            const char *call, const char *arg)
{
    if (dtype_name != Py_None) {
        const char *name = PyUnicode_AsUTF8(dtype_name);
        if (name == NULL) return -1;
        for (int d = 0; d < SYMMEM_DTYPE_COUNT; d++)
            if (strcmp(name, symmem_dtype_name(d)) == 0) return d;
        raise_invalid(st, "%s: dtype='%s' is not a symmem dtype", call, name);
        return -1;
    }
    int dtype = memory_dtype(mem);
    if (dtype < 0)
        raise_invalid(st, "%s: %s has element format '%s', which is not a dtype symmem can "
                          "reduce or move", call, arg, mem->format);
    return dtype;
}

/* One collective, its arguments converted; dtype_name is Py_None except
 * for collective_on_buffer's raw Buffers. */
static PyObject *run_collective(module_state_t *st, int kind, int team, PyObject *dst_obj,
                                PyObject *src_obj, int op, int root, symmem_stream_t stream,
                                PyObject *dtype_name)
{
    const char *call = collective_names[kind];
    memory_t dst, src;
    if (memory_resolve(st, dst_obj, 0, call, "dst", &dst) < 0) return NULL;
    if (memory_resolve(st, src_obj, 0, call, "src", &src) < 0) {
        memory_release(&dst);
        return NULL;
    }
    PyObject *result = NULL;
    int n = symmem_team_n_pes(team);
    int ddt = collective_dtype(st, &dst, dtype_name, call, "dst");
    int sdt = ddt < 0 ? -1 : collective_dtype(st, &src, dtype_name, call, "src");
    if (sdt < 0) goto out;
    if (ddt != sdt) {
        raise_invalid(st, "%s: dst is %s but src is %s; they must match", call,
                      symmem_dtype_name(ddt), symmem_dtype_name(sdt));
        goto out;
    }
    if (n < 1) {
        if (!symmem_initialized())
            raise_invalid(st, "%s: symmem is not initialized (call init() first)", call);
        else
            raise_invalid(st, "%s: team=%d is not a valid team (never created, destroyed, or "
                              "this PE is not a member)", call, team);
        goto out;
    }
    size_t size = symmem_dtype_size(sdt);
    size_t src_elems = (size_t)src.nbytes / size, dst_elems = (size_t)dst.nbytes / size;
    size_t block = src_elems, need = src_elems;
    if (kind == ALLTOALL || kind == REDUCESCATTER) {
        if (src_elems % (size_t)n != 0) {
            raise_invalid(st, "%s: src has %zu elements, not a multiple of the team's %d PEs",
                          call, src_elems, n);
            goto out;
        }
        block = src_elems / (size_t)n;
        need = kind == ALLTOALL ? src_elems : block;
    } else if (kind == FCOLLECT) {
        need = src_elems * (size_t)n;
    }
    if (dst_elems < need) {
        raise_invalid(st, "%s: dst has %zu elements but needs %zu (src has %zu, team of %d PEs)",
                      call, dst_elems, need, src_elems, n);
        goto out;
    }
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    switch (kind) {
    case REDUCE: status = symmem_reduce(team, dst.ptr, src.ptr, block, sdt, op, stream); break;
    case REDUCESCATTER:
        status = symmem_reducescatter(team, dst.ptr, src.ptr, block, sdt, op, stream);
        break;
    case ALLTOALL: status = symmem_alltoall(team, dst.ptr, src.ptr, block * size, stream); break;
    case FCOLLECT: status = symmem_fcollect(team, dst.ptr, src.ptr, block * size, stream); break;
    default: status = symmem_broadcast(team, dst.ptr, src.ptr, block * size, root, stream); break;
    }
    Py_END_ALLOW_THREADS
    result = done(st, status);
out:
    memory_release(&src);
    memory_release(&dst);
    return result;
}

/* collective(kind, team, dst, src, op, root, stream, dtype_name): what
 * collective_on_buffer calls. */
static PyObject *py_collective(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    module_state_t *st = module_state(module);
    int kind, team, op, root;
    if (nargs != 8 || as_int(st, args[0], "collective", "kind", &kind) < 0 || kind < 0 ||
        kind > BROADCAST)
        return raise_invalid(st, "collective: bad internal call");
    const char *call = collective_names[kind];
    symmem_stream_t stream;
    if (team_arg(st, args[1], call, &team) < 0 || as_int(st, args[4], call, "op", &op) < 0 ||
        as_int(st, args[5], call, "root", &root) < 0 ||
        stream_resolve(st, args[6], call, &stream) < 0)
        return NULL;
    return run_collective(st, kind, team, args[2], args[3], op, root, stream, args[7]);
}

static const char *const reduce_op_names[] = {"sum", "min", "max", "prod", "and", "or", "xor"};

/* A reduction op: a name ('sum'), or an object whose .name is one (an enum). */
static int reduce_op(module_state_t *st, PyObject *obj, const char *call, int *op_p)
{
    if (PyUnicode_Check(obj)) /* the common case, without a lower() call */
        for (int op = 0; op < SYMMEM_OP_COUNT; op++)
            if (PyUnicode_CompareWithASCIIString(obj, reduce_op_names[op]) == 0) {
                *op_p = op;
                return 0;
            }
    PyObject *name = PyUnicode_Check(obj) ? Py_NewRef(obj) : PyObject_GetAttrString(obj, "name");
    PyObject *lower = name && PyUnicode_Check(name) ? PyObject_CallMethod(name, "lower", NULL)
                                                   : NULL;
    const char *text = lower ? PyUnicode_AsUTF8(lower) : NULL;
    *op_p = -1;
    for (int op = 0; text && op < SYMMEM_OP_COUNT; op++)
        if (strcmp(text, reduce_op_names[op]) == 0) *op_p = op;
    Py_XDECREF(lower);
    Py_XDECREF(name);
    PyErr_Clear();
    if (*op_p >= 0) return 0;
    PyObject *repr = PyObject_Repr(obj);
    raise_invalid(st, "%s: op=%s is not one of sum, min, max, prod, and, or, xor", call,
                  repr ? PyUnicode_AsUTF8(repr) : "?");
    Py_XDECREF(repr);
    return -1;
}

/* reduce(team, dst, src, op, stream=None) and the others, parsed in C: a
 * collective is a hot call in a training loop. */
static PyObject *collective_call(PyObject *module, int kind, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    /* The contract's names, and NVSHMEM4Py's (dst_array, src_array). */
    static const char *const with_op[] = {"team", "dst|dst_array", "src|src_array", "op",
                                          "stream"};
    static const char *const plain[] = {"team", "dst|dst_array", "src|src_array", "stream"};
    static const char *const rooted[] = {"team", "dst|dst_array", "src|src_array", "root",
                                         "stream"};
    module_state_t *st = module_state(module);
    const char *call = collective_names[kind];
    int reduction = kind == REDUCE || kind == REDUCESCATTER;
    const char *const *names = reduction ? with_op : kind == BROADCAST ? rooted : plain;
    int nnames = kind == ALLTOALL || kind == FCOLLECT ? 4 : 5;
    PyObject *v[5];
    if (parse_args(st, call, names, nnames, reduction ? 4 : 3, args, nargs, kwnames, v) < 0)
        return NULL;
    int team, op = 0, root = 0;
    symmem_stream_t stream;
    PyObject *stream_obj = v[nnames - 1];
    if (team_arg(st, v[0], call, &team) < 0 ||
        (reduction && reduce_op(st, v[3], call, &op) < 0) ||
        stream_resolve(st, stream_obj, call, &stream) < 0)
        return NULL;
    if (kind == BROADCAST && v[3] != NULL) {
        if (PyBool_Check(v[3]) || !PyLong_Check(v[3]))
            return raise_invalid(st, "%s: root of type %s must be an int", call,
                                 Py_TYPE(v[3])->tp_name);
        if (as_int(st, v[3], call, "root", &root) < 0) return NULL;
    }
    return run_collective(st, kind, team, v[1], v[2], op, root, stream, Py_None);
}

#define COLLECTIVE(name, kind)                                                              \
    static PyObject *py_##name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) \
    {                                                                                       \
        return collective_call(m, kind, a, n, k);                                           \
    }
COLLECTIVE(reduce, REDUCE)
COLLECTIVE(reducescatter, REDUCESCATTER)
COLLECTIVE(alltoall, ALLTOALL)
COLLECTIVE(fcollect, FCOLLECT)
COLLECTIVE(broadcast, BROADCAST)

/* ---- atomics ---- */

/* atomic(op, target, value_bits, cond_bits, pe, offset_elems, dtype_name) -> old bits */
static PyObject *py_atomic(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    module_state_t *st = module_state(module);
    int op, pe;
    if (nargs != 7 || as_int(st, args[0], "atomic", "op", &op) < 0)
        return raise_invalid(st, "atomic: bad internal call");
    const char *call = symmem_atomic_op_name(op);
    unsigned long long value = PyLong_AsUnsignedLongLong(args[2]);
    unsigned long long cond = PyLong_AsUnsignedLongLong(args[3]);
    Py_ssize_t offset = PyLong_AsSsize_t(args[5]);
    if (PyErr_Occurred()) return NULL;
    if (as_int(st, args[4], call, "remote_pe", &pe) < 0) return NULL;
    memory_t target;
    if (memory_resolve(st, args[1], 0, call, "target", &target) < 0) return NULL;
    PyObject *result = NULL;
    int dtype = collective_dtype(st, &target, args[6], call, "target");
    if (dtype >= 0) {
        Py_ssize_t size = (Py_ssize_t)symmem_dtype_size(dtype);
        if (offset < 0 || (offset + 1) * size > target.nbytes) {
            raise_invalid(st, "%s: offset=%zd is outside target's %zd elements", call, offset,
                          target.nbytes / size);
        } else {
            uint64_t old = 0;
            symmem_status_t status = symmem_atomic(op, target.ptr + offset * size, dtype, value,
                                                   cond, pe, &old);
            result = status == SYMMEM_OK ? Py_BuildValue("(Ks)", (unsigned long long)old,
                                                         symmem_dtype_name(dtype))
                                         : raise_status(st, status);
        }
    }
    memory_release(&target);
    return result;
}

#define FAST(name, func) {name, (PyCFunction)(void (*)(void))func, METH_FASTCALL, NULL}

PyMethodDef collective_methods[] = {
    FAST("team_query", py_team_query),
    FAST("team_split_strided", py_team_split_strided),
    FAST("team_split_2d", py_team_split_2d),
    {"team_destroy", py_team_destroy, METH_O, NULL},
    FAST("team_init", py_team_init),
    FAST("team_barrier", py_team_barrier),
    FAST("collective", py_collective),
    {"reduce", (PyCFunction)(void (*)(void))py_reduce, METH_FASTCALL | METH_KEYWORDS,
     "reduce(team, dst, src, op, stream=None): all-reduce into every member's dst."},
    {"reducescatter", (PyCFunction)(void (*)(void))py_reducescatter,
     METH_FASTCALL | METH_KEYWORDS,
     "reducescatter(team, dst, src, op, stream=None): member k gets block k of the reduction."},
    {"alltoall", (PyCFunction)(void (*)(void))py_alltoall, METH_FASTCALL | METH_KEYWORDS,
     "alltoall(team, dst, src, stream=None): block j of member k's src to block k of j's dst."},
    {"fcollect", (PyCFunction)(void (*)(void))py_fcollect, METH_FASTCALL | METH_KEYWORDS,
     "fcollect(team, dst, src, stream=None): all-gather of every member's src."},
    {"broadcast", (PyCFunction)(void (*)(void))py_broadcast, METH_FASTCALL | METH_KEYWORDS,
     "broadcast(team, dst, src, root=0, stream=None): the root's src to every dst."},
    FAST("atomic", py_atomic),
    {NULL, NULL, 0, NULL},
};
