/* mstx markers (mstx/ms_tools_ext.h): marks, ranges and domains into the daemon's trace (vnpuMarkerMark,
 * vnpuMarkerRangeStart, vnpuMarkerRangeEnd, pipelined). As in mstx, the calls return nothing and never stop the
 * program: a NULL message is ignored (a range start then answers id 0), a domain that was not created or was
 * destroyed marks nothing. Range ids are numbered here, one sequence per process, from 1. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

typedef void *mstxDomainHandle_t;
typedef uint64_t mstxRangeId;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char **domains;
static size_t n_domains;
static uint64_t next_id;

static void mark(const char *message, void *stream, const char *domain)
{
    if (!message) return;
    vn_req r;
    vn_req_begin(&r, "vnpuMarkerMark", 3, 1);
    mp_key(&r.b, "message"), mp_str(&r.b, message);
    mp_key(&r.b, "domain");
    if (domain) mp_str(&r.b, domain);
    else mp_nil(&r.b);
    mp_key(&r.b, "stream"), mp_uint(&r.b, (uintptr_t)stream);
    vn_call(&r, NULL);
}

static mstxRangeId range_start(const char *message, void *stream, const char *domain)
{
    if (!message) return 0;
    mstxRangeId id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    vn_req r;
    vn_req_begin(&r, "vnpuMarkerRangeStart", 4, 1);
    mp_key(&r.b, "rangeId"), mp_uint(&r.b, id);
    mp_key(&r.b, "message"), mp_str(&r.b, message);
    mp_key(&r.b, "domain");
    if (domain) mp_str(&r.b, domain);
    else mp_nil(&r.b);
    mp_key(&r.b, "stream"), mp_uint(&r.b, (uintptr_t)stream);
    vn_call(&r, NULL);
    return id;
}

static void range_end(mstxRangeId id)
{
    if (!id) return;
    vn_req r;
    vn_req_begin(&r, "vnpuMarkerRangeEnd", 1, 1);
    mp_key(&r.b, "rangeId"), mp_uint(&r.b, id);
    vn_call(&r, NULL);
}

static const char *domain_name(mstxDomainHandle_t domain)
{
    const char *found = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_domains; i++)
        if (domains[i] == domain) found = domains[i];
    pthread_mutex_unlock(&lock);
    return found;
}

VN_EXPORT void mstxMarkA(const char *message, void *stream)
{
    vn_enter("mstxMarkA");
    mark(message, stream, NULL);
}
VN_EXPORT mstxRangeId mstxRangeStartA(const char *message, void *stream)
{
    vn_enter("mstxRangeStartA");
    return range_start(message, stream, NULL);
}
VN_EXPORT void mstxRangeEnd(mstxRangeId id)
{
    vn_enter("mstxRangeEnd");
    range_end(id);
}
VN_EXPORT mstxDomainHandle_t mstxDomainCreateA(const char *name)
{
    vn_enter("mstxDomainCreateA");
    if (!name) return NULL;
    char *copy = strdup(name); /* the handle is the domain's name, kept here */
    pthread_mutex_lock(&lock);
    domains = realloc(domains, (n_domains + 1) * sizeof(char *));
    domains[n_domains++] = copy;
    pthread_mutex_unlock(&lock);
    return copy;
}
VN_EXPORT void mstxDomainDestroy(mstxDomainHandle_t domain)
{
    vn_enter("mstxDomainDestroy");
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_domains; i++)
        if (domains[i] == domain) {
            free(domains[i]);
            domains[i] = domains[--n_domains];
            break;
        }
    pthread_mutex_unlock(&lock);
}
VN_EXPORT void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message, void *stream)
{
    vn_enter("mstxDomainMarkA");
    const char *name = domain_name(domain);
    if (name) mark(message, stream, name);
}
VN_EXPORT mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const char *message, void *stream)
{
    vn_enter("mstxDomainRangeStartA");
    const char *name = domain_name(domain);
    return name ? range_start(message, stream, name) : 0;
}
VN_EXPORT void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id)
{
    vn_enter("mstxDomainRangeEnd");
    if (domain_name(domain)) range_end(id);
}

/* aclmdlRIDebugJsonPrint: the daemon returns the chrome-trace JSON, written to `path` here. */
#include <stdio.h>
VN_EXPORT int aclmdlRIDebugJsonPrint(void *modelRI, const char *path, uint32_t flags)
{
    const char *api = "aclmdlRIDebugJsonPrint";
    vn_enter(api);
    vn_req r;
    vn_req_begin(&r, api, 3, 0);
    mp_key(&r.b, "modelRI"), mp_uint(&r.b, (uintptr_t)modelRI);
    mp_key(&r.b, "path");
    if (path) mp_str(&r.b, path);
    else mp_nil(&r.b);
    mp_key(&r.b, "flags"), mp_uint(&r.b, flags);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    const mp_obj *trace = vn_out(&reply, "trace");
    if (path && trace && trace->type == MP_STR) {
        FILE *f = fopen(path, "w");
        if (!f) code = vn_fail(100000, api, "cannot write %s: %m", path);
        else fwrite(trace->v.s, 1, trace->n, f), fclose(f);
    }
    vn_reply_free(&reply);
    return code;
}
