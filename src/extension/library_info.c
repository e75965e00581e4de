/* What python -m symmem info asks of the libraries the gpu backend uses:
 * the CUDA driver's path, version and devices (cuda_driver_info), and the
 * version of the libnvshmem the backend loaded (nvshmem_version). Both go
 * through dlopen and dlsym here, so the Python package needs no foreign
 * function interface of its own.
 *
 * cuda_driver_info opens libcuda.so.1 as the backend does (src/backends/
 * gpu/libs.c), RTLD_LAZY | RTLD_LOCAL, and closes it after: where the
 * backend has it loaded this is the same library, else it is unloaded
 * again. nvshmem_version opens with RTLD_NOLOAD: it asks only a library
 * this process has loaded already, and never loads one. cuda_driver_info
 * never raises for what the machine lacks (no driver, no device): that is
 * its answer, with the loader's or the driver's own words. */
#define _GNU_SOURCE /* dlinfo */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "concepts.h"
#include "errors.h"

typedef int cu_result_t; /* CUresult: 0 is CUDA_SUCCESS */

/* The driver calls info makes, by the names libcuda exports them. */
typedef struct {
    cu_result_t (*cuDriverGetVersion)(int *version);
    cu_result_t (*cuInit)(unsigned flags);
    cu_result_t (*cuDeviceGetCount)(int *count);
    cu_result_t (*cuDeviceGet)(int *device, int ordinal);
    cu_result_t (*cuDeviceGetName)(char *name, int size, int device);
    cu_result_t (*cuGetErrorName)(cu_result_t result, const char **name); /* may be NULL */
} driver_calls_t;

#define DEVICE_NAME_SIZE 256

/* What the driver said; filled without the GIL, turned into a dict with it. */
typedef struct {
    int loaded;                      /* libcuda.so.1 opened */
    char path[4096];                 /* the file the loader opened for it ("" where unknown) */
    int version;                     /* cuDriverGetVersion's, e.g. 13000; -1 where unknown */
    int count;                       /* devices; -1 where the driver could not say */
    char (*names)[DEVICE_NAME_SIZE]; /* count names, malloc'd ("?" for a failed one) */
    char why[1024];                  /* why the library, or its devices, are missing */
} driver_report_t;

/* "cuInit failed: CUDA_ERROR_NO_DEVICE (100)" into why. */
static void driver_failed(const driver_calls_t *cu, const char *call, cu_result_t result, char *why,
                          size_t why_size)
{
    const char *name = NULL;
    if (cu->cuGetErrorName == NULL || cu->cuGetErrorName(result, &name) != 0 || name == NULL)
        name = "CUDA error";
    snprintf(why, why_size, "%s failed: %s (%d)", call, name, result);
}

/* 0 with every required call in *cu, or -1 with why naming the missing one. */
static int driver_calls_load(void *handle, driver_calls_t *cu, char *why, size_t why_size)
{
    static const struct {
        const char *name;
        size_t offset;
    } required[] = {
        {"cuDriverGetVersion", offsetof(driver_calls_t, cuDriverGetVersion)},
        {"cuInit", offsetof(driver_calls_t, cuInit)},
        {"cuDeviceGetCount", offsetof(driver_calls_t, cuDeviceGetCount)},
        {"cuDeviceGet", offsetof(driver_calls_t, cuDeviceGet)},
        {"cuDeviceGetName", offsetof(driver_calls_t, cuDeviceGetName)},
    };
    memset(cu, 0, sizeof(*cu));
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        void *symbol = dlsym(handle, required[i].name);
        if (symbol == NULL) {
            snprintf(why, why_size, "libcuda.so.1 has no symbol %s", required[i].name);
            return -1;
        }
        memcpy((char *)cu + required[i].offset, &symbol, sizeof(symbol));
    }
    *(void **)&cu->cuGetErrorName = dlsym(handle, "cuGetErrorName");
    return 0;
}

/* The devices' names into report (count and names), or why not. */
static void driver_devices(const driver_calls_t *cu, driver_report_t *report)
{
    int count = 0;
    cu_result_t result = cu->cuInit(0);
    if (result != 0) {
        driver_failed(cu, "cuInit", result, report->why, sizeof(report->why));
        return;
    }
    result = cu->cuDeviceGetCount(&count);
    if (result != 0) {
        driver_failed(cu, "cuDeviceGetCount", result, report->why, sizeof(report->why));
        return;
    }
    if (count > 0 && (report->names = malloc((size_t)count * DEVICE_NAME_SIZE)) == NULL) {
        snprintf(report->why, sizeof(report->why), "out of memory for %d device names", count);
        return;
    }
    for (int ordinal = 0; ordinal < count; ordinal++) {
        int device = 0;
        char *name = report->names[ordinal];
        if (cu->cuDeviceGet(&device, ordinal) != 0 ||
            cu->cuDeviceGetName(name, DEVICE_NAME_SIZE, device) != 0)
            strcpy(name, "?");
        name[DEVICE_NAME_SIZE - 1] = '\0';
    }
    report->count = count;
}

