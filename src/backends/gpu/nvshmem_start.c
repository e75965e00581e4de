/* The nvshmem engine's start and end: NVSHMEM's unique id and its exchange
 * between the PEs of a launcher's job, NVSHMEM's start, its finalize (which
 * holds a barrier with no time limit: made watched), the barrier before it,
 * and its version. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "nvshmem_engine.h"

/* ---- the unique id ---- */

/* NVSHMEM's where it loads (either engine takes it: its bytes name the job
 * for the symmem engine), else the core's. */
symmem_status_t symmem__gpu_unique_id(symmem_unique_id_t *uid_p)
{
    if (libs.nvshmem_handle == NULL) return symmem__gpu_core->unique_id(uid_p);
    nv_uniqueid_t uid;
    memset(&uid, 0, sizeof(uid));
    uid.version = NV_UNIQUEID_VERSION;
    int rc = libs.get_uniqueid(&uid);
    if (rc != 0)
        return ERROR(SYMMEM_ERR_BACKEND, "get_unique_id: nvshmemx_get_uniqueid failed (%d)", rc);
    memcpy(uid_p->bytes, &uid, sizeof(uid));
    return SYMMEM_OK;
}

static void uid_path(const gpu_t *g, char *path, size_t size)
{
    snprintf(path, size, "/dev/shm/symmem-%s-nvshmem-uid", g->boot.job);
}

/* Hands PE 0's NVSHMEM unique id to the PEs of a launcher's job through a
 * file in /dev/shm (the launcher starts every PE on this host). */
static symmem_status_t exchange_uid(gpu_t *g, nv_uniqueid_t *uid)
{
    char path[256], tmp[300];
    uid_path(g, path, sizeof(path));
    if (g->boot.rank == 0) {
        symmem_unique_id_t bytes;
        SYMMEM_CHECK(symmem__gpu_unique_id(&bytes));
        memcpy(uid, bytes.bytes, sizeof(*uid));
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, uid, sizeof(*uid)) != (ssize_t)sizeof(*uid) || close(fd) != 0 ||
            rename(tmp, path) != 0)
            return ERROR(SYMMEM_ERR_BOOTSTRAP, "init: cannot publish the unique id in %s: %s", path,
                         strerror(errno));
        return SYMMEM_OK;
    }
    double deadline =
        symmem__gpu_now() + (g->boot.timeout > 0 ? g->boot.timeout : GPU_INIT_TIMEOUT_SECONDS);
    for (;;) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            ssize_t n = read(fd, uid, sizeof(*uid));
            close(fd);
            if (n == (ssize_t)sizeof(*uid)) return SYMMEM_OK;
        }
        if (symmem__gpu_now() > deadline)
            return ERROR(SYMMEM_ERR_BOOTSTRAP,
                         "init: PE 0 never published the unique id (%s); the gpu backend's "
                         "launcher rendezvous works for PEs on one host",
                         path);
        usleep(1000);
    }
}

