/* The table of live host-object handles, shared by every library (libascendcl exports it; libnnopbase's aclnn
 * objects and libascendcl's data buffers are kept in it): every handle a program passes is looked up here before it
 * is read, so a freed handle or a pointer vnpu did not give out is refused with a message that says which (a
 * destroyed one: by what), never dereferenced. Also here: aclDataBuffer, which CANN's runtime library exports. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostobj.h"

static const char *const OBJ_NAMES[] = {"", "aclTensor", "aclScalar", "aclIntArray", "aclOpExecutor", "aclDataBuffer",
                                        "aclTensorList", "aclScalarList", "aclBoolArray", "aclFloatArray"};

typedef struct {
    obj_head h;
    void *data;
    size_t size;
} vn_data_buffer;

/* ---- the table of live handles (and of the recently gone, for a precise message) ------------------------------ */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *live;
static size_t live_cap, live_n;
#define GONE 4096
static struct {
    uintptr_t addr;
    char why[96];
} gone[GONE];
static size_t gone_next;

static size_t slot_of(uintptr_t a, size_t cap) { return (size_t)((a >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1); }

static void live_insert(uintptr_t a)
{
    if ((live_n + 1) * 2 > live_cap) {
        size_t cap = live_cap ? live_cap * 2 : 1024;
        uintptr_t *table = calloc(cap, sizeof(uintptr_t));
        for (size_t i = 0; i < live_cap; i++)
            if (live[i] > 1) {
                size_t j = slot_of(live[i], cap);
                while (table[j]) j = (j + 1) & (cap - 1);
                table[j] = live[i];
            }
        free(live);
        live = table, live_cap = cap;
    }
    size_t j = slot_of(a, live_cap);
    while (live[j] > 1) j = (j + 1) & (live_cap - 1);
    if (!live[j]) live_n++;
    live[j] = a;
}

static int live_find(uintptr_t a, size_t *at)
{
    if (!live_cap) return 0;
    size_t j = slot_of(a, live_cap);
    for (size_t k = 0; k < live_cap && live[j]; k++, j = (j + 1) & (live_cap - 1))
        if (live[j] == a) return *at = j, 1;
    return 0;
}

static void *put(void *obj)
{
    pthread_mutex_lock(&handles_lock);
    live_insert((uintptr_t)obj); /* a reused address is live again: `get` looks at the gone only for the dead */
    pthread_mutex_unlock(&handles_lock);
    return obj;
}

/* The object behind `handle` if it is a live one of `type` (NULL for NULL); else -1 with the message kept. */
static int get(const void *handle, int type, const char *arg, const char *api, int code, void **out)
{
    *out = NULL;
    if (!handle) return 0;
    uintptr_t a = (uintptr_t)handle;
    size_t at;
    pthread_mutex_lock(&handles_lock);
    int found = live_find(a, &at);
    int actual = found ? ((obj_head *)handle)->type : 0;
    char why[96] = "";
    for (size_t k = 1; !found && k <= GONE; k++) { /* the newest word on it */
        size_t i = (gone_next + GONE - k) % GONE;
        if (gone[i].addr == a) {
            snprintf(why, sizeof(why), "%s", gone[i].why);
            break;
        }
    }
    pthread_mutex_unlock(&handles_lock);
    if (!found) {
        if (!why[0]) snprintf(why, sizeof(why), "is not an %s this program created", OBJ_NAMES[type]);
        vn_fail(code, api, "%s (%p) %s", arg, handle, why);
        return -1;
    }
    if (actual != type) {
        vn_fail(code, api, "%s (%p) is an %s, not an %s", arg, handle, OBJ_NAMES[actual], OBJ_NAMES[type]);
        return -1;
    }
    *out = (void *)handle;
    return 0;
}

static void drop(void *obj, const char *why)
{
    size_t at;
    pthread_mutex_lock(&handles_lock);
    if (live_find((uintptr_t)obj, &at)) live[at] = 1; /* a tombstone */
    gone[gone_next].addr = (uintptr_t)obj;
    snprintf(gone[gone_next].why, sizeof(gone[0].why), "%s", why);
    gone_next = (gone_next + 1) % GONE;
    pthread_mutex_unlock(&handles_lock);
}

void *vn_obj_put(void *obj) { return put(obj); }
int vn_obj_get(const void *handle, int type, const char *arg, const char *api, int code, void **out)
{
    return get(handle, type, arg, api, code, out);
}
void vn_obj_drop(void *obj, const char *why) { drop(obj, why); }

int vn_obj_live(const void *handle, int type)
{
    size_t at;
    pthread_mutex_lock(&handles_lock);
    int found = handle && live_find((uintptr_t)handle, &at) && ((const obj_head *)handle)->type == type;
    pthread_mutex_unlock(&handles_lock);
    return found;
}

/* ---- aclDataBuffer -------------------------------------------------------------------------------------------- */
VN_EXPORT void *aclCreateDataBuffer(void *data, size_t size)
{
    vn_enter("aclCreateDataBuffer");
    vn_data_buffer *b = calloc(1, sizeof(*b));
    b->h.type = OBJ_DATA_BUFFER, b->data = data, b->size = size;
    return put(b);
}

static vn_data_buffer *data_buffer(const void *handle, const char *api, int *code)
{
    void *b;
    *code = get(handle, OBJ_DATA_BUFFER, "dataBuffer", api, 100000, &b) ? 100000 : 0;
    return b;
}

VN_EXPORT int aclDestroyDataBuffer(const void *dataBuffer)
{
    const char *api = "aclDestroyDataBuffer";
    vn_enter(api);
    int code;
    vn_data_buffer *b = data_buffer(dataBuffer, api, &code);
    if (code) return code;
    if (!b) return vn_fail(100000, api, "dataBuffer is NULL");
    drop(b, "was destroyed by aclDestroyDataBuffer");
    free(b);
    return 0;
}

VN_EXPORT int aclUpdateDataBuffer(void *dataBuffer, void *data, size_t size)
{
    const char *api = "aclUpdateDataBuffer";
    vn_enter(api);
    int code;
    vn_data_buffer *b = data_buffer(dataBuffer, api, &code);
    if (code) return code;
    if (!b) return vn_fail(100000, api, "dataBuffer is NULL");
    b->data = data, b->size = size;
    return 0;
}

VN_EXPORT void *aclGetDataBufferAddr(const void *dataBuffer)
{
    vn_enter("aclGetDataBufferAddr");
    int code;
    vn_data_buffer *b = data_buffer(dataBuffer, "aclGetDataBufferAddr", &code);
    return b ? b->data : NULL;
}

VN_EXPORT size_t aclGetDataBufferSizeV2(const void *dataBuffer)
{
    vn_enter("aclGetDataBufferSizeV2");
    int code;
    vn_data_buffer *b = data_buffer(dataBuffer, "aclGetDataBufferSizeV2", &code);
    return b ? b->size : 0;
}

VN_EXPORT uint32_t aclGetDataBufferSize(const void *dataBuffer)
{
    vn_enter("aclGetDataBufferSize");
    int code;
    vn_data_buffer *b = data_buffer(dataBuffer, "aclGetDataBufferSize", &code);
    return b ? (uint32_t)b->size : 0;
}

