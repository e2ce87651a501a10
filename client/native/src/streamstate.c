/* Stream state callbacks (aclrtRegStreamStateCallback), as the Python client gives them (client/streamstate.py):
 * called in the thread that creates or destroys a stream -- a created one once its create call made it, a
 * destroyed one before its destroy call runs; default streams, which come and go with devices and contexts, are
 * found by asking the daemon for the process's streams before and after such a call. Nothing of this runs while
 * no callback is registered. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define CREATE_POST 1
#define DESTROY_PRE 2
#define MAX_CALLBACKS 64

typedef void (*state_callback)(void *stream, int state, void *args);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *name;
    state_callback fn;
    void *args;
} registered[MAX_CALLBACKS];
static int count;
static __thread int asking; /* vnpuStreams is a call too: not watched */

VN_EXPORT int aclrtRegStreamStateCallback(const char *regName, state_callback callback, void *args)
{
    const char *api = "aclrtRegStreamStateCallback";
    vn_enter(api);
    if (!regName) return vn_fail(100000, api, "regName is NULL");
    pthread_mutex_lock(&lock);
    int found = -1;
    for (int i = 0; i < count; i++)
        if (!strcmp(registered[i].name, regName)) found = i;
    int code = 0;
    if (!callback) {
        if (found >= 0) {
            free(registered[found].name);
            registered[found] = registered[--count];
        }
    } else if (found >= 0)
        code = vn_fail(107000, api, "a stream state callback is registered as '%s' already", regName);
    else if (count == MAX_CALLBACKS)
        code = vn_fail(107000, api, "at most %d stream state callbacks may be registered", MAX_CALLBACKS);
    else
        registered[count].name = strdup(regName), registered[count].fn = callback, registered[count++].args = args;
    pthread_mutex_unlock(&lock);
    return code;
}

static void report(uint64_t stream, int state)
{
    pthread_mutex_lock(&lock);
    int n = count;
    state_callback fns[MAX_CALLBACKS];
    void *args[MAX_CALLBACKS];
    for (int i = 0; i < n; i++) fns[i] = registered[i].fn, args[i] = registered[i].args;
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++) fns[i]((void *)(uintptr_t)stream, state, args[i]);
}

static int kind_of(const char *api)
{
    if (!strcmp(api, "aclrtCreateStream") || !strcmp(api, "aclrtCreateStreamWithConfig")) return 1;
    if (!strcmp(api, "aclrtDestroyStream") || !strcmp(api, "aclrtDestroyStreamForce")) return 2;
    static const char *const defaults[] = {"aclrtSetDevice", "aclrtCreateContext", "aclrtResetDevice",
                                           "aclrtResetDeviceForce", "aclrtDestroyContext", "aclFinalize"};
    for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
        if (!strcmp(api, defaults[i])) return 3;
    return 0;
}

static size_t streams(uint64_t *out, size_t max)
{
    asking = 1;
    vn_req r;
    vn_req_begin(&r, "vnpuStreams", 0, 0);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    asking = 0;
    if (code) {
        vn_take_message(); /* the last aclFinalize: the process holds nothing any more */
        return 0;
    }
    const mp_obj *list = vn_out(&reply, "streams");
    size_t n = 0;
    for (uint32_t i = 0; list && list->type == MP_ARRAY && i < list->n && n < max; i++)
        out[n++] = mp_u64v(&list->v.items[i]);
    vn_reply_free(&reply);
    return n;
}

static int has(const uint64_t *set, size_t n, uint64_t v)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == v) return 1;
    return 0;
}

#define MAX_STREAMS 4096
typedef struct {
    int kind;
    size_t n_before;
    uint64_t *before;
} vn_watch;

/* Before a call (vn_call runs these): 0 when nothing is watched. */
void *vn_stream_state_before(const char *api, int has_stream, uint64_t stream)
{
    if (!count || asking) return NULL;
    int kind = kind_of(api);
    if (!kind) return NULL;
    vn_watch *w = calloc(1, sizeof(*w));
    w->kind = kind;
    if (kind == 2 && has_stream && stream) report(stream, DESTROY_PRE);
    if (kind == 3) {
        w->before = malloc(MAX_STREAMS * sizeof(uint64_t));
        w->n_before = streams(w->before, MAX_STREAMS);
    }
    return w;
}

void vn_stream_state_after(void *watch, int code, const mp_obj *result)
{
    vn_watch *w = watch;
    if (!w) return;
    if (w->kind == 1 && !code) report(mp_u64v(mp_get(result, "stream")), CREATE_POST);
    if (w->kind == 3) {
        uint64_t *after = malloc(MAX_STREAMS * sizeof(uint64_t));
        size_t n_after = streams(after, MAX_STREAMS);
        for (size_t i = 0; i < w->n_before; i++)
            if (!has(after, n_after, w->before[i])) report(w->before[i], DESTROY_PRE);
        for (size_t i = 0; i < n_after; i++)
            if (!has(w->before, w->n_before, after[i])) report(after[i], CREATE_POST);
        free(after);
    }
    free(w->before);
    free(w);
}
