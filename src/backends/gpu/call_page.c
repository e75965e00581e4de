/* The call pages: see call_page.h. */
#include "call_page.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE_SIZE_BYTES sizeof(gpu_call_page_t)

uint64_t symmem__gpu_calls_team_key(int handle, const int *members, int n)
{
    uint64_t h = 14695981039346656037ULL ^ (uint64_t)(uint32_t)handle; /* FNV-1a */
    h *= 1099511628211ULL;
    for (int i = 0; i < n; i++) h = (h ^ (uint64_t)(uint32_t)members[i]) * 1099511628211ULL;
    return h ? h : 1;
}

static void page_path(char *out, size_t size, pid_t pid, uint64_t start)
{
    snprintf(out, size, "/dev/shm/symmem-%u-gpu-%ld-%llu", (unsigned)geteuid(), (long)pid,
             (unsigned long long)start);
}

int symmem__gpu_calls_create(gpu_calls_t *c, int n_pes, int me, uint64_t start, char *why,
                             size_t why_size)
{
    memset(c, 0, sizeof(*c));
    c->n_pes = n_pes;
    c->me = me;
    c->peers = calloc((size_t)n_pes, sizeof(*c->peers));
    if (c->peers == NULL) {
        snprintf(why, why_size, "out of host memory");
        return -1;
    }
    char path[sizeof(c->name)];
    page_path(path, sizeof(path), getpid(), start);
    const char *step = "cannot create";
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        snprintf(c->name, sizeof(c->name), "%s", path);
        /* reserved now, so that a full /dev/shm is an error here, never a SIGBUS */
        int rc = posix_fallocate(fd, 0, (off_t)PAGE_SIZE_BYTES);
        step = "cannot reserve";
        if (rc == 0) {
            void *map = mmap(NULL, PAGE_SIZE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            step = "cannot map";
            if (map != MAP_FAILED) c->mine = map;
        } else {
            errno = rc;
        }
    }
    int saved = errno;
    if (fd >= 0) close(fd);
    if (c->mine == NULL) {
        snprintf(why, why_size, "%s %s: %s", step, path, strerror(saved));
        symmem__gpu_calls_free(c);
        return -1;
    }
    memset(c->mine, 0, PAGE_SIZE_BYTES);
    c->mine->magic = GPU_CALL_PAGE_MAGIC;
    c->mine->size = PAGE_SIZE_BYTES;
    atomic_store_explicit(&c->mine->state, GPU_PE_RUNNING, memory_order_release);
    return 0;
}

int symmem__gpu_calls_open_peer(gpu_calls_t *c, int pe, pid_t pid, uint64_t start, char *why,
                                size_t why_size)
{
    char path[sizeof(c->name)];
    page_path(path, sizeof(path), pid, start);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open PE %d's %s: %s", pe, path, strerror(errno));
        return -1;
    }
    struct stat st;
    const char *wrong = NULL;
    if (fstat(fd, &st) != 0)
        wrong = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        wrong = "not a regular file";
    else if (st.st_uid != geteuid())
        wrong = "owned by another user";
    else if ((st.st_mode & 077) != 0)
        wrong = "open to other users (mode is not 0600)";
    else if (st.st_nlink != 1)
        wrong = "it has more than one name";
    else if (st.st_size != (off_t)PAGE_SIZE_BYTES)
        wrong = "not the size of a call page";
    void *map = MAP_FAILED;
    if (wrong == NULL) {
        map = mmap(NULL, PAGE_SIZE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) wrong = strerror(errno);
    }
    close(fd);
    const gpu_call_page_t *page = map == MAP_FAILED ? NULL : map;
    if (page != NULL && (page->magic != GPU_CALL_PAGE_MAGIC || page->size != PAGE_SIZE_BYTES))
        wrong = "not a call page of this version (magic)";
    if (wrong != NULL) {
        if (page != NULL) munmap(map, PAGE_SIZE_BYTES);
        snprintf(why, why_size, "PE %d's %s is unusable: %s", pe, path, wrong);
        return -1;
    }
    c->peers[pe] = page;
    return 0;
}

