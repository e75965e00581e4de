/* Argument parsing, one style for every function of the module (after
 * CPython's Modules/_struct.c): a METH_FASTCALL | METH_KEYWORDS parser sorts
 * the arguments into named slots with symmem__ext_parse, converts each with
 * a converter below, and hands the typed values to a static *_impl function.
 * Every error is NvshmemInvalid naming the call and the argument. */
#ifndef SYMMEM_EXT_ARGS_H
#define SYMMEM_EXT_ARGS_H

#include <stdint.h>

#include "extension.h"

/* A method table entry in the one style; doc starts with a text signature
 * ("put($module, dst, src, ...)\n--\n\n"), which inspect.signature reads. */
#define SYMMEM__EXT_METHOD(name, func, doc)                                                        \
    {name, (PyCFunction)(void (*)(void))func, METH_FASTCALL | METH_KEYWORDS, doc}
/* For functions without arguments ("my_pe($module, /)\n--\n\n"). */
#define SYMMEM__EXT_NOARGS(name, func, doc) {name, (PyCFunction)func, METH_NOARGS, doc}

/* One function's parameters. */
typedef struct {
    const char *call;         /* the name errors give: "put" */
    const char *const *names; /* in order, NULL-terminated; "dst|dst_array" takes either keyword */
    int required;             /* the first `required` must be given */
    int positional;           /* at most this many positionally */
} symmem__ext_params_t;

/* Fills out[i] with the argument for names[i], NULL where not given. */
int symmem__ext_parse(module_state_t *st, const symmem__ext_params_t *params, PyObject *const *args,
                      Py_ssize_t nargs, PyObject *kwnames, PyObject **out);

/* Drops the references parse keeps to the keywords it has matched (module clear). */
void symmem__ext_keywords_clear(module_state_t *st);

/* Converters: 0 with the value in *value_p, or -1 with NvshmemInvalid. A
 * NULL obj (an optional argument not given) leaves *value_p, the default. */

/* An int (or an object with __index__); bools are refused. */
int symmem__ext_as_long(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                        long long *value_p);
/* as_long, within the range of a C int. */
int symmem__ext_as_int(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                       int *value_p);
/* Any int that fits in 64 bits; negative values wrap as in C (SIGNAL_ADD
 * of -1 subtracts 1). */
int symmem__ext_as_u64(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                       uint64_t *value_p);
/* A PE number in [0, n_pes); before init, the core's "not initialized". */
int symmem__ext_as_pe(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                      int *pe_p);
/* A team handle: an int (or IntEnum), never None or a bool. The core checks
 * that the team exists where the call reaches it. */
int symmem__ext_as_team(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                        symmem_team_t *team_p);
/* as_team, and the team must exist with this PE a member (the core's lookup),
 * for the calls the core answers without an error (the team queries). */
int symmem__ext_as_member_team(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                               symmem_team_t *team_p);
/* A str (a name: the backend, or the call= and arg= by which the package
 * has errors name its own functions); None only where allow_none. */
int symmem__ext_as_text(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                        int allow_none, const char **text_p);
/* A ComparisonType (CMP_EQ .. CMP_GE); obj is required. */
int symmem__ext_as_cmp(module_state_t *st, PyObject *obj, const char *call, symmem_cmp_t *cmp_p);
/* A SignalOp (SIGNAL_SET or SIGNAL_ADD). */
int symmem__ext_as_signal_op(module_state_t *st, PyObject *obj, const char *call,
                             symmem_signal_op_t *op_p);

#endif
