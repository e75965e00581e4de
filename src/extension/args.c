/* The parser and the converters of args.h. */
#include "args.h"
#include "errors.h"
#include "../core/internal.h"

/* Whether key is one of the '|'-separated names of spec ("dst|dst_array").
 * Every call with a keyword comes here for each name it might be: a loop of
 * its own, which leaves a name at its first differing character. */
static int name_matches(const char *spec, const char *key)
{
    for (const char *p = spec; *p != '\0';) {
        const char *k = key;
        while (*k != '\0' && *p == *k) p++, k++;
        if (*k == '\0' && (*p == '\0' || *p == '|')) return 1;
        while (*p != '\0' && *p != '|') p++; /* the rest of this name */
        if (*p == '|') p++;
    }
    return 0;
}

/* The slot of names that key fills: the one found the last time this str
 * came for these names (st->keywords), else by its text; -1 where none, -2
 * with an exception set. */
static int keyword_slot(module_state_t *st, const char *const *names, int nnames, PyObject *key)
{
    size_t hash = ((uintptr_t)names >> 3) ^ ((uintptr_t)key >> 4);
    symmem__ext_keyword_t *seen = &st->keywords[hash % SYMMEM__EXT_KEYWORDS];
    if (seen->names == names && seen->key == key) return seen->index;
    const char *text = PyUnicode_AsUTF8(key);
    if (text == NULL) return -2;
    int i = 0;
    while (i < nnames && !name_matches(names[i], text)) i++;
    if (i == nnames) return -1;
    seen->names = names;
    Py_XSETREF(seen->key, Py_NewRef(key));
    seen->index = i;
    return i;
}

void symmem__ext_keywords_clear(module_state_t *st)
{
    for (int i = 0; i < SYMMEM__EXT_KEYWORDS; i++) {
        st->keywords[i].names = NULL;
        Py_CLEAR(st->keywords[i].key);
    }
}

int symmem__ext_parse(module_state_t *st, const symmem__ext_params_t *params, PyObject *const *args,
                      Py_ssize_t nargs, PyObject *kwnames, PyObject **out)
{
    const char *call = params->call;
    int nnames = 0;
    while (params->names[nnames] != NULL) out[nnames++] = NULL;
    if (nargs > params->positional) {
        symmem__ext_raise_invalid(st, "%s: takes at most %d positional arguments (%zd given)", call,
                                  params->positional, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int i = keyword_slot(st, params->names, nnames, key);
        if (i == -2) return -1;
        if (i == -1) {
            symmem__ext_raise_invalid(st, "%s: unexpected keyword argument '%s'", call,
                                      PyUnicode_AsUTF8(key));
            return -1;
        }
        if (out[i] != NULL) {
            symmem__ext_raise_invalid(st, "%s: got argument '%s' twice", call,
                                      PyUnicode_AsUTF8(key));
            return -1;
        }
        out[i] = args[nargs + k];
    }
    for (int i = 0; i < params->required; i++)
        if (out[i] == NULL) {
            int len = (int)strcspn(params->names[i], "|");
            symmem__ext_raise_invalid(st, "%s: missing required argument '%.*s'", call, len,
                                      params->names[i]);
            return -1;
        }
    return 0;
}

int symmem__ext_as_long(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                        long long *value_p)
{
    if (obj == NULL) return 0;
    if (PyBool_Check(obj) || (!PyLong_Check(obj) && !PyIndex_Check(obj))) {
        symmem__ext_raise_invalid(st, "%s: %s must be an int, got %s", call, arg,
                                  Py_TYPE(obj)->tp_name);
        return -1;
    }
    long long value = PyLong_AsLongLong(obj);
    if (value == -1 && PyErr_Occurred()) {
        /* Too large, or an __index__ that failed (a NumPy array of several values). */
        int overflow = PyErr_ExceptionMatches(PyExc_OverflowError);
        PyErr_Clear();
        if (overflow)
            symmem__ext_raise_invalid(st, "%s: %s is out of range", call, arg);
        else
            symmem__ext_raise_invalid(st, "%s: %s must be an int, got %s", call, arg,
                                      Py_TYPE(obj)->tp_name);
        return -1;
    }
    *value_p = value;
    return 0;
}

int symmem__ext_as_int(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                       int *value_p)
{
    long long value = *value_p;
    if (symmem__ext_as_long(st, obj, call, arg, &value) < 0) return -1;
    if (value < INT32_MIN || value > INT32_MAX) {
        symmem__ext_raise_invalid(st, "%s: %s=%lld is out of range", call, arg, value);
        return -1;
    }
    *value_p = (int)value;
    return 0;
}

int symmem__ext_as_u64(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                       uint64_t *value_p)
{
    if (obj == NULL) return 0;
    if (!PyLong_Check(obj) && !PyIndex_Check(obj)) {
        symmem__ext_raise_invalid(st, "%s: %s must be an int, got %s", call, arg,
                                  Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *number = PyNumber_Index(obj);
    if (number == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception)) return -1;
        PyErr_Clear(); /* an __index__ that failed (a NumPy array of several values) */
        symmem__ext_raise_invalid(st, "%s: %s must be an int, got %s", call, arg,
                                  Py_TYPE(obj)->tp_name);
        return -1;
    }
    unsigned long long value = PyLong_AsUnsignedLongLong(number);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        long long wrapped = PyLong_AsLongLong(number);
        if (PyErr_Occurred()) {
            Py_DECREF(number);
            PyErr_Clear();
            symmem__ext_raise_invalid(st, "%s: %s does not fit in 64 bits", call, arg);
            return -1;
        }
        value = (unsigned long long)wrapped;
    }
    Py_DECREF(number);
    *value_p = value;
    return 0;
}