void symmem__gpu_calls_unlink(gpu_calls_t *c)
{
    if (c->name[0] != '\0') unlink(c->name);
    c->name[0] = '\0';
}

void symmem__gpu_calls_free(gpu_calls_t *c)
{
    symmem__gpu_calls_unlink(c);
    for (int pe = 0; c->peers != NULL && pe < c->n_pes; pe++)
        if (c->peers[pe] != NULL) munmap((void *)c->peers[pe], PAGE_SIZE_BYTES);
    if (c->mine != NULL) munmap(c->mine, PAGE_SIZE_BYTES);
    free(c->peers);
    c->peers = NULL;
    c->mine = NULL;
}

/* ---- this PE's records ---- */

void symmem__gpu_calls_set_team(gpu_calls_t *c, int handle, const int *members, int n)
{
    if (handle < 0 || handle >= GPU_CALL_TEAMS) return;
    symmem__gpu_calls_forget_team(c, handle);
    c->team_key[handle] = symmem__gpu_calls_team_key(handle, members, n);
    /* on the page at once, count 0: a peer's cycle search (below) sees this
     * PE in the team before its first collective there */
    if (c->mine != NULL)
        atomic_store_explicit(&c->mine->team_key[handle], c->team_key[handle],
                              memory_order_release);
}

void symmem__gpu_calls_publish(gpu_calls_t *c, int handle, const int *members, int n,
                               symmem_call_t call, gpu_call_ref_t *ref)
{
    ref->handle = handle;
    ref->call = call;
    ref->npeers = 0;
    ref->seq = ref->stamp = 0;
    if (handle < 0 || handle >= GPU_CALL_TEAMS || c->mine == NULL) return;
    if (c->team_key[handle] == 0)
        c->team_key[handle] = symmem__gpu_calls_team_key(handle, members, n);
    ref->team_key = c->team_key[handle];
    ref->seq = ++c->team_seq[handle];
    ref->stamp = ++c->stamp;
    for (int i = 0; i < n && ref->npeers < GPU_CALL_MAX_PEERS; i++)
        if (members[i] >= 0 && members[i] < c->n_pes && c->peers[members[i]] != NULL)
            ref->peers[ref->npeers++] = members[i];
    gpu_call_page_t *p = c->mine;
    gpu_call_record_t *r = &p->ring[ref->stamp % GPU_CALL_RING];
    /* Seqlock write: the record is withdrawn (stamp 0) before its fields
     * change; the release fence orders that store before them, pairing
     * with the acquire fence a reader issues before it reads stamp again. */
    atomic_store_explicit(&r->stamp, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&r->team_key, ref->team_key, memory_order_relaxed);
    atomic_store_explicit(&r->seq, ref->seq, memory_order_relaxed);
    atomic_store_explicit(&r->what, call.what, memory_order_relaxed);
    atomic_store_explicit(&r->count, call.count, memory_order_relaxed);
    /* release: the fields before the stamp; pairs with read_record's acquire load */
    atomic_store_explicit(&r->stamp, ref->stamp, memory_order_release);
    atomic_store_explicit(&p->team_key[handle], ref->team_key, memory_order_relaxed);
    /* release: the record (and the key) before the count that announces it;
     * pairs with the acquire load in symmem__gpu_calls_find */
    atomic_store_explicit(&p->team_seq[handle], ref->seq, memory_order_release);
}

void symmem__gpu_calls_unpublish(gpu_calls_t *c, const gpu_call_ref_t *ref)
{
    int h = ref->handle;
    if (h < 0 || h >= GPU_CALL_TEAMS || ref->seq == 0 || c->team_seq[h] != ref->seq) return;
    c->team_seq[h]--;
    /* the count first, then the record: a reader that sees the record gone
     * after seeing the old count takes it for overwritten (not checked) */
    atomic_store_explicit(&c->mine->team_seq[h], c->team_seq[h], memory_order_release);
    atomic_store_explicit(&c->mine->ring[ref->stamp % GPU_CALL_RING].stamp, 0,
                          memory_order_release);
}

