/* The gpu backend's PTX cache (src/backends/gpu/ptx_cache.c) and NVRTC's
 * use of it (nvrtc.c), which need no GPU: keys tell every input apart; a
 * stored module loads back whole; an unsafe folder (writable by others),
 * a file that is not PTX and SYMMEM_KERNEL_CACHE empty or off are not
 * used; a folder and its parents are made where missing; and,
 * where NVRTC is installed, a second compile of the same source is served
 * from the cache (a marked file stands in for it) and a compile of other
 * source is not. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/backends/gpu/nvrtc.h"
#include "../../src/backends/gpu/ptx_cache.h"
#include "c_test.h"

static int me; /* for CHECK: one process */
static char cache_dir[256], nvrtc_lib[4096];

static const char *env_string(const char *name)
{
    if (strcmp(name, "SYMMEM_KERNEL_CACHE") == 0) return cache_dir;
    if (strcmp(name, "SYMMEM_NVRTC_LIB") == 0) return nvrtc_lib;
    return "";
}

static const symmem_core_services_t core = {.env_string = env_string};

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) return NULL;
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

static void keys_differ(void)
{
    const char *opts[] = {"-arch=sm_90", "-std=c++17"}, *other[] = {"-arch=sm_80", "-std=c++17"};
    uint64_t k = symmem__ptx_cache_key("src", "a.cu", opts, 2, 13, 0);
    CHECK(k == symmem__ptx_cache_key("src", "a.cu", opts, 2, 13, 0), "a key is not repeatable");
    CHECK(k != symmem__ptx_cache_key("src2", "a.cu", opts, 2, 13, 0), "source not in the key");
    CHECK(k != symmem__ptx_cache_key("src", "b.cu", opts, 2, 13, 0), "name not in the key");
    CHECK(k != symmem__ptx_cache_key("src", "a.cu", other, 2, 13, 0), "options not in the key");
    CHECK(k != symmem__ptx_cache_key("src", "a.cu", opts, 1, 13, 0), "option count not in it");
    CHECK(k != symmem__ptx_cache_key("src", "a.cu", opts, 2, 13, 1), "version not in the key");
    CHECK(symmem__ptx_cache_key("ab", "c", NULL, 0, 0, 0) !=
              symmem__ptx_cache_key("a", "bc", NULL, 0, 0, 0),
          "parts run together in the key");
}

static void store_and_load(void)
{
    const char *ptx = "//\n.version 8.5\n.target sm_90\n.address_size 64\n";
    symmem__ptx_cache_store(&core, 42, ptx);
    char *back = symmem__ptx_cache_load(&core, 42);
    CHECK(back != NULL && strcmp(back, ptx) == 0, "stored PTX came back as %s", back);
    free(back);
    CHECK(symmem__ptx_cache_load(&core, 43) == NULL, "a key never stored loaded");

    char path[512];
    snprintf(path, sizeof(path), "%s/%016llx.ptx", cache_dir, 44ull);
    FILE *f = fopen(path, "w");
    fputs("not a module", f);
    fclose(f);
    CHECK(symmem__ptx_cache_load(&core, 44) == NULL, "a file that is not PTX was loaded");

    chmod(cache_dir, 0777);
    CHECK(symmem__ptx_cache_load(&core, 42) == NULL, "a folder others can write was used");
    chmod(cache_dir, 0700);

    char saved[sizeof(cache_dir)];
    strcpy(saved, cache_dir);
    strcpy(cache_dir, "off");
    CHECK(symmem__ptx_cache_load(&core, 42) == NULL, "SYMMEM_KERNEL_CACHE=off still loaded");
    symmem__ptx_cache_store(&core, 45, ptx); /* must write nothing, anywhere */
    strcpy(cache_dir, "");
    CHECK(symmem__ptx_cache_load(&core, 42) == NULL, "SYMMEM_KERNEL_CACHE= still loaded");
    strcpy(cache_dir, saved);
    CHECK(symmem__ptx_cache_load(&core, 45) == NULL, "SYMMEM_KERNEL_CACHE=off still stored");
}

/* NVRTC from SYMMEM_NVRTC_LIB, else a CUDA toolkit's; 0 where none is. */
static int find_nvrtc(void)
{
    const char *given = getenv("SYMMEM_NVRTC_LIB");
    if (given != NULL && given[0] != '\0') {
        snprintf(nvrtc_lib, sizeof(nvrtc_lib), "%s", given);
        return 1;
    }
    glob_t g;
    int found = glob("/usr/local/cuda*/lib*/libnvrtc.so.1[0-9]", 0, NULL, &g) == 0;
    if (found) snprintf(nvrtc_lib, sizeof(nvrtc_lib), "%s", g.gl_pathv[g.gl_pathc - 1]);
    globfree(&g);
    return found;
}

static void compile_through_cache(void)
{
    const char *source = "extern \"C\" __global__ void k(int *p) { *p = 7; }\n";
    const char *options[] = {"-arch=compute_80"};
    char why[2048], *ptx = NULL;
    CHECK(symmem__gpu_nvrtc_compile(&core, source, "k.cu", options, 1, &ptx, why, sizeof(why)) == 0,
          "compile failed: %s", why);
    CHECK(strstr(ptx, ".entry k") != NULL, "no kernel k in the PTX: %s", ptx);
    free(ptx);

    /* mark the file NVRTC's compile left, and compile again: the mark shows
     * that the second compile came from the cache */
    glob_t g;
    char pattern[512];
    snprintf(pattern, sizeof(pattern), "%s/*.ptx", cache_dir);
    CHECK(glob(pattern, 0, NULL, &g) == 0, "the compile left no file in %s", cache_dir);
    char *stored = NULL;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char *text = read_file(g.gl_pathv[i]);
        if (text != NULL && strstr(text, ".entry k") != NULL) {
            FILE *f = fopen(g.gl_pathv[i], "a");
            fputs("// marked by the test\n", f);
            fclose(f);
            stored = g.gl_pathv[i];
        }
    }
    CHECK(stored != NULL, "no file in %s holds the kernel", cache_dir);
    globfree(&g);
    CHECK(symmem__gpu_nvrtc_compile(&core, source, "k.cu", options, 1, &ptx, why, sizeof(why)) == 0,
          "second compile failed: %s", why);
    CHECK(strstr(ptx, "marked by the test") != NULL, "the second compile did not use the cache");
    free(ptx);

    const char *other = "extern \"C\" __global__ void k(int *p) { *p = 8; }\n";
    CHECK(symmem__gpu_nvrtc_compile(&core, other, "k.cu", options, 1, &ptx, why, sizeof(why)) == 0,
          "compile of other source failed: %s", why);
    CHECK(strstr(ptx, "marked by the test") == NULL, "other source was served the cached PTX");
    free(ptx);
}

int main(void)
{
    char made[] = "/tmp/symmem-ptx-cache-XXXXXX";
    CHECK(mkdtemp(made) != NULL, "no temporary folder");
    snprintf(cache_dir, sizeof(cache_dir), "%s/deep/kernels", made); /* the cache makes both */

    keys_differ();
    store_and_load();
    if (find_nvrtc())
        compile_through_cache();
    else
        printf("test_ptx_cache: no NVRTC here; compiling through the cache not tested\n");

    char command[512];
    snprintf(command, sizeof(command), "rm -rf %s", made);
    CHECK(system(command) == 0, "could not remove %s", made);
    printf("test_ptx_cache: OK\n");
    return 0;
}
