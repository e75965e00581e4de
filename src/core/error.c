#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "env.h"

static _Thread_local char last_error[1024];
static int error_pe = -1;

static const char *const status_strings[SYMMEM_STATUS_COUNT] = {
    [SYMMEM_OK] = "success",
    [SYMMEM_ERR_INVALID] = "invalid argument",
    [SYMMEM_ERR_NOT_INITIALIZED] = "not initialized",
    [SYMMEM_ERR_NOT_SYMMETRIC] = "memory is not on the symmetric heap",
    [SYMMEM_ERR_MISMATCH] = "PEs disagree on a collective's arguments",
    [SYMMEM_ERR_NO_MEMORY] = "out of memory",
    [SYMMEM_ERR_SYSTEM] = "system call failed",
    [SYMMEM_ERR_BOOTSTRAP] = "bootstrap failed",
    [SYMMEM_ERR_PEER_DEAD] = "a peer PE died",
    [SYMMEM_ERR_TIMEOUT] = "timed out",
    [SYMMEM_ERR_UNSUPPORTED] = "not supported by this backend",
    [SYMMEM_ERR_BACKEND] = "backend library failure",
    [SYMMEM_ERR_INTERRUPTED] = "interrupted by a signal",
    [SYMMEM_ERR_FORKED] = "called in a process forked after init()",
};

const char *symmem_status_string(symmem_status_t status)
{
    if ((unsigned)status >= SYMMEM_STATUS_COUNT) return "unknown status";
    return status_strings[status];
}

const char *symmem_last_error(void)
{
    return last_error;
}

void symmem__error_set_pe(int pe)
{
    error_pe = pe;
}

symmem_status_t symmem__error(symmem_status_t status, const char *fmt, ...)
{
    /* Formatted first: a message that carries an earlier one (a reason kept
     * across a collective step) has its "[pe N] " already, and gets no other. */
    char text[sizeof(last_error)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    int n = 0;
    if (error_pe >= 0 && strncmp(text, "[pe ", 4) != 0)
        n = snprintf(last_error, sizeof(last_error), "[pe %d] ", error_pe);
    size_t len = strnlen(text, sizeof(last_error) - (size_t)n - 1);
    memcpy(last_error + n, text, len);
    last_error[(size_t)n + len] = '\0';
    if (symmem__env_flag("SYMMEM_DEBUG")) fprintf(stderr, "symmem: %s\n", last_error);
    return status;
}