void symmem__gpu_calls_forget_team(gpu_calls_t *c, int handle)
{
    if (handle < 0 || handle >= GPU_CALL_TEAMS) return;
    uint64_t key = c->team_key[handle], seq = c->team_seq[handle];
    c->team_key[handle] = 0;
    c->team_seq[handle] = 0;
    if (c->mine == NULL) return;
    if (key != 0) { /* a team lived here: it retires (a peer may still check its calls) */
        atomic_store_explicit(&c->mine->retired_seq[handle], seq, memory_order_relaxed);
        atomic_store_explicit(&c->mine->retired_key[handle], key, memory_order_relaxed);
    }
    /* release: the retired team before the key and count that no longer
     * name it; pairs with the acquire loads of both in symmem__gpu_calls_find */
    atomic_store_explicit(&c->mine->team_key[handle], 0, memory_order_release);
    atomic_store_explicit(&c->mine->team_seq[handle], 0, memory_order_release);
    for (int i = 0; i < GPU_CALL_RING; i++)
        if (key != 0 &&
            atomic_load_explicit(&c->mine->ring[i].team_key, memory_order_relaxed) == key)
            atomic_store_explicit(&c->mine->ring[i].stamp, 0, memory_order_release);
}

void symmem__gpu_calls_set_state(gpu_calls_t *c, uint32_t state)
{
    /* release: after every record this PE published; pairs with the acquire
     * load in symmem__gpu_calls_state, after which a reader looks again */
    if (c->mine != NULL) atomic_store_explicit(&c->mine->state, state, memory_order_release);
}

void symmem__gpu_calls_set_blocked(gpu_calls_t *c, uint64_t stamp)
{
    /* release: the record with this stamp is published before; pairs with
     * the acquire load in symmem__gpu_calls_waits_for_me */
    if (c->mine != NULL) atomic_store_explicit(&c->mine->blocked, stamp, memory_order_release);
}

/* ---- peers' records ---- */

/* PE pe's page: this PE's own, a same-host peer's, or NULL. */
static const gpu_call_page_t *page_of(const gpu_calls_t *c, int pe)
{
    if (pe == c->me) return c->mine;
    return pe >= 0 && pe < c->n_pes && c->peers != NULL ? c->peers[pe] : NULL;
}

typedef struct {
    uint64_t stamp, team_key, seq;
    symmem_call_t call;
} record_t;

/* A consistent copy of ring entry r, or 0 if it is empty or being written. */
static int read_record(const gpu_call_record_t *r, record_t *out)
{
    for (int tries = 0; tries < 8; tries++) {
        /* acquire pairs with the release store of the stamp in publish */
        uint64_t stamp = atomic_load_explicit(&r->stamp, memory_order_acquire);
        if (stamp == 0) return 0;
        out->team_key = atomic_load_explicit(&r->team_key, memory_order_relaxed);
        out->seq = atomic_load_explicit(&r->seq, memory_order_relaxed);
        out->call.what = atomic_load_explicit(&r->what, memory_order_relaxed);
        out->call.count = atomic_load_explicit(&r->count, memory_order_relaxed);
        /* acquire fence: the fields are read before stamp is read again; pairs
         * with the release fence after a writer withdraws the record */
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&r->stamp, memory_order_relaxed) == stamp) {
            out->stamp = stamp;
            return 1;
        }
    }
    return 0; /* torn every time: rewritten as we read, so not the one sought */
}

