#include "env.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const symmem_env_var_t env_table[] = {
    {"SYMMEM_BACKEND", "auto",
     "cpu, gpu or auto (gpu when a CUDA device and libnvshmem are usable)"},
    {"SYMMEM_SYMMETRIC_SIZE", "1G",
     "bytes of symmetric heap per PE (suffixes K, M, G); pages are committed "
     "only when allocated"},
    {"SYMMEM_TIMEOUT", "0",
     "seconds any blocking call may wait before raising (0 = no limit; dead "
     "peers are always detected)"},
    {"SYMMEM_SPIN_US", "20",
     "microseconds a wait spins before it sleeps in the kernel"},
    {"SYMMEM_NT_COPY_MIN", "16M",
     "cpu: copies of at least this many bytes use stores that bypass the cache (0 = never)"},
    {"SYMMEM_DEBUG", "0", "1 prints every error to stderr where it is detected"},
    {"SYMMEM_GPU_KERNELS", "symmem",
     "gpu: symmem (within an NVLink domain put_signal and signal_op are symmem's own "
     "kernels) or nvshmem (NVSHMEM's copy, then its signal kernel)"},
    {"SYMMEM_NVSHMEM_LIB", "",
     "path of libnvshmem_host.so.3 for the gpu backend (else the nvidia-nvshmem "
     "wheel, then the system)"},
    {"SYMMEM_JOB", "", "set by the launcher: the job's rendezvous name"},
    {"SYMMEM_RANK", "", "set by the launcher: this PE's number"},
    {"SYMMEM_NRANKS", "", "set by the launcher: the number of PEs"},
    {"SYMMEM_STATUS_DIR", "",
     "set by the launcher: where it writes how each PE exited"},
    {NULL, NULL, NULL},
};

const symmem_env_var_t *symmem_env_table(void) { return env_table; }

const char *symmem__env_string(const char *name)
{
    const char *value = getenv(name);
    if (value != NULL && value[0] != '\0') return value;
    for (const symmem_env_var_t *v = env_table; v->name != NULL; v++)
        if (strcmp(v->name, name) == 0) return v->default_value;
    return "";
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

static double env_number(const char *name, double fallback)
{
    const char *text = symmem__env_string(name);
    char *end;
    double value = strtod(text, &end);
    if (end == text || *end != '\0' || value < 0) {
        fprintf(stderr, "symmem: ignoring %s=%s (not a number >= 0)\n", name,
                text);
        return fallback;
    }
    return value;
}

size_t symmem__env_symmetric_size(void)
{
    long long size = symmem__parse_size(symmem__env_string("SYMMEM_SYMMETRIC_SIZE"));
    if (size <= 0) {
        fprintf(stderr, "symmem: ignoring SYMMEM_SYMMETRIC_SIZE=%s (not a size)\n",
                symmem__env_string("SYMMEM_SYMMETRIC_SIZE"));
        size = 1LL << 30;
    }
    return (size_t)size;
}

size_t symmem__env_nt_copy_min(void)
{
    long long size = symmem__parse_size(symmem__env_string("SYMMEM_NT_COPY_MIN"));
    if (size < 0) {
        fprintf(stderr, "symmem: ignoring SYMMEM_NT_COPY_MIN=%s (not a size)\n",
                symmem__env_string("SYMMEM_NT_COPY_MIN"));
        size = 16LL << 20;
    }
    return (size_t)size;
}

double symmem__env_timeout(void) { return env_number("SYMMEM_TIMEOUT", 0); }
double symmem__env_spin_us(void) { return env_number("SYMMEM_SPIN_US", 20); }

int symmem__env_debug(void)
{
    const char *text = getenv("SYMMEM_DEBUG");
    return text != NULL && text[0] != '\0' && strcmp(text, "0") != 0;
}