/* Runs without the GIL: touches no Python object. */
static void driver_query(driver_report_t *report)
{
    void *handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (handle == NULL) {
        const char *error = dlerror();
        snprintf(report->why, sizeof(report->why), "%s", error ? error : "libcuda.so.1: not found");
        return;
    }
    report->loaded = 1;
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != NULL && map->l_name != NULL)
        snprintf(report->path, sizeof(report->path), "%s", map->l_name);
    driver_calls_t cu;
    if (driver_calls_load(handle, &cu, report->why, sizeof(report->why)) == 0) {
        int version = 0;
        if (cu.cuDriverGetVersion(&version) == 0) report->version = version;
        driver_devices(&cu, report);
    }
    dlclose(handle);
}

/* The report's device names as a list, or None where the driver gave none. */
static PyObject *driver_names(const driver_report_t *report)
{
    if (report->count < 0) Py_RETURN_NONE;
    PyObject *list = PyList_New(report->count);
    for (int i = 0; list != NULL && i < report->count; i++) {
        const char *text = report->names[i];
        PyObject *name = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
        if (name == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, name);
    }
    return list;
}

/* The report as cuda_driver_info's dict. */
static PyObject *driver_report_dict(const driver_report_t *report)
{
    PyObject *devices = driver_names(report);
    if (devices == NULL) return NULL;
    PyObject *version = Py_None;
    Py_INCREF(version);
    if (report->version >= 0) {
        Py_DECREF(version);
        version = PyLong_FromLong(report->version);
    }
    const char *path = !report->loaded ? NULL : report->path[0] ? report->path : "libcuda.so.1";
    PyObject *dict = version == NULL ? NULL
                                     : Py_BuildValue("{s:z,s:O,s:O,s:z}", "path", path, "version",
                                                     version, "devices", devices, "error",
                                                     report->why[0] ? report->why : NULL);
    Py_XDECREF(version);
    Py_DECREF(devices);
    return dict;
}

static PyObject *cuda_driver_info(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    driver_report_t *report = calloc(1, sizeof(*report));
    if (report == NULL) return PyErr_NoMemory();
    report->version = -1;
    report->count = -1;
    Py_BEGIN_ALLOW_THREADS /* cuInit can take seconds on a machine with GPUs */
    driver_query(report);
    Py_END_ALLOW_THREADS
    PyObject *dict = driver_report_dict(report);
    free(report->names);
    free(report);
    return dict;
}

/* 0 with the version of the library loaded as path, or -1 with why. */
static int nvshmem_version_query(const char *path, int version_p[3], char *why, size_t why_size)
{
    void *handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (handle == NULL) {
        const char *error = dlerror(); /* glibc sets none for RTLD_NOLOAD */
        snprintf(why, why_size, "nvshmem_version: path='%s' is not loaded in this process%s%s%s",
                 path, error ? " (" : "", error ? error : "", error ? ")" : "");
        return -1;
    }
    void (*get)(int *major, int *minor, int *patch);
    *(void **)&get = dlsym(handle, "nvshmemx_vendor_get_version_info");
    if (get == NULL) {
        const char *error = dlerror();
        snprintf(why, why_size,
                 "nvshmem_version: path='%s' has no "
                 "nvshmemx_vendor_get_version_info (%s)",
                 path, error ? error : "no such symbol");
        dlclose(handle);
        return -1;
    }
    get(&version_p[0], &version_p[1], &version_p[2]);
    dlclose(handle);
    return 0;
}

static PyObject *nvshmem_version(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const names[] = {"path", NULL};
    static const symmem__ext_params_t params = {"nvshmem_version", names, 1, 1};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[1];
    const char *path = NULL;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_text(st, v[0], "nvshmem_version", "path", 0, &path) < 0)
        return NULL;
    if (path[0] == '\0') /* dlopen("") is the program itself */
        return symmem__ext_raise_invalid(st, "nvshmem_version: path='' is empty (expected the "
                                             "path of a loaded libnvshmem_host)");
    int version[3] = {0, 0, 0};
    char why[1024];
    int rc;
    Py_BEGIN_ALLOW_THREADS /* the loader's lock may be held by a thread loading a library */
    rc = nvshmem_version_query(path, version, why, sizeof(why));
    Py_END_ALLOW_THREADS
    if (rc != 0) return PyErr_Format(PyExc_OSError, "%s", why);
    return Py_BuildValue("(iii)", version[0], version[1], version[2]);
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_NOARGS(
        "cuda_driver_info", cuda_driver_info,
        "cuda_driver_info($module, /)\n--\n\n"
        "The CUDA driver as the gpu backend finds it (libcuda.so.1): {path, version,\n"
        "devices, error}. path: the file loaded, None where it does not load; version:\n"
        "cuDriverGetVersion's (13000 for CUDA 13.0) or None; devices: the devices' names,\n"
        "None where cuInit or cuDeviceGetCount failed; error: why the library or its\n"
        "devices are missing (dlerror's text, or the failed call and its CUDA error), else\n"
        "None. Loads libcuda.so.1 for the question only, and unloads it after."),
    SYMMEM__EXT_METHOD(
        "nvshmem_version", nvshmem_version,
        "nvshmem_version($module, path)\n--\n\n"
        "(major, minor, patch) of the libnvshmem_host this process has loaded from path\n"
        "(nvshmemx_vendor_get_version_info). Loads nothing: OSError where path is not\n"
        "loaded or has no such call."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_library_info_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}