int symmem__gpu_calls_find(const gpu_calls_t *c, int pe, int handle, uint64_t team_key,
                           uint64_t seq, symmem_call_t *call_p)
{
    const gpu_call_page_t *p = page_of(c, pe);
    if (p == NULL || handle < 0 || handle >= GPU_CALL_TEAMS) return GPU_RECORD_GONE;
    /* acquire pairs with the release store of team_seq in publish: the
     * records up to it are visible (unless overwritten since) */
    uint64_t published = atomic_load_explicit(&p->team_seq[handle], memory_order_acquire);
    /* acquire: pairs with the release store of the key in forget_team, so
     * that a key that no longer names the team shows its retired record */
    if (atomic_load_explicit(&p->team_key[handle], memory_order_acquire) != team_key) {
        /* pe destroyed the team after publishing the call: it entered it */
        if (atomic_load_explicit(&p->retired_key[handle], memory_order_relaxed) == team_key &&
            atomic_load_explicit(&p->retired_seq[handle], memory_order_relaxed) >= seq)
            return GPU_RECORD_GONE;
        return GPU_RECORD_NOT_YET;
    }
    if (published < seq) return GPU_RECORD_NOT_YET;
    record_t r;
    for (int i = 0; i < GPU_CALL_RING; i++)
        if (read_record(&p->ring[i], &r) && r.team_key == team_key && r.seq == seq) {
            *call_p = r.call;
            return GPU_RECORD_FOUND;
        }
    return GPU_RECORD_GONE;
}

uint32_t symmem__gpu_calls_state(const gpu_calls_t *c, int pe)
{
    const gpu_call_page_t *p = page_of(c, pe);
    /* acquire pairs with the release in set_state */
    return p == NULL ? GPU_PE_RUNNING : atomic_load_explicit(&p->state, memory_order_acquire);
}

/* Keeps calls/pes ordered by PE, so that messages list PEs in order. */
static void add_sorted(symmem_call_t *calls, int *pes, int *n, int pe, symmem_call_t call)
{
    int i = *n;
    while (i > 0 && pes[i - 1] > pe) {
        pes[i] = pes[i - 1];
        calls[i] = calls[i - 1];
        i--;
    }
    pes[i] = pe;
    calls[i] = call;
    (*n)++;
}

int symmem__gpu_calls_verdict(const gpu_calls_t *c, const gpu_call_ref_t *ref, int check,
                              symmem_call_t *calls, int *pes, int *n_p, int *culprit_p)
{
    int n = 0, waiting = 0, mismatch = 0, left = -1;
    add_sorted(calls, pes, &n, c->me, ref->call);
    for (int i = 0; i < ref->npeers; i++) {
        int pe = ref->peers[i];
        symmem_call_t theirs;
        int found = symmem__gpu_calls_find(c, pe, ref->handle, ref->team_key, ref->seq, &theirs);
        if (found == GPU_RECORD_NOT_YET && symmem__gpu_calls_state(c, pe) == GPU_PE_FINALIZING) {
            /* it published everything before FINALIZING: a second look tells
             * whether it entered this collective before it left */
            found = symmem__gpu_calls_find(c, pe, ref->handle, ref->team_key, ref->seq, &theirs);
            if (found == GPU_RECORD_NOT_YET && left < 0) left = pe;
        }
        if (found == GPU_RECORD_FOUND) {
            add_sorted(calls, pes, &n, pe, theirs);
            if (check && !symmem__call_same(&theirs, &ref->call)) mismatch = 1;
        } else if (found == GPU_RECORD_NOT_YET) {
            waiting = 1;
        }
    }
    *n_p = n;
    *culprit_p = left;
    return mismatch    ? GPU_VERDICT_MISMATCH
           : left >= 0 ? GPU_VERDICT_LEFT
           : waiting   ? GPU_VERDICT_WAITING
                       : GPU_VERDICT_MATCH;
}