int symmem__ext_as_text(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                        int allow_none, const char **text_p)
{
    if (obj == NULL || (allow_none && obj == Py_None)) return 0;
    const char *text = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (text == NULL) {
        PyErr_Clear();
        symmem__ext_raise_invalid(st, "%s: %s of type %s is not a str", call, arg,
                                  Py_TYPE(obj)->tp_name);
        return -1;
    }
    *text_p = text;
    return 0;
}

int symmem__ext_as_pe(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                      int *pe_p)
{
    long long value = *pe_p;
    if (symmem__ext_as_long(st, obj, call, arg, &value) < 0) return -1;
    if (value < 0 || value >= symmem_n_pes()) {
        if (symmem__ext_require_initialized(st, call) < 0) return -1;
        symmem__ext_raise_invalid(st, "%s: %s=%lld is outside [0, %d)%s", call, arg, value,
                                  symmem_n_pes(), symmem__pe_range_hint());
        return -1;
    }
    *pe_p = (int)value;
    return 0;
}

int symmem__ext_as_team(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                        symmem_team_t *team_p)
{
    if (obj == NULL) return 0;
    if (obj == Py_None) {
        symmem__ext_raise_invalid(st, "%s: %s is None (this PE is not a member of that team)", call,
                                  arg);
        return -1;
    }
    if (PyBool_Check(obj) || !PyLong_Check(obj)) {
        symmem__ext_raise_invalid(st, "%s: %s of type %s is not a team", call, arg,
                                  Py_TYPE(obj)->tp_name);
        return -1;
    }
    long long team = PyLong_AsLongLong(obj);
    if (team == -1 && PyErr_Occurred()) PyErr_Clear();
    if (team < INT32_MIN || team > INT32_MAX) {
        symmem__ext_raise_invalid(st, "%s: %s=%lld is not a valid team", call, arg, team);
        return -1;
    }
    *team_p = (symmem_team_t)team;
    return 0;
}

int symmem__ext_as_member_team(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                               symmem_team_t *team_p)
{
    symmem_team_t team = *team_p;
    const symmem_team_view_t *view;
    if (symmem__ext_as_team(st, obj, call, arg, &team) < 0) return -1;
    symmem_status_t status = symmem__team_lookup(call, team, &view);
    if (status != SYMMEM_OK) {
        symmem__ext_raise_status(st, status);
        return -1;
    }
    *team_p = team;
    return 0;
}

int symmem__ext_as_cmp(module_state_t *st, PyObject *obj, const char *call, symmem_cmp_t *cmp_p)
{
    long long value;
    if (obj == NULL) {
        symmem__ext_raise_invalid(st, "%s: the comparison (cmp=) is required", call);
        return -1;
    }
    if (symmem__ext_as_long(st, obj, call, "cmp", &value) < 0) return -1;
    if (value < 0 || value >= SYMMEM_CMP_COUNT) {
        symmem__ext_raise_invalid(st,
                                  "%s: cmp=%lld is not a ComparisonType (CMP_EQ=%d .. "
                                  "CMP_GE=%d)",
                                  call, value, SYMMEM_CMP_EQ, SYMMEM_CMP_GE);
        return -1;
    }
    *cmp_p = (symmem_cmp_t)value;
    return 0;
}

int symmem__ext_as_signal_op(module_state_t *st, PyObject *obj, const char *call,
                             symmem_signal_op_t *op_p)
{
    long long value = *op_p; /* kept when obj is NULL (not given) */
    if (symmem__ext_as_long(st, obj, call, "signal_op", &value) < 0) return -1;
    if (!symmem__signal_op_valid((int)value)) {
        symmem__ext_raise_invalid(st,
                                  "%s: signal_op=%lld is not SignalOp.SIGNAL_SET (%d) or "
                                  "SIGNAL_ADD (%d)",
                                  call, value, SYMMEM_SIGNAL_SET, SYMMEM_SIGNAL_ADD);
        return -1;
    }
    *op_p = (symmem_signal_op_t)value;
    return 0;
}
