/* Callbacks, host functions and model destroy callbacks: C function pointers the daemon hands back by address.
 *
 * aclrtProcessReport runs, on the calling thread, the callbacks due for it (vnpuTakeReports); host functions run
 * on a native thread of the library, started by the first aclrtLaunchHostFunc and ended when no stream of the
 * process runs host functions any more (vnpuTakeHostFuncs answers 507xxx THREAD_SUBSCRIBE); a blocking
 * callback's return is reported (vnpuCallbackDone) so its stream goes on. aclmdlRIDestroy calls the model's
 * destroy callbacks, in the daemon's order, on the destroying thread. No interpreter and no lock is held while a
 * function of the program runs, so it may call the runtime itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"

#define REPORT_TIMEOUT 507012
#define THREAD_SUBSCRIBE 107012
#define POLL_MS 1000

typedef void (*vn_callback)(void *);

static int run_due(const char *take, int32_t timeout)
{
    vn_req r;
    vn_req_begin(&r, take, 1, 0);
    mp_key(&r.b, "timeout"), mp_int(&r.b, timeout);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    const mp_obj *reports = vn_out(&reply, "reports");
    for (uint32_t i = 0; reports && reports->type == MP_ARRAY && i < reports->n; i++) {
        const mp_obj *due = &reports->v.items[i];
        vn_callback fn = (vn_callback)(uintptr_t)mp_u64v(mp_get(due, "fn"));
        void *data = (void *)(uintptr_t)mp_u64v(mp_get(due, "userData"));
        if (fn) fn(data);
        const mp_obj *blocking = mp_get(due, "blocking");
        if (blocking && blocking->type == MP_BOOL && blocking->v.b) {
            vn_req done;
            vn_req_begin(&done, "vnpuCallbackDone", 1, 0);
            mp_key(&done.b, "callbackId"), mp_uint(&done.b, mp_u64v(mp_get(due, "callbackId")));
            vn_call(&done, NULL);
        }
    }
    vn_reply_free(&reply);
    return 0;
}

VN_EXPORT int aclrtProcessReport(int32_t timeout)
{
    vn_enter("aclrtProcessReport");
    return run_due("vnpuTakeReports", timeout);
}

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static int host_running;
static uint64_t host_launches;

static void *host_functions(void *unused)
{
    (void)unused;
    vn_enter("vnpuTakeHostFuncs");
    for (;;) {
        pthread_mutex_lock(&host_lock);
        uint64_t launches = host_launches;
        pthread_mutex_unlock(&host_lock);
        int code = run_due("vnpuTakeHostFuncs", POLL_MS);
        vn_take_message(); /* the thread keeps no message: it has no caller to read it */
        if (code == 0 || code == REPORT_TIMEOUT) continue;
        pthread_mutex_lock(&host_lock);
        if (code != THREAD_SUBSCRIBE || launches == host_launches) { /* nothing to serve, or the session is gone */
            host_running = 0;
            pthread_mutex_unlock(&host_lock);
            return NULL;
        }
        pthread_mutex_unlock(&host_lock);
    }
}

VN_EXPORT int aclrtLaunchHostFunc(void *stream, vn_callback fn, void *args)
{
    const char *api = "aclrtLaunchHostFunc";
    vn_enter(api);
    vn_req r;
    vn_req_begin(&r, api, 3, 0);
    mp_key(&r.b, "stream"), mp_uint(&r.b, (uintptr_t)stream);
    mp_key(&r.b, "fn"), mp_uint(&r.b, (uintptr_t)fn);
    mp_key(&r.b, "args"), mp_uint(&r.b, (uintptr_t)args);
    int code = vn_call(&r, NULL);
    if (code) return code;
    pthread_mutex_lock(&host_lock);
    host_launches++;
    if (!host_running) {
        pthread_t thread;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        host_running = pthread_create(&thread, &attr, host_functions, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
    pthread_mutex_unlock(&host_lock);
    return 0;
}

VN_EXPORT int aclmdlRIDestroy(void *modelRI)
{
    const char *api = "aclmdlRIDestroy";
    vn_enter(api);
    vn_req r;
    vn_req_begin(&r, api, 1, 0);
    mp_key(&r.b, "modelRI"), mp_uint(&r.b, (uintptr_t)modelRI);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    const mp_obj *due = vn_out(&reply, "callbacks");
    for (uint32_t i = 0; due && due->type == MP_ARRAY && i < due->n; i++) {
        vn_callback fn = (vn_callback)(uintptr_t)mp_u64v(mp_get(&due->v.items[i], "func"));
        if (fn) fn((void *)(uintptr_t)mp_u64v(mp_get(&due->v.items[i], "userData")));
    }
    vn_reply_free(&reply);
    return 0;
}

/* ---- aclmdlRI introspection: arrays with their counts ---------------------------------------------------------- */
static int handles(const char *api, const char *owner_key, void *owner, const char *array_key, int has_array,
                   const uint32_t *count_in, vn_reply *reply)
{
    vn_req r;
    vn_req_begin(&r, api, 3, 0);
    mp_key(&r.b, owner_key), mp_uint(&r.b, (uintptr_t)owner);
    mp_key(&r.b, array_key), mp_bool(&r.b, has_array);
    mp_key(&r.b, array_key[0] == 's' ? "numStreams" : "numTasks");
    if (count_in) mp_uint(&r.b, *count_in);
    else mp_nil(&r.b);
    return vn_call(&r, reply);
}

VN_EXPORT int aclmdlRIGetStreams(void *modelRI, void **streams, uint32_t *numStreams)
{
    const char *api = "aclmdlRIGetStreams";
    vn_enter(api);
    vn_reply reply;
    int code = handles(api, "modelRI", modelRI, "streams", streams != NULL, numStreams, &reply);
    if (code) return code;
    const mp_obj *list = vn_out(&reply, "streams");
    for (uint32_t i = 0; streams && list && list->type == MP_ARRAY && i < list->n; i++)
        streams[i] = (void *)(uintptr_t)mp_u64v(&list->v.items[i]);
    if (numStreams) *numStreams = (uint32_t)mp_u64v(vn_out(&reply, "numStreams"));
    vn_reply_free(&reply);
    return 0;
}

VN_EXPORT int aclmdlRIGetTasksByStream(void *stream, void **tasks, uint32_t *numTasks)
{
    const char *api = "aclmdlRIGetTasksByStream";
    vn_enter(api);
    vn_reply reply;
    int code = handles(api, "stream", stream, "tasks", 0, numTasks, &reply); /* every check, and the count */
    if (code) return code;
    uint32_t count = (uint32_t)mp_u64v(vn_out(&reply, "numTasks"));
    vn_reply_free(&reply);
    if (!tasks) {
        *numTasks = count;
        return 0;
    }
    uint32_t size = *numTasks;
    if (count) {
        if ((code = handles(api, "stream", stream, "tasks", 1, &count, &reply))) return code;
        const mp_obj *list = vn_out(&reply, "tasks");
        for (uint32_t i = 0; i < size; i++)
            tasks[i] = list && list->type == MP_ARRAY && i < list->n ? (void *)(uintptr_t)mp_u64v(&list->v.items[i]) : NULL;
        vn_reply_free(&reply);
    } else
        for (uint32_t i = 0; i < size; i++) tasks[i] = NULL;
    *numTasks = size < count ? size : count;
    if (size < count)
        return vn_fail(107039, api, "stream %p has %u task(s) but the array holds %u: it holds the first %u", stream,
                       count, size, size);
    return 0;
}