int symmem__gpu_calls_waits_for_me(const gpu_calls_t *c, int pe, symmem_call_t *call_p)
{
    const gpu_call_page_t *p = c->peers[pe];
    if (p == NULL) return 0;
    /* acquire pairs with the release in set_blocked */
    uint64_t stamp = atomic_load_explicit(&p->blocked, memory_order_acquire);
    record_t r;
    if (stamp == 0 || !read_record(&p->ring[stamp % GPU_CALL_RING], &r) || r.stamp != stamp)
        return 0;
    /* The team by its key: the fingerprint names the core's channel, which
     * need not be NVSHMEM's handle (split teams). */
    int handle = -1;
    for (int h = 0; h < GPU_CALL_TEAMS && handle < 0 && r.team_key != 0; h++)
        if (c->team_key[h] == r.team_key) handle = h;
    if (handle < 0 || c->team_seq[handle] >= r.seq) return 0;
    *call_p = r.call;
    return 1;
}

/* ---- collectives that wait for each other ---- */

/* 1 if PE a has published more collectives than PE b on a team both are
 * in, so that a's next one there waits for b: that call of a's in *call_p
 * (kind 0 if its record is gone). */
static int waits_on(const gpu_calls_t *c, int a, int b, symmem_call_t *call_p)
{
    const gpu_call_page_t *pa = page_of(c, a), *pb = page_of(c, b);
    for (int h = 0; pa != NULL && pb != NULL && h < GPU_CALL_TEAMS; h++) {
        /* acquire pairs with the release store of team_seq in publish */
        uint64_t ahead = atomic_load_explicit(&pa->team_seq[h], memory_order_acquire);
        uint64_t key = atomic_load_explicit(&pa->team_key[h], memory_order_relaxed);
        if (key == 0 || ahead == 0) continue;
        uint64_t behind = atomic_load_explicit(&pb->team_seq[h], memory_order_acquire);
        if (atomic_load_explicit(&pb->team_key[h], memory_order_relaxed) != key || behind >= ahead)
            continue;
        call_p->what = call_p->count = 0;
        symmem__gpu_calls_find(c, a, h, key, behind + 1, call_p);
        return 1;
    }
    return 0;
}

/* Depth-first from pes[depth - 1] back to this PE. A PE once left found
 * no way back, so it is never entered again (seen): at most n * n edges. */
static int find_cycle(const gpu_calls_t *c, char *seen, int *pes, symmem_call_t *calls, int depth,
                      int max)
{
    int a = pes[depth - 1];
    for (int b = 0; b < c->n_pes; b++) {
        if (b == a || page_of(c, b) == NULL || (seen[b] && b != c->me) ||
            symmem__gpu_calls_state(c, b) != GPU_PE_RUNNING ||
            !waits_on(c, a, b, &calls[depth - 1]))
            continue;
        if (b == c->me) return depth;
        if (depth == max) continue;
        seen[b] = 1;
        pes[depth] = b;
        int found = find_cycle(c, seen, pes, calls, depth + 1, max);
        if (found) return found;
    }
    return 0;
}

int symmem__gpu_calls_cycle(const gpu_calls_t *c, int *pes, symmem_call_t *calls, int max)
{
    if (c->mine == NULL || max < 2) return 0;
    char *seen = calloc((size_t)c->n_pes, 1);
    if (seen == NULL) return 0;
    seen[c->me] = 1;
    pes[0] = c->me;
    int found = find_cycle(c, seen, pes, calls, 1, max);
    free(seen);
    return found;
}

uint64_t symmem__gpu_calls_progress(const gpu_calls_t *c)
{
    uint64_t sum = 0;
    for (int pe = 0; pe < c->n_pes; pe++) {
        const gpu_call_page_t *p = page_of(c, pe);
        for (int h = 0; p != NULL && h < GPU_CALL_TEAMS; h++)
            sum = sum * 31 + atomic_load_explicit(&p->team_seq[h], memory_order_relaxed);
    }
    return sum;
}

int symmem__gpu_calls_ahead(const gpu_calls_t *c, int pe, symmem_call_t *call_p)
{
    return pe != c->me && waits_on(c, pe, c->me, call_p);
}
