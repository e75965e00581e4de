/* init and finalize, the choice of backend, and the queries about the running one. */
#include "symmem/symmem.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "device_state.h"
#include "env.h"
#include "env_check.h"
#include "error.h"
#include "forked.h"
#include "gpu_loader.h"
#include "launcher_link.h"
#include "state.h"
#include "teams.h"

void symmem_init_attr_default(symmem_init_attr_t *attr)
{
    memset(attr, 0, sizeof(*attr));
    attr->version = SYMMEM_INIT_ATTR_VERSION;
    attr->method = SYMMEM_INIT_FROM_ENV;
    attr->device = -1;
}

/* A job of mpirun, mpiexec or srun whose PEs span hosts: MPI is there. */
static int mpi_job_across_hosts(const symmem_bootstrap_t *boot)
{
    if (boot == NULL || boot->spans_hosts[0] == '\0' || boot->have_uid) return 0;
    symmem_job_identity_t id;
    symmem__bootstrap_identity(boot, &id);
    return strcmp(id.launcher, "mpirun") == 0 || strcmp(id.launcher, "srun") == 0 ||
           strcmp(id.launcher, "pmi") == 0;
}

static const symmem_backend_ops_t *cpu_engine(const char **why_p)
{
    (void)why_p;
    return &symmem__cpu_backend_ops;
}

/* The backends init can name (SYMMEM_BACKEND's choices but auto): the cpu
 * engine built in, the others loaded on first use. A name only finds its
 * table here; what a backend can do is its capability bits. */
static const struct {
    const char *name;
    const symmem_backend_ops_t *(*get)(const char **why_p);
} named_backends[] = {
    {"cpu", cpu_engine}, {"gpu", symmem__gpu_backend}, {"mpi", symmem__mpi_backend}};

/* Chooses the backend's ops table from requested or SYMMEM_BACKEND: auto
 * takes the gpu backend where it is usable, else the mpi backend for an MPI
 * job across hosts where it was built, else the cpu engine. */
static symmem_status_t choose_backend(const char *call, const char *requested,
                                      const symmem_bootstrap_t *boot,
                                      const symmem_backend_ops_t **ops_p)
{
    const char *name = requested;
    if (name == NULL) {
        int index;
        SYMMEM_CHECK(symmem__env_choice(call, "SYMMEM_BACKEND", &index));
        name = symmem__env_string("SYMMEM_BACKEND");
    }
    const char *why = NULL;
    char reason[1024];
    if (strcmp(name, "auto") == 0 || name[0] == '\0') {
        /* The gpu where it loads and every PE of the host can have a GPU. */
        const symmem_backend_ops_t *gpu = symmem__gpu_backend(&why);
        if (gpu != NULL && boot != NULL && !gpu->can_run(boot, reason, sizeof(reason))) gpu = NULL;
        const symmem_backend_ops_t *mpi = NULL;
        if (gpu == NULL && mpi_job_across_hosts(boot)) mpi = symmem__mpi_backend(&why);
        *ops_p = gpu != NULL ? gpu : mpi != NULL ? mpi : &symmem__cpu_backend_ops;
        return SYMMEM_OK;
    }
    size_t i = 0, count = sizeof(named_backends) / sizeof(named_backends[0]);
    while (i < count && strcmp(name, named_backends[i].name) != 0) i++;
    if (i == count)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: backend='%s' is not one of 'cpu', 'gpu', 'mpi', 'auto'", call,
                             name);
    *ops_p = named_backends[i].get(&why);
    if (*ops_p != NULL && boot != NULL && !(*ops_p)->can_run(boot, reason, sizeof(reason))) {
        *ops_p = NULL;
        why = reason;
    }
    if (*ops_p == NULL)
        return symmem__error(SYMMEM_ERR_BACKEND, "%s: backend='%s' cannot run here: %s", call, name,
                             why);
    return SYMMEM_OK;
}

symmem_status_t symmem_get_unique_id(symmem_unique_id_t *uid_p)
{
    if (uid_p == NULL) return symmem__error(SYMMEM_ERR_INVALID, "get_unique_id: uid_p is NULL");
    const symmem_backend_ops_t *ops = NULL;
    SYMMEM_CHECK(choose_backend("get_unique_id", NULL, NULL, &ops));
    return ops->get_unique_id(uid_p);
}

symmem_status_t symmem__init_preview(const char *backend, symmem_bootstrap_t *boot_p,
                                     symmem_job_identity_t *id_p, const char **backend_p,
                                     uint32_t *capabilities_p, symmem_engine_choice_t *engine_p)
{
    /* first, as in init: a forked child's GPUs or launcher variables are no
     * reason to give (its parent's job is not its own) */
    SYMMEM_CHECK(symmem__check_not_forked("init"));
    symmem_init_attr_t attr;
    symmem_init_attr_default(&attr);
    SYMMEM_CHECK(symmem__bootstrap_from_attr(&attr, boot_p));
    symmem__bootstrap_identity(boot_p, id_p);
    const symmem_backend_ops_t *ops = NULL;
    SYMMEM_CHECK(choose_backend("init", backend, boot_p, &ops));
    *backend_p = ops->name;
    *capabilities_p = ops->capabilities;
    ops->engine(NULL, boot_p, engine_p->name, sizeof(engine_p->name), engine_p->why,
                sizeof(engine_p->why));
    return SYMMEM_OK;
}

