/* CUDA graphs that captured symmem calls, tracked until CUDA destroys them,
 * so that a wait at free or finalize can say which are still alive. A user
 * object attached to the graph being captured calls back once the graph and
 * every instance of it are gone. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

#define CAPTURE_STATUS_ACTIVE 1 /* CU_STREAM_CAPTURE_STATUS_ACTIVE */
#define USER_OBJECT_NO_DESTRUCTOR_SYNC 1
#define GRAPH_USER_OBJECT_MOVE 1

typedef struct capture {
    void *graph; /* the CUgraph: only compared, to count distinct graphs */
    const char *call;
    int nccl; /* NVSHMEM ran it on NCCL */
    struct capture *prev, *next;
} capture_t;

/* Shared with CUDA's thread, which runs forget. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static capture_t *live;

static void forget(void *arg)
{
    capture_t *c = arg;
    pthread_mutex_lock(&lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        live = c->next;
    if (c->next) c->next->prev = c->prev;
    pthread_mutex_unlock(&lock);
    free(c);
}

/* The graph s captures into; NULL where it captures none. */
static void *capturing(nv_stream_t s)
{
    if (libs.cuStreamGetCaptureInfo == NULL) return NULL; /* an older driver: no names */
    int status = 0;
    uint64_t id;
    void *graph = NULL;
    const void *deps;
    size_t ndeps;
    if (libs.cuStreamGetCaptureInfo(s, &status, &id, &graph, &deps, &ndeps) != 0 ||
        status != CAPTURE_STATUS_ACTIVE)
        return NULL;
    return graph;
}

/* nccl: NVSHMEM runs the call on NCCL (the collectives that move data),
 * whose finalize waits for every graph that captured one to be destroyed. */
void symmem__gpu_graphs_note(nv_stream_t s, const char *call, int nccl)
{
    void *graph = capturing(s);
    if (graph == NULL) return;
    capture_t *c = calloc(1, sizeof(*c));
    void *object;
    if (c == NULL) return;
    *c = (capture_t){.graph = graph, .call = call, .nccl = nccl};
    if (libs.cuUserObjectCreate(&object, c, forget, 1, USER_OBJECT_NO_DESTRUCTOR_SYNC) != 0) {
        free(c);
        return;
    }
    pthread_mutex_lock(&lock);
    c->next = live;
    if (live) live->prev = c;
    live = c;
    pthread_mutex_unlock(&lock);
    /* The graph takes our reference; if it cannot, dropping it runs forget. */
    if (libs.cuGraphRetainUserObject(graph, object, 1, GRAPH_USER_OBJECT_MOVE) != 0)
        libs.cuUserObjectRelease(object, 1);
}

/* The call just noted on s ran symmem's own kernel, not NCCL: the newest
 * record of the graph s captures into. */
void symmem__gpu_graphs_not_nccl(nv_stream_t s)
{
    /* nothing noted, so s captures nothing: no second driver call per launch */
    if (__atomic_load_n(&live, __ATOMIC_RELAXED) == NULL) return;
    void *graph = capturing(s);
    if (graph == NULL) return;
    pthread_mutex_lock(&lock);
    for (capture_t *c = live; c != NULL; c = c->next)
        if (c->graph == graph) {
            c->nccl = 0;
            break;
        }
    pthread_mutex_unlock(&lock);
}

int symmem__gpu_graphs_describe(char *out, size_t size, int only_collectives)
{
    int graphs = 0, used = 0;
    char calls[160] = "";
    pthread_mutex_lock(&lock);
    for (capture_t *c = live; c != NULL; c = c->next) {
        if (only_collectives && !c->nccl) continue;
        int seen_graph = 0, seen_call = 0;
        for (capture_t *d = live; d != c; d = d->next) {
            if (only_collectives && !d->nccl) continue;
            seen_graph |= d->graph == c->graph;
            seen_call |= strcmp(d->call, c->call) == 0;
        }
        graphs += !seen_graph;
        if (!seen_call && used < (int)sizeof(calls))
            used += snprintf(calls + used, sizeof(calls) - (size_t)used, "%s%s", used ? ", " : "",
                             c->call);
    }
    pthread_mutex_unlock(&lock);
    if (graphs == 0)
        snprintf(out, size, "no CUDA graph that captured a symmem call is alive");
    else
        snprintf(out, size, "%d CUDA graph%s that captured symmem calls (%s) %s still alive",
                 graphs, graphs == 1 ? "" : "s", calls, graphs == 1 ? "is" : "are");
    return graphs;
}
