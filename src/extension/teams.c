/* Teams: queries, splits, team_init, destroy, the check the package makes
 * for its own team calls, and the predefined teams' table (Teams). Splits,
 * team_init and destroy are collective: they run without the GIL. */
#include "args.h"
#include "concepts.h"
#include "doc_parts.h"
#include "errors.h"

static PyObject *team_query(PyObject *module, const char *call, int (*query)(symmem_team_t),
                            PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"team", NULL};
    module_state_t *st = symmem__ext_state(module);
    const symmem__ext_params_t params = {call, names, 1, 1};
    PyObject *obj;
    symmem_team_t team = 0;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, &obj) < 0 ||
        symmem__ext_as_member_team(st, obj, call, "team", &team) < 0)
        return NULL;
    return PyLong_FromLong(query(team));
}

static PyObject *team_my_pe(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return team_query(m, "team_my_pe", symmem_team_my_pe, a, n, k);
}
static PyObject *team_n_pes(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return team_query(m, "team_n_pes", symmem_team_n_pes, a, n, k);
}

static PyObject *team_translate_pe(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    static const char *const names[] = {"src_team", "src_pe", "dest_team", NULL};
    static const symmem__ext_params_t params = {"team_translate_pe", names, 3, 3};
    const char *call = params.call;
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[3];
    symmem_team_t src = 0, dest = 0;
    long long pe = 0;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_member_team(st, v[0], call, "src_team", &src) < 0 ||
        symmem__ext_as_member_team(st, v[2], call, "dest_team", &dest) < 0 ||
        symmem__ext_as_long(st, v[1], call, "src_pe", &pe) < 0)
        return NULL;
    int n = symmem_team_n_pes(src);
    if (pe < 0 || pe >= n)
        return symmem__ext_raise_invalid(st, "%s: src_pe=%lld is outside [0, %d)", call, pe, n);
    return PyLong_FromLong(symmem_team_translate_pe(src, (int)pe, dest));
}

/* check_team(team, call, arg='team'): team, if it exists with this PE a
 * member; the package's team calls that hold Python state use it. */
static PyObject *check_team(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    static const char *const names[] = {"team", "call", "arg", NULL};
    static const symmem__ext_params_t params = {"check_team", names, 2, 3};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[3];
    symmem_team_t team = 0;
    const char *call = "check_team", *arg = "team";
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_text(st, v[1], call, "call", 0, &call) < 0 ||
        symmem__ext_as_text(st, v[2], call, "arg", 0, &arg) < 0 ||
        symmem__ext_as_member_team(st, v[0], call, arg, &team) < 0)
        return NULL;
    return PyLong_FromLong(team);
}

/* The handle a collective team call made (TEAM_INVALID where this PE is
 * not a member), or its error. */
static PyObject *made(module_state_t *st, symmem_status_t status, symmem_team_t team)
{
    if (status != SYMMEM_OK) return symmem__ext_raise_status(st, status);
    return PyLong_FromLong(team);
}

static PyObject *team_split_strided(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    static const char *const names[] = {"parent_team", "start", "stride", "size", NULL};
    static const symmem__ext_params_t params = {"team_split_strided", names, 4, 4};
    const char *call = params.call;
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[4];
    symmem_team_t parent = 0, team;
    int start = 0, stride = 0, size = 0;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_team(st, v[0], call, "parent_team", &parent) < 0 ||
        symmem__ext_as_int(st, v[1], call, "start", &start) < 0 ||
        symmem__ext_as_int(st, v[2], call, "stride", &stride) < 0 ||
        symmem__ext_as_int(st, v[3], call, "size", &size) < 0)
        return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_team_split_strided(parent, start, stride, size, &team);
    Py_END_ALLOW_THREADS
    return made(st, status, team);
}

static PyObject *team_split_2d(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    static const char *const names[] = {"parent_team", "xrange", NULL};
    static const symmem__ext_params_t params = {"team_split_2d", names, 2, 2};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[2];
    symmem_team_t parent = 0, x, y;
    int xrange = 0;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_team(st, v[0], "team_split_2d", "parent_team", &parent) < 0 ||
        symmem__ext_as_int(st, v[1], "team_split_2d", "xrange", &xrange) < 0)
        return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_team_split_2d(parent, xrange, &x, &y);
    Py_END_ALLOW_THREADS
    if (status != SYMMEM_OK) return symmem__ext_raise_status(st, status);
    return Py_BuildValue("(ii)", x, y);
}

static PyObject *team_init(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    static const char *const names[] = {"key", "npes", "pe_idx_in_team", NULL};
    static const symmem__ext_params_t params = {"team_init", names, 3, 3};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[3];
    uint64_t key = 0;
    int npes = 0, index = 0;
    symmem_team_t team;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_u64(st, v[0], "team_init", "key", &key) < 0 ||
        symmem__ext_as_int(st, v[1], "team_init", "npes", &npes) < 0 ||
        symmem__ext_as_int(st, v[2], "team_init", "pe_idx_in_team", &index) < 0)
        return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_team_init(key, npes, index, &team);
    Py_END_ALLOW_THREADS
    return made(st, status, team);
}

static PyObject *team_destroy(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"team", NULL};
    static const symmem__ext_params_t params = {"team_destroy", names, 1, 1};
    module_state_t *st = symmem__ext_state(module);
    PyObject *obj;
    symmem_team_t team = 0;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, &obj) < 0 ||
        symmem__ext_as_team(st, obj, "team_destroy", "team", &team) < 0)
        return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_team_destroy(team);
    Py_END_ALLOW_THREADS
    return symmem__ext_done(st, status);
}