symmem_status_t symmem_init(void)
{
    symmem_init_attr_t attr;
    symmem_init_attr_default(&attr);
    return symmem_init_attr(&attr);
}

symmem_status_t symmem_init_attr(const symmem_init_attr_t *attr)
{
    symmem_runtime_t *rt = &symmem__rt;
    if (rt->initialized) return SYMMEM_OK;
    SYMMEM_CHECK(symmem__check_not_forked("init"));
    symmem__launcher_link(); /* a C PE of symmem.run; Python PEs did it at import */
    if (attr == NULL || attr->version < 1 || attr->version > SYMMEM_INIT_ATTR_VERSION)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "init: attr is NULL or has version %u (expected 1 to %u)",
                             attr ? attr->version : 0, SYMMEM_INIT_ATTR_VERSION);
    symmem_init_attr_t full; /* a version 1 attr ends before mpi_comm */
    symmem_init_attr_default(&full);
    memcpy(&full, attr, attr->version == 1 ? offsetof(symmem_init_attr_t, mpi_comm) : sizeof(full));
    attr = &full;
    if (attr->method == SYMMEM_INIT_WITH_MPI_COMM && attr->version < 2)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "init: method SYMMEM_INIT_WITH_MPI_COMM needs attr version 2");
    symmem_bootstrap_t boot;
    SYMMEM_CHECK(symmem__bootstrap_from_attr(attr, &boot));
    const symmem_backend_ops_t *ops = NULL;
    SYMMEM_CHECK(choose_backend("init", attr->backend, &boot, &ops));
    if (boot.have_mpi_comm && !(ops->capabilities & SYMMEM_CAP_MPI_PROCESSES))
        return symmem__error(SYMMEM_ERR_INVALID,
                             "init: an MPI communicator (initializer_method='mpi') makes PEs of "
                             "a backend whose PEs are MPI processes (the mpi backend), not of "
                             "backend='%s'",
                             ops->name);
    symmem__error_set_pe(boot.rank);
    symmem_backend_t *be;
    symmem_status_t status = ops->init(&boot, &be);
    if (status != SYMMEM_OK) {
        symmem__error_set_pe(-1);
        return status;
    }
    rt->ops = ops;
    rt->be = be;
    rt->my_pe = boot.rank;
    rt->n_pes = boot.nranks;
    rt->initialized = 1;
    status = symmem__teams_init();
    if (status == SYMMEM_OK) status = symmem__device_state_fill();
    if (status != SYMMEM_OK) {
        symmem_finalize();
        return status;
    }
    symmem__forked_arm();
    return SYMMEM_OK;
}

symmem_status_t symmem_finalize(void)
{
    symmem_runtime_t *rt = &symmem__rt;
    if (!rt->initialized) return SYMMEM_OK; /* also in a child forked after init (forked.h) */
    /* Still initialised if this fails: what held finalize up can be ended. */
    SYMMEM_CHECK(rt->ops->prepare_finalize(rt->be));
    symmem__device_state_clear();
    symmem_status_t status = rt->ops->finalize(rt->be);
    symmem__registry_clear(&rt->registry);
    symmem__teams_clear();
    rt->initialized = 0;
    rt->be = NULL;
    rt->my_pe = rt->n_pes = -1;
    symmem__error_set_pe(-1);
    return status;
}

int symmem_initialized(void)
{
    return symmem__rt.initialized;
}

int symmem_device(void)
{
    return symmem__rt.initialized ? symmem__rt.ops->device(symmem__rt.be) : -1;
}
int symmem_my_pe(void)
{
    return symmem__rt.my_pe;
}
int symmem_n_pes(void)
{
    return symmem__rt.n_pes;
}

const char *symmem_library_version(void)
{
    static char text[64];
    text[0] = '\0';
    if (symmem__rt.initialized) symmem__rt.ops->library_version(symmem__rt.be, text, sizeof(text));
    return text;
}

const char *symmem_engine_name(void)
{
    static char name[32];
    char why[8];
    name[0] = '\0';
    if (symmem__rt.initialized)
        symmem__rt.ops->engine(symmem__rt.be, NULL, name, sizeof(name), why, sizeof(why));
    return name;
}

const char *symmem_backend_name(void)
{
    return symmem__rt.initialized ? symmem__rt.ops->name : NULL;
}

uint32_t symmem_capabilities(void)
{
    return symmem__rt.initialized ? symmem__rt.ops->capabilities : 0;
}
