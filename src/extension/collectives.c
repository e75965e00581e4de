/* Collectives over a team, and the table _symmem.REDUCE_OPS. Element
 * counts come from src: reduce/broadcast move src's elements, fcollect
 * gathers team_n_pes blocks of src's size, alltoall and reducescatter split
 * src into team_n_pes blocks; a dst that is too small is an error before any
 * PE communicates. Every collective runs without the GIL. */
#include "args.h"
#include "concepts.h"
#include "doc_parts.h"
#include "dtypes.h"
#include "errors.h"
#include "resolve.h"
#include "../core/internal.h"

enum { REDUCE, REDUCESCATTER, ALLTOALL, FCOLLECT, BROADCAST, NKINDS };
static const char *const kind_names[NKINDS] = {"reduce", "reducescatter", "alltoall", "fcollect",
                                               "broadcast"};

/* names[0], ..., names[n-1] as "a, b, c" into out. */
static void join(char *out, size_t size, const char *const *names, int n)
{
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? ", " : "", names[i]);
}

/* A reduction op: a name ('sum'), or an object whose .name is one in any
 * case (an enum member); the names are the library's. */
static int as_reduce_op(module_state_t *st, PyObject *obj, const char *call, int *op_p)
{
    if (PyUnicode_Check(obj)) /* the common case, without a lower() call */
        for (int op = 0; op < SYMMEM_OP_COUNT; op++)
            if (PyUnicode_CompareWithASCIIString(obj, symmem_reduce_op_name(op)) == 0) {
                *op_p = op;
                return 0;
            }
    PyObject *name = PyUnicode_Check(obj) ? Py_NewRef(obj) : PyObject_GetAttrString(obj, "name");
    PyObject *lower =
        name && PyUnicode_Check(name) ? PyObject_CallMethod(name, "lower", NULL) : NULL;
    const char *text = lower ? PyUnicode_AsUTF8(lower) : NULL;
    int found = -1;
    for (int op = 0; text && op < SYMMEM_OP_COUNT; op++)
        if (strcmp(text, symmem_reduce_op_name(op)) == 0) found = op;
    Py_XDECREF(lower);
    Py_XDECREF(name);
    PyErr_Clear();
    if (found >= 0) {
        *op_p = found;
        return 0;
    }
    const char *ops[SYMMEM_OP_COUNT];
    char names[128];
    for (int op = 0; op < SYMMEM_OP_COUNT; op++) ops[op] = symmem_reduce_op_name(op);
    join(names, sizeof(names), ops, SYMMEM_OP_COUNT);
    PyObject *repr = PyObject_Repr(obj);
    symmem__ext_raise_invalid(st, "%s: op=%s is not one of %s", call,
                              repr ? PyUnicode_AsUTF8(repr) : "?", names);
    Py_XDECREF(repr);
    return -1;
}

static symmem_status_t launch(int kind, symmem_team_t team, const memory_t *dst,
                              const memory_t *src, size_t block, int dtype, int op, int root,
                              symmem_stream_t stream)
{
    size_t size = symmem_dtype_size(dtype);
    switch (kind) {
    case REDUCE: return symmem_reduce(team, dst->ptr, src->ptr, block, dtype, op, stream);
    case REDUCESCATTER:
        return symmem_reducescatter(team, dst->ptr, src->ptr, block, dtype, op, stream);
    case ALLTOALL: return symmem_alltoall(team, dst->ptr, src->ptr, block * size, stream);
    case FCOLLECT: return symmem_fcollect(team, dst->ptr, src->ptr, block * size, stream);
    default: return symmem_broadcast(team, dst->ptr, src->ptr, block * size, root, stream);
    }
}

