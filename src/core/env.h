/* The one table of environment variables. It lists every variable the
 * library reads, with the default written once (as a user would write it,
 * parsed by the same code as the user's value), what kind of value it takes,
 * which backend it applies to, and the text `python -m symmem info` prints.
 * Every read goes through the readers below, which refuse names the table
 * does not list. */
#ifndef SYMMEM_CORE_ENV_H
#define SYMMEM_CORE_ENV_H

#include <stddef.h>

#include "symmem/symmem.h"

typedef enum {
    SYMMEM_ENV_TEXT,     /* any text */
    SYMMEM_ENV_CHOICE,   /* one of choices, '|'-separated */
    SYMMEM_ENV_SIZE,     /* bytes: "4096", "512M", "1.5GiB" */
    SYMMEM_ENV_NUMBER,   /* a number >= 0 */
    SYMMEM_ENV_COUNT,    /* an integer >= 0 */
    SYMMEM_ENV_FLAG,     /* set and not "0" */
    SYMMEM_ENV_DURATION, /* seconds: "30", "1.5", "30s", "500ms", "2min" */
} symmem_env_kind_t;

typedef struct {
    const char *name;
    symmem_env_kind_t kind;
    const char *default_value; /* "" = unset */
    const char *applies_to;    /* "all", "cpu", "gpu", "launcher" (set by symmem.run),
                                  "torchrun", "Open MPI", "Slurm", "MPICH" (read from them) */
    const char *choices;       /* SYMMEM_ENV_CHOICE only */
    const char *help;
} symmem_env_var_t;

/* The table, ending with a {NULL} entry. */
const symmem_env_var_t *symmem__env_table(void);

/* The value, or the table's default where unset or empty. */
const char *symmem__env_string(const char *name);
/* Whether the user set the variable (to anything but ""). */
int symmem__env_is_set(const char *name);
/* What a set typed variable's value should be (the table's words, "a size
 * such as ..."), where it does not parse; NULL where it does, is unset, is
 * untyped or is NVSHMEM's own (NVSHMEM reads those). env_check.c makes
 * the errors. */
const char *symmem__env_malformed(const symmem_env_var_t *v);
/* Typed readers, by the variable's kind: a size in bytes, a number, a
 * duration in seconds. A malformed value (one changed since init checked)
 * is reported on stderr, naming the variable and what it takes, and the
 * default is used. */
size_t symmem__env_size(const char *name);
double symmem__env_number(const char *name);
int symmem__env_flag(const char *name);
/* An integer variable: 1 and *value_p where it is set to one, else 0 (a
 * malformed value too: what init reads goes through symmem__env_whole). */
int symmem__env_count(const char *name, int *value_p);
/* An integer variable, read strictly: 1 and *value_p = -1 where it is
 * unset (or ""), 1 and its value where it is a whole number >= 0, else 0. */
int symmem__env_whole_value(const char *name, long long *value_p);
/* The index of the value among the variable's choices, or -1 with the
 * choices, quoted, in listed. */
int symmem__env_choice_index(const char *name, char *listed, size_t size);

/* Parses "1G", "512M", "4096", "1.5GiB" into bytes; -1 if malformed. */
long long symmem__parse_size(const char *text);

#endif
