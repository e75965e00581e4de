/* The refusals of the environment table: a variable whose value cannot be
 * used becomes an error naming the call, the variable and its value. The
 * readers (env.c) report nothing themselves, so the error module can read
 * SYMMEM_DEBUG through them. */
#include "env_check.h"

#include "env.h"
#include "error.h"

symmem_status_t symmem__env_check(const char *call)
{
    for (const symmem_env_var_t *v = symmem__env_table(); v->name != NULL; v++) {
        const char *takes = symmem__env_malformed(v);
        if (takes != NULL)
            return symmem__error(SYMMEM_ERR_INVALID, "%s: %s='%s' is not %s", call, v->name,
                                 symmem__env_string(v->name), takes);
    }
    return SYMMEM_OK;
}

symmem_status_t symmem__env_whole(const char *call, const char *name, long long *value_p)
{
    if (!symmem__env_whole_value(name, value_p))
        return symmem__error(SYMMEM_ERR_INVALID, "%s: %s='%s' is not a whole number >= 0", call,
                             name, symmem__env_string(name));
    return SYMMEM_OK;
}

symmem_status_t symmem__env_choice(const char *call, const char *name, int *index_p)
{
    char listed[256];
    int index = symmem__env_choice_index(name, listed, sizeof(listed));
    if (index < 0)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: %s='%s' is not one of %s", call, name,
                             symmem__env_string(name), listed);
    *index_p = index;
    return SYMMEM_OK;
}