/* One collective, its arguments converted; dtype < 0: dst's and src's own. */
static PyObject *collective_impl(module_state_t *st, int kind, symmem_team_t team,
                                 const memory_t *dst, const memory_t *src, int op, int root,
                                 symmem_stream_t stream, int dtype)
{
    const char *call = kind_names[kind];
    const symmem_team_view_t *view;
    int ddt = symmem__ext_element_type(st, dst, dtype, call, "dst");
    int sdt = ddt < 0 ? -1 : symmem__ext_element_type(st, src, dtype, call, "src");
    if (sdt < 0) return NULL;
    if (ddt != sdt)
        return symmem__ext_raise_invalid(st, "%s: dst is %s but src is %s; they must match", call,
                                         symmem_dtype_name(ddt), symmem_dtype_name(sdt));
    symmem_status_t status = symmem__team_lookup(call, team, &view);
    if (status != SYMMEM_OK) return symmem__ext_raise_status(st, status);
    size_t n = (size_t)view->n, size = symmem_dtype_size(sdt);
    size_t src_elems = (size_t)src->nbytes / size, dst_elems = (size_t)dst->nbytes / size;
    size_t block = src_elems, need = src_elems;
    if (kind == ALLTOALL || kind == REDUCESCATTER) {
        if (src_elems % n != 0)
            return symmem__ext_raise_invalid(st,
                                             "%s: src has %zu elements, not a multiple of "
                                             "the team's %zu PEs",
                                             call, src_elems, n);
        block = src_elems / n;
        need = kind == ALLTOALL ? src_elems : block;
    } else if (kind == FCOLLECT) {
        need = src_elems * n;
    }
    if (dst_elems < need)
        return symmem__ext_raise_invalid(st,
                                         "%s: dst has %zu elements but needs %zu (src has "
                                         "%zu, team of %zu PEs)",
                                         call, dst_elems, need, src_elems, n);
    Py_BEGIN_ALLOW_THREADS
    status = launch(kind, team, dst, src, block, sdt, op, root, stream);
    Py_END_ALLOW_THREADS
    return symmem__ext_done(st, status);
}

/* Converts what every collective takes; then the memory, then the call. */
static PyObject *collective_run(module_state_t *st, int kind, PyObject *team_obj, PyObject *dst_obj,
                                PyObject *src_obj, PyObject *op_obj, PyObject *root_obj,
                                PyObject *stream_obj, PyObject *dtype_obj)
{
    const char *call = kind_names[kind];
    symmem_team_t team = 0;
    int op = 0, root = 0, dtype = -1;
    symmem_stream_t stream;
    if (symmem__ext_as_team(st, team_obj, call, "team", &team) < 0 ||
        ((kind == REDUCE || kind == REDUCESCATTER) && as_reduce_op(st, op_obj, call, &op) < 0) ||
        symmem__ext_as_int(st, root_obj, call, "root", &root) < 0 ||
        symmem__ext_stream_resolve(st, stream_obj, call, &stream) < 0 ||
        symmem__ext_as_dtype(st, dtype_obj, call, &dtype) < 0)
        return NULL;
    memory_t dst, src;
    if (symmem__ext_memory_resolve(st, dst_obj, 1, call, "dst", &dst) < 0) return NULL;
    PyObject *result = NULL;
    if (symmem__ext_memory_resolve(st, src_obj, 0, call, "src", &src) == 0) {
        if (symmem__ext_check_same_order(st, &dst, &src, call) == 0)
            result = collective_impl(st, kind, team, &dst, &src, op, root, stream, dtype);
        symmem__ext_memory_release(&src);
    }
    symmem__ext_memory_release(&dst);
    return result;
}

/* reduce(team, dst, src, op, stream=None) and the others, parsed in C: a
 * collective is a hot call in a training loop. dst_array= and src_array=
 * are NVSHMEM4Py's names for dst= and src=. */
static PyObject *collective_call(PyObject *module, int kind, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const with_op[] = {"team", "dst|dst_array", "src|src_array",
                                          "op",   "stream",        NULL};
    static const char *const plain[] = {"team", "dst|dst_array", "src|src_array", "stream", NULL};
    static const char *const rooted[] = {"team", "dst|dst_array", "src|src_array",
                                         "root", "stream",        NULL};
    module_state_t *st = symmem__ext_state(module);
    int reduction = kind == REDUCE || kind == REDUCESCATTER;
    const char *const *names = reduction ? with_op : kind == BROADCAST ? rooted : plain;
    int nnames = kind == ALLTOALL || kind == FCOLLECT ? 4 : 5;
    const symmem__ext_params_t params = {kind_names[kind], names, reduction ? 4 : 3, nnames};
    PyObject *v[5];
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0) return NULL;
    return collective_run(st, kind, v[0], v[1], v[2], reduction ? v[3] : NULL,
                          kind == BROADCAST ? v[3] : NULL, v[nnames - 1], NULL);
}

#define COLLECTIVE(name, kind)                                                                     \
    static PyObject *name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)              \
    {                                                                                              \
        return collective_call(m, kind, a, n, k);                                                  \
    }
COLLECTIVE(reduce, REDUCE)
COLLECTIVE(reducescatter, REDUCESCATTER)
COLLECTIVE(alltoall, ALLTOALL)
COLLECTIVE(fcollect, FCOLLECT)
COLLECTIVE(broadcast, BROADCAST)

/* collective(coll, team, dest, src, dtype=None, op=None, root=0, stream=None):
 * what collective_on_buffer calls, with a dtype for raw Buffers. */
