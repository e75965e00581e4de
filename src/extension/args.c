/* Argument parsing shared by the METH_FASTCALL | METH_KEYWORDS functions:
 * every error names the call and the argument. */
#include <string.h>

#include "symmem_python.h"

/* Fills out[i] with the argument named names[i] (positional or keyword);
 * unset ones stay NULL. The first nrequired are required. */
/* Whether key is one of the '|'-separated names of spec ("dst|dst_array"). */
static int name_matches(const char *spec, const char *key)
{
    size_t len = strlen(key);
    for (const char *p = spec; p != NULL; p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL)
        if (strncmp(p, key, len) == 0 && (p[len] == '\0' || p[len] == '|')) return 1;
    return 0;
}

int parse_args(module_state_t *st, const char *call, const char *const *names,
               int nnames, int nrequired, PyObject *const *args, Py_ssize_t nargs,
               PyObject *kwnames, PyObject **out)
{
    for (int i = 0; i < nnames; i++) out[i] = NULL;
    if (nargs > nnames) {
        raise_invalid(st, "%s: takes at most %d positional arguments (%zd given)", call,
                      nnames, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        const char *key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
        if (key == NULL) return -1;
        int i = 0;
        while (i < nnames && !name_matches(names[i], key)) i++;
        if (i == nnames) {
            raise_invalid(st, "%s: unexpected keyword argument '%s'", call, key);
            return -1;
        }
        if (out[i] != NULL) {
            raise_invalid(st, "%s: got argument '%s' twice", call, key);
            return -1;
        }
        out[i] = args[nargs + k];
    }
    for (int i = 0; i < nrequired; i++)
        if (out[i] == NULL) {
            int len = (int)strcspn(names[i], "|");
            raise_invalid(st, "%s: missing required argument '%.*s'", call, len, names[i]);
            return -1;
        }
    return 0;
}

int team_arg(module_state_t *st, PyObject *obj, const char *call, int *team_p)
{
    if (obj == Py_None) {
        raise_invalid(st, "%s: team is None (this PE is not a member of that team)", call);
        return -1;
    }
    if (PyBool_Check(obj) || !PyLong_Check(obj)) {
        raise_invalid(st, "%s: team of type %s is not a team", call, Py_TYPE(obj)->tp_name);
        return -1;
    }
    long long team = PyLong_AsLongLong(obj);
    if (team == -1 && PyErr_Occurred()) PyErr_Clear();
    if (team < INT32_MIN || team > INT32_MAX) {
        raise_invalid(st, "%s: team=%lld is not a valid team", call, team);
        return -1;
    }
    *team_p = (int)team;
    return 0;
}
