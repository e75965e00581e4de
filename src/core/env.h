/* The one table of environment variables: parsing, defaults and the text
 * that `python -m symmem info` prints. */
#ifndef SYMMEM_CORE_ENV_H
#define SYMMEM_CORE_ENV_H

#include <stddef.h>

#include "symmem/symmem.h"

typedef struct {
    const char *name;
    const char *default_value; /* as a user would write it; "" = unset */
    const char *help;
} symmem_env_var_t;

/* The table, ending with a {NULL} entry. */
const symmem_env_var_t *symmem_env_table(void);

/* Typed readers; a malformed value is reported once and the default used. */
size_t symmem__env_symmetric_size(void); /* SYMMEM_SYMMETRIC_SIZE, bytes */
double symmem__env_timeout(void);        /* SYMMEM_TIMEOUT, 0 = none */
int symmem__env_debug(void);             /* SYMMEM_DEBUG */
double symmem__env_spin_us(void);        /* SYMMEM_SPIN_US */
size_t symmem__env_nt_copy_min(void);    /* SYMMEM_NT_COPY_MIN, bytes, 0 = never */
/* A string variable, or its default ("" if none). */
const char *symmem__env_string(const char *name);

/* Parses "1G", "512M", "4096", "1.5GiB" into bytes; -1 if malformed. */
long long symmem__parse_size(const char *text);

#endif