static PyObject *collective(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    static const char *const names[] = {"coll", "team", "dest",   "src", "dtype",
                                        "op",   "root", "stream", NULL};
    static const symmem__ext_params_t params = {"collective_on_buffer", names, 4, 8};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[8];
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0) return NULL;
    for (int kind = 0; PyUnicode_Check(v[0]) && kind < NKINDS; kind++)
        if (PyUnicode_CompareWithASCIIString(v[0], kind_names[kind]) == 0)
            return collective_run(st, kind, v[1], v[2], v[3], v[5] ? v[5] : Py_None, v[6], v[7],
                                  v[4]);
    char kinds[128];
    join(kinds, sizeof(kinds), kind_names, NKINDS);
    PyObject *repr = PyObject_Repr(v[0]);
    symmem__ext_raise_invalid(st, "collective_on_buffer: coll=%s is not one of %s",
                              repr ? PyUnicode_AsUTF8(repr) : "?", kinds);
    Py_XDECREF(repr);
    return NULL;
}

/* ---- docstrings ---- */

#define COLL_ARGS(dst, src)                                                                        \
    "Args:\n" SYMMEM__DOC_TEAM                                                                     \
    "    dst: symmetric memory this PE's result lands in (dst_array= is\n"                         \
    "        NVSHMEM4Py's name); " dst "\n"                                                        \
    "    src: symmetric memory of the same dtype (src_array= is NVSHMEM4Py's\n"                    \
    "        name); " src "\n"

#define COLL_INVALID(why)                                                                          \
    SYMMEM__DOC_INVALID(                                                                           \
        "team is None, not a team, or this PE is not a member;\n"                                  \
        "        dst or src is not on the symmetric heap, dst is read-only, or\n"                  \
        "        their dtypes differ or are not symmem's; " why "; dst and\n"                      \
        "        src overlap (reduce and broadcast may run in place); one is in C\n"               \
        "        order and the other in Fortran order; the members\n"                              \
        "        disagree on the call (another collective, size, dtype, op or\n"                   \
        "        root: the cpu backend checks).")

#define COLL_NOTE                                                                                  \
    "Every member of team calls it, in the same order as its other\n"                              \
    "collectives. Element counts come from src; dst may be larger.\n\n"

PyDoc_STRVAR(
    reduce_doc,
    "reduce($module, team, dst, src, op, stream=None)\n--\n\n"
    "All-reduce: every member's dst gets the elementwise op of all their srcs.\n\n" COLL_NOTE
        COLL_ARGS(
            "its first len(src) elements\n        are written.",
            "its elements are the operands.") "    op: 'sum', 'min', 'max', 'prod', 'and', 'or' or "
                                              "'xor' (the bitwise\n"
                                              "        ones for integer and bool dtypes), or an "
                                              "enum member of that name.\n" SYMMEM__DOC_STREAM
                                              "\n" COLL_INVALID(
                                                  "op is not one of the\n"
                                                  "        seven, or bitwise on floats; dst has "
                                                  "fewer elements than src") SYMMEM__DOC_RAISES_WAIT
    "\nExample:\n"
    "    >>> src = symmem.array(3, dtype=\"float32\")\n"
    "    >>> dst = symmem.array(3, dtype=\"float32\")\n"
    "    >>> src[:] = symmem.my_pe() + 1\n"
    "    >>> symmem.reduce(symmem.Teams.TEAM_WORLD, dst, src, \"sum\")\n"
    "    >>> n = symmem.n_pes()\n"
    "    >>> dst.tolist() == [n * (n + 1) / 2] * 3\n"
    "    True\n"
    "    >>> symmem.free_array(src); symmem.free_array(dst)\n");

PyDoc_STRVAR(
    reducescatter_doc,
    "reducescatter($module, team, dst, src, op, stream=None)\n--\n\n"
    "Reduce, then scatter: member k's dst gets block k of the reduction.\n\n" COLL_NOTE COLL_ARGS(
        "it needs len(src) / team_n_pes(team)\n        elements.",
        "team_n_pes(team) equal blocks, one per\n"
        "        member.") "    op: 'sum', 'min', 'max', 'prod', 'and', 'or' or 'xor' (the "
                           "bitwise\n"
                           "        ones for integer and bool dtypes), or an enum member of that "
                           "name.\n" SYMMEM__DOC_STREAM
                           "\n" COLL_INVALID("op is not one of the\n"
                                             "        seven, or bitwise on floats; src's length is "
                                             "not a multiple of\n"
                                             "        the team's size; dst is smaller than a block")
                               SYMMEM__DOC_RAISES_WAIT
    "\nExample:\n"
    "    >>> n = symmem.n_pes()\n"
    "    >>> src = symmem.array(2 * n, dtype=\"int32\")\n"
    "    >>> dst = symmem.array(2, dtype=\"int32\")\n"
    "    >>> src[:] = np.arange(2 * n)\n"
    "    >>> symmem.reducescatter(symmem.Teams.TEAM_WORLD, dst, src, \"sum\")\n"
    "    >>> me = symmem.my_pe()\n"
    "    >>> dst.tolist() == [n * 2 * me, n * (2 * me + 1)]  # block me, n times\n"
    "    True\n"
    "    >>> symmem.free_array(src); symmem.free_array(dst)\n");