/* ---- docstrings of the public queries ---- */

#define TEAM_INVALID_DOC                                                                           \
    "team is None (this PE was outside the split that made\n"                                      \
    "        it), not a team, or a team this PE is not a member of."

PyDoc_STRVAR(
    team_my_pe_doc,
    "team_my_pe($module, team)\n--\n\n"
    "This PE's number in team, from 0.\n\n"
    "Args:\n" SYMMEM__DOC_TEAM "\nReturns:\n"
    "    An int in [0, team_n_pes(team)).\n"
    "\n" SYMMEM__DOC_INVALID(
        TEAM_INVALID_DOC) "\nExample:\n"
                          "    >>> symmem.team_my_pe(symmem.Teams.TEAM_WORLD) == symmem.my_pe()\n"
                          "    True\n");

PyDoc_STRVAR(
    team_n_pes_doc,
    "team_n_pes($module, team)\n--\n\n"
    "The number of PEs in team.\n\n"
    "Args:\n" SYMMEM__DOC_TEAM "\nReturns:\n"
    "    An int, 1 or more.\n"
    "\n" SYMMEM__DOC_INVALID(
        TEAM_INVALID_DOC) "\nExample:\n"
                          "    >>> symmem.team_n_pes(symmem.Teams.TEAM_WORLD) == symmem.n_pes()\n"
                          "    True\n");

PyDoc_STRVAR(
    team_translate_pe_doc,
    "team_translate_pe($module, src_team, src_pe, dest_team)\n--\n\n"
    "The number in dest_team of the PE that is number src_pe in src_team.\n\n"
    "Args:\n"
    "    src_team: the team src_pe is numbered in (this PE a member).\n"
    "    src_pe: a PE's number in src_team, in [0, team_n_pes(src_team)).\n"
    "    dest_team: the team to number it in (this PE a member).\n"
    "\nReturns:\n"
    "    Its number in dest_team, or -1 where it is not a member of dest_team.\n"
    "\n" SYMMEM__DOC_INVALID("src_team or dest_team is None, not a team, or a team\n"
                             "        this PE is not a member of; src_pe is outside [0, "
                             "team_n_pes(src_team)).") "\nExample:\n"
                                                       "    >>> world = symmem.Teams.TEAM_WORLD\n"
                                                       "    >>> last = "
                                                       "symmem.team_split_strided(world, "
                                                       "symmem.n_pes() - 1, 1, 1)\n"
                                                       "    >>> if last is not None:  # on the "
                                                       "last PE only\n"
                                                       "    ...     assert "
                                                       "symmem.team_translate_pe(last, 0, world) "
                                                       "== symmem.my_pe()\n"
                                                       "    ...     symmem.team_destroy(last)\n");

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("team_my_pe", team_my_pe, team_my_pe_doc),
    SYMMEM__EXT_METHOD("team_n_pes", team_n_pes, team_n_pes_doc),
    SYMMEM__EXT_METHOD("team_translate_pe", team_translate_pe, team_translate_pe_doc),
    SYMMEM__EXT_METHOD(
        "check_team", check_team,
        "check_team($module, team, call, arg='team')\n--\n\n"
        "team as an int if it exists with this PE a member; else NvshmemInvalid naming call."),
    SYMMEM__EXT_METHOD(
        "team_split_strided", team_split_strided,
        "team_split_strided($module, parent_team, start, stride, size)\n--\n\n"
        "Collective over parent_team: the handle of the team parent[start + i*stride],\n"
        "i < size; TEAM_INVALID (-1) on PEs outside it."),
    SYMMEM__EXT_METHOD(
        "team_split_2d", team_split_2d,
        "team_split_2d($module, parent_team, xrange)\n--\n\n"
        "Collective over parent_team: (x team of xrange consecutive PEs, y team of the PEs\n"
        "with the same x index), as handles."),
    SYMMEM__EXT_METHOD(
        "team_init", team_init,
        "team_init($module, key, npes, pe_idx_in_team)\n--\n\n"
        "Collective over the PEs that pass the same key: the handle of a team of npes PEs\n"
        "in which this PE is number pe_idx_in_team."),
    SYMMEM__EXT_METHOD("team_destroy", team_destroy,
                       "team_destroy($module, team)\n--\n\nCollective over the team: destroy it."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_teams_exec(PyObject *module)
{
    PyObject *teams = Py_BuildValue(
        "{s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "TEAM_INVALID", SYMMEM_TEAM_INVALID, "TEAM_WORLD",
        SYMMEM_TEAM_WORLD, "TEAM_SHARED", SYMMEM_TEAM_SHARED, "TEAM_NODE", SYMMEM_TEAM_NODE,
        "TEAM_SAME_MYPE_NODE", SYMMEM_TEAM_SAME_MYPE_NODE, "TEAM_SAME_GPU", SYMMEM_TEAM_SAME_GPU,
        "TEAM_GPU_LEADERS", SYMMEM_TEAM_GPU_LEADERS);
    int rc = teams ? PyModule_AddObjectRef(module, "TEAMS", teams) : -1;
    Py_XDECREF(teams);
    return rc < 0 ? -1 : PyModule_AddFunctions(module, methods);
}
