/* The custom allocator registry (proto/allocator.py says what it keeps): descriptors are host objects of the
 * program, their C function pointers and allocator object stored as given; a registration on a stream keeps a copy
 * of the descriptor (destroying the descriptor leaves it), and aclrtAllocatorGetByStream hands it back. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_rt_allocator.h"
#include "core.h"

#define MAGIC 0x616c6c63u
typedef struct {
    uint32_t magic;
    void *obj, *alloc, *free, *advise, *get_addr;
} desc;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static desc **live;
static size_t n_live;
#define GONE 256
static const void *gone[GONE]; /* destroyed descriptors, for the message */
static size_t gone_next;
static struct reg {
    uintptr_t stream;
    desc *original;
    desc copy;
} *regs;
static size_t n_regs;

VN_EXPORT aclrtAllocatorDesc aclrtAllocatorCreateDesc(void)
{
    vn_enter("aclrtAllocatorCreateDesc");
    desc *d = calloc(1, sizeof(*d));
    d->magic = MAGIC;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < GONE; i++) /* a reused address is live again */
        if (gone[i] == d) gone[i] = NULL;
    live = realloc(live, (n_live + 1) * sizeof(desc *));
    live[n_live++] = d;
    pthread_mutex_unlock(&lock);
    return d;
}

static desc *get(const char *api, const void *handle, int *code)
{
    *code = 0;
    if (!handle) return *code = vn_fail(100000, api, "allocatorDesc is NULL"), NULL;
    desc *found = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_live; i++)
        if (live[i] == handle) found = live[i];
    int destroyed = 0;
    for (size_t i = 0; !found && i < GONE; i++) destroyed |= gone[i] == handle;
    pthread_mutex_unlock(&lock);
    if (!found)
        *code = vn_fail(100000, api, "allocatorDesc (%p) %s", handle,
                        destroyed ? "was destroyed by aclrtAllocatorDestroyDesc"
                                  : "is not an aclrtAllocatorDesc this program created");
    return found;
}

VN_EXPORT aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)
{
    const char *api = "aclrtAllocatorDestroyDesc";
    vn_enter(api);
    int code;
    desc *d = get(api, allocatorDesc, &code);
    if (!d) return code;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_live; i++)
        if (live[i] == d) live[i] = live[--n_live];
    gone[gone_next++ % GONE] = d;
    pthread_mutex_unlock(&lock);
    d->magic = 0;
    free(d);
    return 0;
}

static aclError set(const char *api, void *handle, size_t offset, void *value, const char *arg)
{
    vn_enter(api);
    int code;
    desc *d = get(api, handle, &code);
    if (!d) return code;
    if (!value) return vn_fail(100000, api, "%s is NULL", arg);
    pthread_mutex_lock(&lock);
    memcpy((char *)d + offset, &value, sizeof(void *));
    pthread_mutex_unlock(&lock);
    return 0;
}

#define SETTER(name, field, arg, type)                                                                             \
    VN_EXPORT aclError name(aclrtAllocatorDesc allocatorDesc, type value)                                          \
    {                                                                                                              \
        return set(#name, allocatorDesc, offsetof(desc, field), (void *)value, arg);                               \
    }
SETTER(aclrtAllocatorSetObjToDesc, obj, "allocator", aclrtAllocator)
SETTER(aclrtAllocatorSetAllocFuncToDesc, alloc, "func", aclrtAllocatorAllocFunc)
SETTER(aclrtAllocatorSetFreeFuncToDesc, free, "func", aclrtAllocatorFreeFunc)
SETTER(aclrtAllocatorSetAllocAdviseFuncToDesc, advise, "func", aclrtAllocatorAllocAdviseFunc)
SETTER(aclrtAllocatorSetGetAddrFromBlockFuncToDesc, get_addr, "func", aclrtAllocatorGetAddrFromBlockFunc)

VN_EXPORT aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc)
{
    const char *api = "aclrtAllocatorRegister";
    vn_enter(api);
    if (!stream) return vn_fail(100000, api, "stream is NULL: the default stream takes no allocator");
    int code;
    desc *d = get(api, allocatorDesc, &code);
    if (!d) return code;
    char missing[128] = "";
    const char *names[] = {"allocator", "allocFunc", "freeFunc", "getAddrFromBlockFunc"};
    void *values[] = {d->obj, d->alloc, d->free, d->get_addr};
    for (int i = 0; i < 4; i++)
        if (!values[i]) snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
                                 missing[0] ? ", " : "", names[i]);
    if (missing[0]) return vn_fail(100000, api, "the descriptor has no %s set", missing);
    pthread_mutex_lock(&lock);
    size_t i = 0;
    while (i < n_regs && regs[i].stream != (uintptr_t)stream) i++;
    if (i == n_regs) regs = realloc(regs, ++n_regs * sizeof(*regs));
    regs[i].stream = (uintptr_t)stream, regs[i].original = d, regs[i].copy = *d;
    pthread_mutex_unlock(&lock);
    return 0;
}

VN_EXPORT aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc *allocatorDesc,
                                             aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc,
                                             aclrtAllocatorFreeFunc *freeFunc,
                                             aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
                                             aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc)
{
    const char *api = "aclrtAllocatorGetByStream";
    vn_enter(api);
    if (!allocatorDesc) return vn_null_out(api, "allocatorDesc");
    if (!stream) return vn_fail(100000, api, "stream is NULL");
    pthread_mutex_lock(&lock);
    struct reg found = {0};
    for (size_t i = 0; i < n_regs; i++)
        if (regs[i].stream == (uintptr_t)stream) found = regs[i];
    pthread_mutex_unlock(&lock);
    if (!found.stream) return vn_fail(100000, api, "no allocator is registered on stream %#lx", (unsigned long)(uintptr_t)stream);
    *allocatorDesc = found.original;
    if (allocator) *allocator = found.copy.obj;
    if (allocFunc) *allocFunc = (aclrtAllocatorAllocFunc)found.copy.alloc;
    if (freeFunc) *freeFunc = (aclrtAllocatorFreeFunc)found.copy.free;
    if (allocAdviseFunc) *allocAdviseFunc = (aclrtAllocatorAllocAdviseFunc)found.copy.advise;
    if (getAddrFromBlockFunc) *getAddrFromBlockFunc = (aclrtAllocatorGetAddrFromBlockFunc)found.copy.get_addr;
    return 0;
}

VN_EXPORT aclError aclrtAllocatorUnregister(aclrtStream stream)
{
    const char *api = "aclrtAllocatorUnregister";
    vn_enter(api);
    if (!stream) return vn_fail(100000, api, "stream is NULL");
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_regs; i++)
        if (regs[i].stream == (uintptr_t)stream) regs[i] = regs[--n_regs];
    pthread_mutex_unlock(&lock);
    return 0;
}