PyDoc_STRVAR(
    alltoall_doc,
    "alltoall($module, team, dst, src, stream=None)\n--\n\n"
    "All-to-all: block j of member k's src lands in block k of member j's dst.\n\n" COLL_NOTE
        COLL_ARGS("it needs as many elements as src.", "team_n_pes(team) equal blocks, one per\n"
                                                       "        member.") SYMMEM__DOC_STREAM
    "\n" COLL_INVALID("src's length is not a\n"
                      "        multiple of the team's size; dst is smaller than src")
        SYMMEM__DOC_RAISES_WAIT
    "\nExample:\n"
    "    >>> n, me = symmem.n_pes(), symmem.my_pe()\n"
    "    >>> src = symmem.array(n, dtype=\"int64\")\n"
    "    >>> dst = symmem.array(n, dtype=\"int64\")\n"
    "    >>> src[:] = 100 * me + np.arange(n)  # element j goes to PE j\n"
    "    >>> symmem.alltoall(symmem.Teams.TEAM_WORLD, dst, src)\n"
    "    >>> dst.tolist() == [100 * k + me for k in range(n)]\n"
    "    True\n"
    "    >>> symmem.free_array(src); symmem.free_array(dst)\n");

PyDoc_STRVAR(fcollect_doc,
             "fcollect($module, team, dst, src, stream=None)\n--\n\n"
             "All-gather: member k's src lands in block k of every member's dst.\n\n" COLL_NOTE
                 COLL_ARGS("it needs team_n_pes(team) * len(src)\n        elements.",
                           "the block this PE contributes.") SYMMEM__DOC_STREAM
             "\n" COLL_INVALID("dst has fewer than\n"
                               "        team_n_pes(team) * len(src) elements")
                 SYMMEM__DOC_RAISES_WAIT
             "\nExample:\n"
             "    >>> n = symmem.n_pes()\n"
             "    >>> src = symmem.array(2, dtype=\"int32\")\n"
             "    >>> dst = symmem.array(2 * n, dtype=\"int32\")\n"
             "    >>> src[:] = symmem.my_pe()\n"
             "    >>> symmem.fcollect(symmem.Teams.TEAM_WORLD, dst, src)\n"
             "    >>> dst.tolist() == [k for k in range(n) for _ in range(2)]\n"
             "    True\n"
             "    >>> symmem.free_array(src); symmem.free_array(dst)\n");

PyDoc_STRVAR(
    broadcast_doc,
    "broadcast($module, team, dst, src, root=0, stream=None)\n--\n\n"
    "Copy the root's src into every member's dst (the root's own included).\n\n" COLL_NOTE
        COLL_ARGS("its first len(src) elements\n        are written.",
                  "read on the root only.") "    root: the root's number in team (not in "
                                            "TEAM_WORLD).\n" SYMMEM__DOC_STREAM "\n" COLL_INVALID(
                                                "root is outside the\n"
                                                "        team; dst has fewer elements than src")
                                                SYMMEM__DOC_RAISES_WAIT
    "\nExample:\n"
    "    >>> src = symmem.array(4, dtype=\"float64\")\n"
    "    >>> dst = symmem.array(4, dtype=\"float64\")\n"
    "    >>> src[:] = symmem.my_pe()\n"
    "    >>> symmem.broadcast(symmem.Teams.TEAM_WORLD, dst, src, root=0)\n"
    "    >>> dst.tolist()\n"
    "    [0.0, 0.0, 0.0, 0.0]\n"
    "    >>> symmem.free_array(src); symmem.free_array(dst)\n");

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("reduce", reduce, reduce_doc),
    SYMMEM__EXT_METHOD("reducescatter", reducescatter, reducescatter_doc),
    SYMMEM__EXT_METHOD("alltoall", alltoall, alltoall_doc),
    SYMMEM__EXT_METHOD("fcollect", fcollect, fcollect_doc),
    SYMMEM__EXT_METHOD("broadcast", broadcast, broadcast_doc),
    SYMMEM__EXT_METHOD(
        "collective", collective,
        "collective($module, coll, team, dest, src, dtype=None, op=None, root=0, stream=None)\n"
        "--\n\nThe collective named coll; dtype (a library or NVSHMEM name) reads raw Buffers."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_collectives_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}
