/* Exception-information callbacks (client/exceptions.py says what the runtime does): called in the thread whose
 * call reports a failed task, just before that call returns the error, with an aclrtExceptionInfo that vnpu lays
 * out as five uint32_t -- task id, stream id, the issuing thread's pthread id (low 32 bits), device id, error
 * code -- which the five getters read back. One callback of aclrtSetExceptionInfoCallback, others registered by
 * their address. */
#include <string.h>

#include "core.h"

typedef void (*info_callback)(const uint32_t *info);
#define MAX 64
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static info_callback set_one, registered[MAX];
static int count;

VN_EXPORT int aclrtSetExceptionInfoCallback(info_callback callback)
{
    vn_enter("aclrtSetExceptionInfoCallback");
    pthread_mutex_lock(&lock);
    set_one = callback;
    pthread_mutex_unlock(&lock);
    return 0;
}

static int change(const char *api, info_callback callback, int add)
{
    vn_enter(api);
    if (!callback) return vn_fail(107000, api, "callback is NULL");
    pthread_mutex_lock(&lock);
    int found = -1;
    for (int i = 0; i < count; i++)
        if (registered[i] == callback) found = i;
    if (add && found < 0 && count < MAX) registered[count++] = callback;
    if (!add && found >= 0) registered[found] = registered[--count];
    pthread_mutex_unlock(&lock);
    return 0;
}

VN_EXPORT int aclrtExceptionInfoCallbackRegister(info_callback callback)
{
    return change("aclrtExceptionInfoCallbackRegister", callback, 1);
}
VN_EXPORT int aclrtExceptionInfoCallbackUnregister(info_callback callback)
{
    return change("aclrtExceptionInfoCallbackUnregister", callback, 0);
}

/* A failed task's information (the error's "task" map): each callback once. */
void vn_report_task(const mp_obj *task)
{
    if (!task || task->type != MP_MAP) return;
    static const char *const fields[] = {"taskId", "streamId", "threadId", "deviceId", "errorCode"};
    uint32_t info[5];
    for (int i = 0; i < 5; i++) info[i] = (uint32_t)mp_u64v(mp_get(task, fields[i]));
    pthread_mutex_lock(&lock);
    info_callback all[MAX + 1];
    int n = 0;
    if (set_one) all[n++] = set_one;
    for (int i = 0; i < count; i++) all[n++] = registered[i];
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++) all[i](info);
}

static uint32_t field(const uint32_t *info, int i) { return info ? info[i] : 0xFFFFFFFFu; }
VN_EXPORT uint32_t aclrtGetTaskIdFromExceptionInfo(const uint32_t *info) { return field(info, 0); }
VN_EXPORT uint32_t aclrtGetStreamIdFromExceptionInfo(const uint32_t *info) { return field(info, 1); }
VN_EXPORT uint32_t aclrtGetThreadIdFromExceptionInfo(const uint32_t *info) { return field(info, 2); }
VN_EXPORT uint32_t aclrtGetDeviceIdFromExceptionInfo(const uint32_t *info) { return field(info, 3); }
VN_EXPORT uint32_t aclrtGetErrorCodeFromExceptionInfo(const uint32_t *info) { return field(info, 4); }
