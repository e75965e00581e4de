#include "env.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const symmem_env_var_t env_table[] = {
#define SYMMEM_ENV_VAR(name, kind, default_value, applies_to, choices, help)                       \
    {name, SYMMEM_ENV_##kind, default_value, applies_to, choices, help},
#include "env_vars.def"
#undef SYMMEM_ENV_VAR
    {NULL, 0, NULL, NULL, NULL, NULL},
};

const symmem_env_var_t *symmem__env_table(void)
{
    return env_table;
}

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
    if (end == text || errno != 0 || !isfinite(number) || number < 0) return -1;
    while (isspace((unsigned char)*end)) end++;
    double scale = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        scale = 1024.0;
        end++;
        break;
    case 'M':
        scale = 1024.0 * 1024;
        end++;
        break;
    case 'G':
        scale = 1024.0 * 1024 * 1024;
        end++;
        break;
    case 'T':
        scale = 1024.0 * 1024 * 1024 * 1024;
        end++;
        break;
    default: break;
    }
    if (scale > 1 && (*end == 'i' || *end == 'I')) end++;
    if (scale > 1 && (*end == 'b' || *end == 'B')) end++;
    if (*end != '\0') return -1;
    return (long long)(number * scale);
}

/* A number >= 0 (finite) where text is one, else -1; its unit follows in
 * *end_p. */
static double parse_leading_number(const char *text, const char **end_p)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    *end_p = end;
    if (end == text || errno != 0 || !isfinite(value) || value < 0) return -1;
    return value;
}

static double parse_number(const char *text)
{
    const char *end;
    double value = parse_leading_number(text, &end);
    return *end == '\0' ? value : -1;
}

/* Seconds: "30", "1.5", "30s", "500ms", "2min"; -1 if malformed. */
static double parse_duration(const char *text)
{
    static const struct {
        const char *unit;
        double seconds;
    } units[] = {{"", 1}, {"s", 1}, {"ms", 1e-3}, {"min", 60}};
    const char *end;
    double value = parse_leading_number(text, &end);
    if (value < 0) return -1;
    while (isspace((unsigned char)*end)) end++;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(end, units[i].unit) == 0) return value * units[i].seconds;
    return -1;
}

static double parse_size(const char *text)
{
    return (double)symmem__parse_size(text);
}

/* The parser of each typed kind, and what it takes, in words. */
static const struct {
    double (*parse)(const char *);
    const char *takes;
} typed[] = {
    [SYMMEM_ENV_SIZE] = {parse_size, "a size such as 4096, 512M, 1.5G or 2GB"},
    [SYMMEM_ENV_NUMBER] = {parse_number, "a number >= 0"},
    [SYMMEM_ENV_DURATION] = {parse_duration,
                             "a duration such as 30, 1.5, 30s, 500ms or 2min (seconds "
                             "without a unit)"},
};

/* A variable's value as its kind reads it, or the default parsed the same
 * way after a warning (init refused a malformed value already: see
 * symmem__env_check; this is for one changed since). The table's defaults
 * always parse. */
static double read_typed(const char *name)
{
    const symmem_env_var_t *row = row_of(name);
    if ((size_t)row->kind >= sizeof(typed) / sizeof(typed[0]) || typed[row->kind].parse == NULL) {
        /* a caller's slip (a flag or a choice read as a size): 0, never a crash */
        fprintf(stderr, "symmem: internal error: %s is read as a number but is none\n", name);
        return 0;
    }
    const char *text = symmem__env_string(name);
    double value = typed[row->kind].parse(text);
    if (value >= 0) return value;
    fprintf(stderr, "symmem: ignoring %s=%s (not %s); using %s\n", name, text,
            typed[row->kind].takes, row->default_value);
    return typed[row->kind].parse(row->default_value);
}

const char *symmem__env_malformed(const symmem_env_var_t *v)
{
    int is_typed =
        (size_t)v->kind < sizeof(typed) / sizeof(typed[0]) && typed[v->kind].parse != NULL;
    /* NVSHMEM's own variables: NVSHMEM judges them, in its syntax */
    if (!is_typed || strncmp(v->name, "NVSHMEM_", 8) == 0 || !symmem__env_is_set(v->name))
        return NULL;
    return typed[v->kind].parse(symmem__env_string(v->name)) < 0 ? typed[v->kind].takes : NULL;
}

size_t symmem__env_size(const char *name)
{
    return (size_t)read_typed(name);
}

double symmem__env_number(const char *name)
{
    return read_typed(name);
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

int symmem__env_whole_value(const char *name, long long *value_p)
{
    row_of(name);
    const char *text = getenv(name);
    if (text == NULL || text[0] == '\0') {
        *value_p = -1;
        return 1;
    }
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || errno != 0 || *end != '\0') return 0;
    *value_p = value;
    return 1;
}

int symmem__env_choice_index(const char *name, char *listed, size_t size)
{
    const symmem_env_var_t *row = row_of(name);
    const char *value = symmem__env_string(name);
    size_t len = strlen(value), used = 0;
    listed[0] = '\0';
    int index = 0;
    for (const char *p = row->choices; p != NULL; index++) {
        const char *bar = strchr(p, '|');
        int n = bar ? (int)(bar - p) : (int)strlen(p);
        if ((size_t)n == len && strncmp(p, value, len) == 0) return index;
        if (used < size)
            used +=
                (size_t)snprintf(listed + used, size - used, "%s'%.*s'", index ? ", " : "", n, p);
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}
