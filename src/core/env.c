#include "env.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#define ROW(name, kind, default_value, applies_to, choices, help) \
    {name, SYMMEM_ENV_##kind, default_value, applies_to, choices, help}

static const symmem_env_var_t env_table[] = {
    /* ---- what users set ---- */
    ROW("SYMMEM_BACKEND", CHOICE, "auto", "all", "cpu|gpu|auto",
        "the engine: cpu, gpu, or auto (the gpu where a CUDA device and libnvshmem are usable)"),
    ROW("SYMMEM_SYMMETRIC_SIZE", SIZE, "1G", "all", NULL,
        "bytes of symmetric heap per PE (suffixes K, M, G). cpu: pages are committed only when "
        "allocated. gpu: passed on as NVSHMEM_SYMMETRIC_SIZE unless that is set"),
    ROW("SYMMEM_TIMEOUT", NUMBER, "0", "all", NULL,
        "seconds any blocking call may wait before raising (0 = no limit; dead peers are "
        "always detected)"),
    ROW("SYMMEM_SPIN_US", NUMBER, "20", "cpu", NULL,
        "microseconds a wait spins before it sleeps in the kernel"),
    ROW("SYMMEM_NT_COPY_MIN", SIZE, "16M", "cpu", NULL,
        "copies of at least this many bytes use stores that bypass the cache (0 = never)"),
    ROW("SYMMEM_DEBUG", FLAG, "0", "all", NULL,
        "1 prints every error to stderr where it is detected"),
    ROW("SYMMEM_GPU_KERNELS", CHOICE, "symmem", "gpu", "symmem|nvshmem",
        "symmem: within an NVLink domain put_signal and signal_op are symmem's own kernels; "
        "nvshmem: NVSHMEM's"),
    ROW("SYMMEM_NVSHMEM_LIB", TEXT, "", "gpu", NULL,
        "path of libnvshmem_host.so.3 (tried first; then the nvidia-nvshmem wheel, then the "
        "system)"),
    ROW("SYMMEM_NVSHMEM_WHEEL_LIB", TEXT, "", "gpu", NULL,
        "set by the Python package: libnvshmem_host.so.3 of the installed nvidia-nvshmem wheel"),
    ROW("SYMMEM_GPU_BACKEND_LIB", TEXT, "", "gpu", NULL,
        "set by the Python package: the gpu backend library it ships"),
    ROW("SYMMEM_GPU_FAIL_AT", TEXT, "", "gpu", NULL,
        "a test hook: init fails at this start-up step (context, nvshmem, stream, scratch, "
        "agree_buffers, watch_peers, atomics_module or put_signal_module) and undoes the steps "
        "before it"),
    ROW("NVSHMEM_SYMMETRIC_SIZE", SIZE, "1G", "gpu", NULL,
        "NVSHMEM's own: bytes of symmetric heap per GPU (set from SYMMEM_SYMMETRIC_SIZE when "
        "only that is set)"),
    ROW("NVSHMEM_CUMEM_GRANULARITY", SIZE, "512M", "gpu", NULL,
        "NVSHMEM's own: the granule register_external sizes must be a multiple of"),
    ROW("NVSHMEM_DISABLE_NVLS", FLAG, "0", "gpu", NULL,
        "NVSHMEM's own: 1 turns NVLink multicast off (get_multicast_* then raise)"),
    /* ---- set by python -m symmem.run for each PE ---- */
    ROW("SYMMEM_JOB", TEXT, "", "launcher", NULL, "the job's rendezvous name"),
    ROW("SYMMEM_RANK", COUNT, "", "launcher", NULL, "this PE's number"),
    ROW("SYMMEM_NRANKS", COUNT, "", "launcher", NULL, "the number of PEs"),
    ROW("SYMMEM_LOCAL_RANK", COUNT, "", "launcher", NULL,
        "this PE's number among the PEs of its host (the gpu backend's device)"),
    ROW("SYMMEM_STATUS_DIR", TEXT, "", "launcher", NULL,
        "where the launcher writes how each PE exited"),
    /* ---- read from other launchers ---- */
    ROW("RANK", COUNT, "", "torchrun", NULL, "this PE's number"),
    ROW("WORLD_SIZE", COUNT, "", "torchrun", NULL, "the number of PEs"),
    ROW("LOCAL_RANK", COUNT, "", "torchrun", NULL, "this PE's number on its host"),
    ROW("LOCAL_WORLD_SIZE", COUNT, "", "torchrun", NULL, "the PEs on this host"),
    ROW("MASTER_ADDR", TEXT, "", "torchrun", NULL, "part of the job's name"),
    ROW("MASTER_PORT", TEXT, "", "torchrun", NULL, "part of the job's name"),
    ROW("TORCHELASTIC_RUN_ID", TEXT, "", "torchrun", NULL, "part of the job's name"),
    ROW("OMPI_COMM_WORLD_RANK", COUNT, "", "Open MPI", NULL, "this PE's number"),
    ROW("OMPI_COMM_WORLD_SIZE", COUNT, "", "Open MPI", NULL, "the number of PEs"),
    ROW("OMPI_COMM_WORLD_LOCAL_RANK", COUNT, "", "Open MPI", NULL, "this PE's number on its host"),
    ROW("OMPI_COMM_WORLD_LOCAL_SIZE", COUNT, "", "Open MPI", NULL, "the PEs on this host"),
    ROW("PMIX_NAMESPACE", TEXT, "", "Open MPI", NULL, "part of the job's name"),
    ROW("OMPI_MCA_ess_base_jobid", TEXT, "", "Open MPI", NULL, "part of the job's name"),
    ROW("OMPI_MCA_orte_ess_jobid", TEXT, "", "Open MPI", NULL,
        "part of the job's name (Open MPI 4)"),
    ROW("SLURM_PROCID", COUNT, "", "Slurm", NULL, "this PE's number"),
    ROW("SLURM_NTASKS", COUNT, "", "Slurm", NULL, "the number of PEs"),
    ROW("SLURM_LOCALID", COUNT, "", "Slurm", NULL, "this PE's number on its host"),
    ROW("SLURM_JOB_ID", TEXT, "", "Slurm", NULL, "part of the job's name"),
    ROW("SLURM_STEP_ID", TEXT, "", "Slurm", NULL, "part of the job's name"),
    ROW("PMI_RANK", COUNT, "", "MPICH", NULL, "this PE's number"),
    ROW("PMI_SIZE", COUNT, "", "MPICH", NULL, "the number of PEs"),
    ROW("MPI_LOCALRANKID", COUNT, "", "MPICH", NULL, "this PE's number on its host"),
    ROW("MPI_LOCALNRANKS", COUNT, "", "MPICH", NULL, "the PEs on this host"),
    {NULL, 0, NULL, NULL, NULL, NULL},
};

const symmem_env_var_t *symmem__env_table(void) { return env_table; }

/* The row of name; a name missing from the table is a bug in symmem, and
 * says so loudly rather than reading an unlisted variable. */
static const symmem_env_var_t *row_of(const char *name)
{
    for (const symmem_env_var_t *v = env_table; v->name != NULL; v++)
        if (strcmp(v->name, name) == 0) return v;
    fprintf(stderr, "symmem: internal error: %s is not in the environment table\n", name);
    abort();
}

int symmem__env_is_set(const char *name)
{
    row_of(name);
    const char *value = getenv(name);
    return value != NULL && value[0] != '\0';
}

const char *symmem__env_string(const char *name)
{
    const symmem_env_var_t *row = row_of(name);
    const char *value = getenv(name);
    return value != NULL && value[0] != '\0' ? value : row->default_value;
}

long long symmem__parse_size(const char *text)
{
    char *end;
    errno = 0;
    double number = strtod(text, &end);
    if (end == text || errno != 0 || number < 0) return -1;
    while (isspace((unsigned char)*end)) end++;
    double scale = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': scale = 1024.0; end++; break;
    case 'M': scale = 1024.0 * 1024; end++; break;
    case 'G': scale = 1024.0 * 1024 * 1024; end++; break;
    case 'T': scale = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (scale > 1 && (*end == 'i' || *end == 'I')) end++;
    if (scale > 1 && (*end == 'b' || *end == 'B')) end++;
    if (*end != '\0') return -1;
    return (long long)(number * scale);
}

static double parse_number(const char *text)
{
    char *end;
    double value = strtod(text, &end);
    return end == text || *end != '\0' || value < 0 ? -1 : value;
}

/* value parsed by parse, or the default parsed the same way after a
 * warning; the table's defaults always parse. */
static double read_typed(const char *name, const char *what, double (*parse)(const char *))
{
    const symmem_env_var_t *row = row_of(name);
    const char *text = symmem__env_string(name);
    double value = parse(text);
    if (value >= 0) return value;
    fprintf(stderr, "symmem: ignoring %s=%s (not %s); using %s\n", name, text, what,
            row->default_value);
    return parse(row->default_value);
}

static double parse_size(const char *text) { return (double)symmem__parse_size(text); }

size_t symmem__env_size(const char *name)
{
    return (size_t)read_typed(name, "a size such as 4096, 512M or 1G", parse_size);
}

double symmem__env_number(const char *name)
{
    return read_typed(name, "a number >= 0", parse_number);
}

int symmem__env_flag(const char *name)
{
    const char *text = symmem__env_string(name);
    return text[0] != '\0' && strcmp(text, "0") != 0;
}

int symmem__env_count(const char *name, int *value_p)
{
    row_of(name);
    const char *text = getenv(name);
    if (text == NULL || text[0] == '\0') return 0;
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || value < 0 || value > 1 << 24) return 0;
    *value_p = (int)value;
    return 1;
}

symmem_status_t symmem__env_choice(const char *call, const char *name, int *index_p)
{
    const symmem_env_var_t *row = row_of(name);
    const char *value = symmem__env_string(name);
    size_t len = strlen(value);
    char listed[256] = "";
    int index = 0, used = 0;
    for (const char *p = row->choices; p != NULL; index++) {
        const char *bar = strchr(p, '|');
        int n = bar ? (int)(bar - p) : (int)strlen(p);
        if ((size_t)n == len && strncmp(p, value, len) == 0) {
            *index_p = index;
            return SYMMEM_OK;
        }
        used += snprintf(listed + used, sizeof(listed) - (size_t)used, "%s'%.*s'",
                         index ? ", " : "", n, p);
        p = bar ? bar + 1 : NULL;
    }
    return symmem__error(SYMMEM_ERR_INVALID, "%s: %s='%s' is not one of %s", call, name, value,
                         listed);
}
