/* aclrtArgsHandle: a kernel's argument block built on the host (aclrtKernelArgsInit .. Finalize), as
 * proto/kernelargs.py builds it for the Python client: every parameter at the next 8-byte boundary, copied at
 * Append; a placeholder is an 8-byte slot whose data the program writes into the buffer
 * aclrtKernelArgsGetPlaceHolderBuffer returns (no parameter may follow a placeholder buffer, nothing may be added
 * after Finalize). aclrtLaunchKernelWithConfig carries the parameter bytes and each placeholder's slot offset and
 * data (read at the launch), managed pointers turned into the daemon's. */
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "core.h"

#define ALIGN 8
#define MAX_ARGS_SIZE (64 << 10)
#define MAX_PARAMS 128
#define MAGIC_ARGS 0x61726773u
#define MAGIC_PARAM 0x7061726du

typedef struct karg karg;
typedef struct {
    uint32_t magic;
    karg *owner;
    size_t offset, size;
    int placeholder;
    char *buffer;
    size_t buffer_size;
} kparam;

struct karg {
    uint32_t magic;
    void *func;
    char data[MAX_ARGS_SIZE];
    size_t len, used;
    kparam *params[MAX_PARAMS];
    int n;
    int finalized, got_buffer;
};

/* live objects, looked up before they are read */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void **live;
static size_t n_live, cap_live;

static void *keep(void *obj)
{
    pthread_mutex_lock(&lock);
    if (n_live == cap_live) live = realloc(live, (cap_live = cap_live ? cap_live * 2 : 64) * sizeof(void *));
    live[n_live++] = obj;
    pthread_mutex_unlock(&lock);
    return obj;
}

static void *find(const void *p, uint32_t magic)
{
    void *found = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_live && !found; i++)
        if (live[i] == p && *(uint32_t *)p == magic) found = live[i];
    pthread_mutex_unlock(&lock);
    return found;
}

static int get_args(const char *api, aclrtArgsHandle handle, karg **out)
{
    if (!handle) return vn_fail(100000, api, "argsHandle is NULL");
    *out = find(handle, MAGIC_ARGS);
    return *out ? 0 : vn_fail(100000, api, "argsHandle (%p) is not an KernelArgs of this program", handle);
}

static int get_param(const char *api, karg *a, aclrtParamHandle handle, kparam **out)
{
    if (!handle) return vn_fail(100000, api, "paramHandle is NULL");
    *out = find(handle, MAGIC_PARAM);
    if (!*out) return vn_fail(100000, api, "paramHandle (%p) is not an Param of this program", handle);
    return (*out)->owner == a ? 0 : vn_fail(107000, api, "paramHandle is not a parameter of this argsHandle");
}