symmem_status_t symmem__nv_start(gpu_t *g)
{
    if (symmem__gpu_nvshmem_wedged())
        return ERROR(SYMMEM_ERR_BACKEND,
                     "init: an earlier free or finalize in this process never got through "
                     "NVSHMEM's barrier, so NVSHMEM cannot start again here; start a new "
                     "process");
    nv_uniqueid_t uid;
    int exchanged = 0;
    if (g->boot.have_uid) {
        memcpy(&uid, g->boot.uid.bytes, sizeof(uid));
        if (uid.version != NV_UNIQUEID_VERSION)
            return ERROR(SYMMEM_ERR_INVALID,
                         "init: uid was not made by get_unique_id() for the gpu backend "
                         "(make it with SYMMEM_BACKEND=gpu, or on a machine with a GPU)");
    } else if (g->boot.nranks == 1) {
        symmem_unique_id_t bytes;
        SYMMEM_CHECK(symmem__gpu_unique_id(&bytes));
        memcpy(&uid, bytes.bytes, sizeof(uid));
    } else if (g->boot.spans_hosts[0] != '\0') {
        /* /dev/shm reaches this host only: Python's init hands the id over
         * the launcher's rendezvous (symmem/_rendezvous.py) and passes it */
        return ERROR(SYMMEM_ERR_BOOTSTRAP,
                     "init: the launcher starts this job's %d PEs on several hosts (%s), and "
                     "the gpu backend's own rendezvous reaches one host; symmem's Python init "
                     "hands NVSHMEM's unique id over the launcher's rendezvous, and a C "
                     "program passes one (SYMMEM_INIT_WITH_UID)",
                     g->boot.nranks, g->boot.spans_hosts);
    } else {
        SYMMEM_CHECK(exchange_uid(g, &uid));
        exchanged = 1;
    }
    /* Version 1 identifiers: every NVSHMEM 3.x accepts them. */
    nv_init_attr_t attr;
    memset(&attr, 0, sizeof(attr));
    attr.version = (1 << 16) + (int)sizeof(nv_init_attr_t);
    attr.args.version = (1 << 16) + (int)sizeof(nv_init_args_t);
    attr.args.uid_args.version = NV_UNIQUEID_ARGS_VERSION;
    attr.args.uid_args.myrank = -1;
    attr.args.uid_args.nranks = -1;
    int rc = libs.set_attr_uniqueid_args(g->boot.rank, g->boot.nranks, &uid, &attr);
    if (rc != 0)
        return ERROR(SYMMEM_ERR_BOOTSTRAP, "init: nvshmemx_set_attr_uniqueid_args failed (%d)", rc);
    rc = libs.hostlib_init_attr(NV_INIT_WITH_UNIQUEID, &attr);
    if (rc != 0)
        return ERROR(SYMMEM_ERR_BOOTSTRAP,
                     "init: NVSHMEM failed to start (nvshmemx_hostlib_init_attr returned %d; "
                     "NVSHMEM_DEBUG=INFO tells more)",
                     rc);
    /* Every PE has read the id once NVSHMEM runs: a later init of this job
     * (after finalize, in the same processes) must not find this one. */
    if (exchanged && g->boot.rank == 0) {
        char path[256];
        uid_path(g, path, sizeof(path));
        unlink(path);
    }
    if (libs.my_pe() != g->boot.rank || libs.n_pes() != g->boot.nranks) {
        symmem_status_t status = ERROR(SYMMEM_ERR_BOOTSTRAP,
                                       "init: NVSHMEM numbered this PE %d of %d, expected %d of %d",
                                       libs.my_pe(), libs.n_pes(), g->boot.rank, g->boot.nranks);
        libs.hostlib_finalize();
        return status;
    }
    /* PEs that share a GPU without CUDA MPS ("limited MPG"): NVSHMEM starts
     * them, then ends both processes at their first collective (3.4.5).
     * Every PE sees the same status, so every PE refuses here instead. */
    int (*init_status)(void) =
        (int (*)(void))symmem__gpu_libs_symbol(&libs, "nvshmemx_init_status");
    if (init_status != NULL && init_status() == NV_INIT_STATUS_LIMITED_MPG) {
        libs.hostlib_finalize();
        return ERROR(SYMMEM_ERR_BACKEND,
                     "init: PEs of this job share a GPU, which NVSHMEM runs only under CUDA MPS "
                     "(nvshmemx_init_status: limited MPG): SYMMEM_GPU_ENGINE=symmem runs them on "
                     "the gpu backend's own engine (auto takes it where the launcher says that "
                     "PEs outnumber GPUs; a unique id's job does not say)");
    }
    return SYMMEM_OK;
}

/* prepare_finalize's last step: NVSHMEM's own barrier, which the call
 * pages' rendezvous has made safe to enter. */
symmem_status_t symmem__nv_final_barrier(gpu_t *g)
{
    libs.barrier_all_on_stream(g->stream);
    return symmem__gpu_drain(g, "finalize");
}

static int nvshmem_finalize_job(void *arg)
{
    (void)arg;
    libs.hostlib_finalize();
    return 0;
}

symmem_status_t symmem__nv_stop(gpu_t *g, int finished)
{
    if (!finished) { /* init failed: NVSHMEM holds no barrier nobody joins */
        libs.hostlib_finalize();
        return SYMMEM_OK;
    }
    return symmem__gpu_nvshmem_watched(g, "finalize", "nvshmem_finalize", nvshmem_finalize_job,
                                       NULL);
}

/* NVSHMEM's version, as nvshmemx_vendor_get_version_info gives it. */
void symmem__nv_version(gpu_t *g, char *text, size_t size)
{
    (void)g;
    int major = 0, minor = 0, patch = 0;
    libs.vendor_get_version_info(&major, &minor, &patch);
    snprintf(text, size, "%d.%d.%d", major, minor, patch);
}