static size_t align(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

static int may_add(const char *api, karg *a)
{
    if (a->finalized) return vn_fail(207000, api, "nothing may be appended after aclrtKernelArgsFinalize");
    if (a->got_buffer)
        return vn_fail(207000, api, "no parameter may be appended after aclrtKernelArgsGetPlaceHolderBuffer: append "
                                    "every parameter first");
    if (a->n >= MAX_PARAMS) return vn_fail(107000, api, "a kernel takes at most %d parameters", MAX_PARAMS);
    return 0;
}

static int room(const char *api, size_t end)
{
    return end > MAX_ARGS_SIZE
               ? vn_fail(107000, api, "the argument block would hold %zu bytes, over %d", end, MAX_ARGS_SIZE)
               : 0;
}

VN_EXPORT aclError aclrtKernelArgsInit(aclrtFuncHandle funcHandle, aclrtArgsHandle *argsHandle)
{
    const char *api = "aclrtKernelArgsInit";
    vn_enter(api);
    if (!funcHandle) return vn_fail(100000, api, "funcHandle is NULL");
    if (!argsHandle) return vn_null_out(api, "argsHandle");
    karg *a = calloc(1, sizeof(*a));
    a->magic = MAGIC_ARGS, a->func = funcHandle;
    *argsHandle = keep(a);
    return 0;
}

static kparam *add_param(karg *a, size_t offset, size_t size, int placeholder)
{
    kparam *p = calloc(1, sizeof(*p));
    p->magic = MAGIC_PARAM, p->owner = a, p->offset = offset, p->size = size, p->placeholder = placeholder;
    a->params[a->n++] = p;
    return keep(p);
}

VN_EXPORT aclError aclrtKernelArgsAppend(aclrtArgsHandle argsHandle, void *param, size_t paramSize,
                                         aclrtParamHandle *paramHandle)
{
    const char *api = "aclrtKernelArgsAppend";
    vn_enter(api);
    karg *a;
    int code = get_args(api, argsHandle, &a);
    if (code) return code;
    if (!param) return vn_fail(100000, api, "param is NULL");
    if (!paramSize) return vn_fail(100000, api, "paramSize must be greater than 0");
    if ((code = may_add(api, a))) return code;
    size_t offset = align(a->len);
    if ((code = room(api, offset + paramSize))) return code;
    if (!vn_readable(param, paramSize)) return vn_fail(100000, api, "param does not hold paramSize bytes");
    if (!paramHandle) return vn_null_out(api, "paramHandle");
    memset(a->data + a->len, 0, offset - a->len);
    memcpy(a->data + offset, param, paramSize);
    a->len = a->used = offset + paramSize;
    *paramHandle = add_param(a, offset, paramSize, 0);
    return 0;
}

VN_EXPORT aclError aclrtKernelArgsAppendPlaceHolder(aclrtArgsHandle argsHandle, aclrtParamHandle *paramHandle)
{
    const char *api = "aclrtKernelArgsAppendPlaceHolder";
    vn_enter(api);
    karg *a;
    int code = get_args(api, argsHandle, &a);
    if (code || (code = may_add(api, a))) return code;
    size_t offset = align(a->len);
    if ((code = room(api, offset + ALIGN))) return code;
    if (!paramHandle) return vn_null_out(api, "paramHandle");
    memset(a->data + a->len, 0, offset + ALIGN - a->len);
    a->len = a->used = offset + ALIGN;
    *paramHandle = add_param(a, offset, ALIGN, 1);
    return 0;
}

VN_EXPORT aclError aclrtKernelArgsGetPlaceHolderBuffer(aclrtArgsHandle argsHandle, aclrtParamHandle paramHandle,
                                                       size_t dataSize, void **bufferAddr)
{
    const char *api = "aclrtKernelArgsGetPlaceHolderBuffer";
    vn_enter(api);
    karg *a;
    kparam *p;
    int code = get_args(api, argsHandle, &a);
    if (code || (code = get_param(api, a, paramHandle, &p))) return code;
    if (!bufferAddr) return vn_null_out(api, "bufferAddr");
    if (!dataSize) return vn_fail(100000, api, "dataSize must be greater than 0");
    if (!p->placeholder)
        return vn_fail(107000, api, "paramHandle is a common parameter, not a placeholder: it has no buffer");
    if (a->finalized) return vn_fail(207000, api, "no placeholder buffer after aclrtKernelArgsFinalize");
    if ((code = room(api, align(a->used) + dataSize))) return code;
    a->used = align(a->used) + dataSize;
    a->got_buffer = 1;
    free(p->buffer);
    p->buffer = calloc(1, dataSize), p->buffer_size = dataSize;
    *bufferAddr = p->buffer;
    return 0;
}

VN_EXPORT aclError aclrtKernelArgsParaUpdate(aclrtArgsHandle argsHandle, aclrtParamHandle paramHandle, void *param,
                                             size_t paramSize)
{
    const char *api = "aclrtKernelArgsParaUpdate";
    vn_enter(api);
    karg *a;
    kparam *p;
    int code = get_args(api, argsHandle, &a);
    if (code || (code = get_param(api, a, paramHandle, &p))) return code;
    if (!param) return vn_fail(100000, api, "param is NULL");
    if (p->placeholder) return vn_fail(107000, api, "paramHandle is a placeholder: update its buffer instead");
    if (paramSize != p->size)
        return vn_fail(107000, api, "paramSize %zu must equal the %zu bytes the parameter was appended with",
                       paramSize, p->size);
    if (!vn_readable(param, paramSize)) return vn_fail(100000, api, "param does not hold paramSize bytes");
    memcpy(a->data + p->offset, param, paramSize);
    return 0;
}

VN_EXPORT aclError aclrtKernelArgsFinalize(aclrtArgsHandle argsHandle)
{
    const char *api = "aclrtKernelArgsFinalize";
    vn_enter(api);
    karg *a;
    int code = get_args(api, argsHandle, &a);
    if (!code) a->finalized = 1;
    return code;
}

int vn_put_launch_cfg(mp_buf *b, const aclrtLaunchKernelCfg *cfg); /* modeledit.c */

VN_EXPORT aclError aclrtLaunchKernelWithConfig(aclrtFuncHandle funcHandle, uint32_t numBlocks, aclrtStream stream,
                                               aclrtLaunchKernelCfg *cfg, aclrtArgsHandle argsHandle, void *reserve)
{
    const char *api = "aclrtLaunchKernelWithConfig";
    vn_enter(api);
    karg *a = NULL;
    if (argsHandle) {
        int code = get_args(api, argsHandle, &a);
        if (code) return code;
    }
    vn_req r;
    vn_req_begin(&r, api, 6, 1);
    mp_key(&r.b, "funcHandle"), mp_uint(&r.b, (uintptr_t)funcHandle);
    mp_key(&r.b, "numBlocks"), mp_uint(&r.b, numBlocks);
    mp_key(&r.b, "stream"), mp_uint(&r.b, (uintptr_t)stream);
    r.has_stream = 1, r.stream = (uintptr_t)stream;
    mp_key(&r.b, "cfg");
    if (vn_put_launch_cfg(&r.b, cfg)) {
        mp_free(&r.b);
        return vn_fail(107000, api, "cfg->attrs does not hold numAttrs attributes");
    }
    mp_key(&r.b, "argsHandle");
    if (!a) mp_nil(&r.b);
    else {
        int holders = 0;
        for (int i = 0; i < a->n; i++) holders += a->params[i]->placeholder;
        void *managed = vn_managed_block(a->data, a->len);
        mp_map(&r.b, 2);
        mp_key(&r.b, "data"), mp_bin(&r.b, managed ? managed : a->data, a->len);
        free(managed);
        mp_key(&r.b, "placeholders"), mp_array(&r.b, (uint32_t)holders);
        for (int i = 0; i < a->n; i++) {
            kparam *p = a->params[i];
            if (!p->placeholder) continue;
            mp_map(&r.b, 2);
            mp_key(&r.b, "offset"), mp_uint(&r.b, p->offset);
            mp_key(&r.b, "data"), mp_bin(&r.b, p->buffer, p->buffer ? p->buffer_size : 0);
        }
    }
    mp_key(&r.b, "reserve"), mp_uint(&r.b, (uintptr_t)reserve);
    return vn_call(&r, NULL);
}
