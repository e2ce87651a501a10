/* Pinned host memory (aclrtMallocHost): real memory of the program that the device side sees too.
 *
 * On the daemon's machine a buffer is the daemon's POSIX shared-memory segment (vnpuHostInfo names it) mapped
 * here: zero-copy, a captured host-to-device copy reads it when the model runs. Otherwise (another machine, or
 * VNPU_HOST_MEMORY=remote) it is local memory kept in step with the daemon's copy, as the Python toolkit does:
 * before a call that may read host memory on the device side the bytes the program changed are sent (the
 * changed span), after a call that completes device work the bytes the device changed are written back (only
 * those, so another thread's writes elsewhere are not undone). A pointer inside a buffer translates to the
 * daemon's pointer at the same offset (vn_to_daemon). Copies from and to any other host memory (pageable) move
 * bytes through the wire, synchronously, as the runtime makes them. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session.h"

typedef struct {
    uintptr_t local;
    uint64_t daemon;
    size_t size;
    char *shadow; /* remote: the bytes as last exchanged with the daemon */
    int managed;  /* aclrtMemAllocManaged memory: its program address is also the device's (kernel arguments) */
} pinned;

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t exchange = PTHREAD_MUTEX_INITIALIZER; /* one exchange at a time; held by a free */
static pinned *table;
static size_t table_n, table_cap, remote_n, managed_n;

static pinned *find(uintptr_t a, size_t *offset)
{
    size_t lo = 0, hi = table_n;
    while (lo < hi) { /* the last entry starting at or before a */
        size_t mid = (lo + hi) / 2;
        if (table[mid].local <= a) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return NULL;
    pinned *p = &table[lo - 1];
    if (a - p->local >= p->size) return NULL;
    *offset = a - p->local;
    return p;
}

int vn_readable(const void *p, size_t n)
{
    if (!n) return 1;
    uintptr_t page = 4096, first = (uintptr_t)p & ~(page - 1), end;
    if (__builtin_add_overflow((uintptr_t)p, n, &end)) return 0;
    unsigned char vec[64];
    for (uintptr_t at = first; at < end; at += 64 * page) { /* 64 pages a call */
        size_t span = end - at < 64 * page ? end - at : 64 * page;
        if (mincore((void *)at, span, vec) != 0) return 0;
    }
    return 1;
}

uint64_t vn_to_daemon(const void *ptr)
{
    uintptr_t a = (uintptr_t)ptr;
    if (!table_n || !a) return a;
    pthread_rwlock_rdlock(&table_lock);
    size_t offset;
    pinned *p = find(a, &offset);
    uint64_t out = p ? p->daemon + offset : a;
    pthread_rwlock_unlock(&table_lock);
    return out;
}

void *vn_from_daemon(uint64_t daemon)
{
    if (!table_n || !daemon) return (void *)(uintptr_t)daemon;
    void *out = (void *)(uintptr_t)daemon;
    pthread_rwlock_rdlock(&table_lock);
    for (size_t i = 0; i < table_n; i++)
        if (daemon - table[i].daemon < table[i].size) out = (void *)(table[i].local + (daemon - table[i].daemon));
    pthread_rwlock_unlock(&table_lock);
    return out;
}

static int is_pinned(const void *ptr)
{
    if (!table_n || !ptr) return 0;
    pthread_rwlock_rdlock(&table_lock);
    size_t offset;
    int found = find((uintptr_t)ptr, &offset) != NULL;
    pthread_rwlock_unlock(&table_lock);
    return found;
}

static void add(pinned entry)
{
    pthread_rwlock_wrlock(&table_lock);
    if (table_n == table_cap) table = realloc(table, (table_cap = table_cap ? table_cap * 2 : 16) * sizeof(pinned));
    size_t i = table_n;
    while (i && table[i - 1].local > entry.local) table[i] = table[i - 1], i--;
    table[i] = entry;
    table_n++;
    remote_n += entry.shadow != NULL;
    managed_n += entry.managed;
    pthread_rwlock_unlock(&table_lock);
}

static int host_call(const char *api, uint64_t ptr, uint64_t count, const void *data, size_t len, vn_reply *out)
{
    vn_req r;
    vn_req_begin(&r, api, data || !count ? 2 : 2, 0);
    mp_key(&r.b, "hostPtr"), mp_uint(&r.b, ptr);
    if (data) mp_key(&r.b, "data"), mp_bin(&r.b, data, len);
    else mp_key(&r.b, "count"), mp_uint(&r.b, count);
    return vn_call(&r, out);
}

static int push_one(pinned *p)
{
    const char *local = (const char *)p->local;
    size_t first = 0, last = p->size;
    while (first < p->size && local[first] == p->shadow[first]) first++;
    if (first == p->size) return 0;
    while (last > first && local[last - 1] == p->shadow[last - 1]) last--;
    memcpy(p->shadow + first, local + first, last - first);
    return host_call("vnpuHostWrite", p->daemon + first, 0, local + first, last - first, NULL);
}

int vn_push_pinned(void)
{
    if (!remote_n) return 0;
    int code = 0;
    pthread_mutex_lock(&exchange);
    pthread_rwlock_rdlock(&table_lock);
    for (size_t i = 0; i < table_n && !code; i++)
        if (table[i].shadow) code = push_one(&table[i]);
    pthread_rwlock_unlock(&table_lock);
    pthread_mutex_unlock(&exchange);
    return code;
}

int vn_pull_pinned(void)
{
    if (!remote_n) return 0;
    int code = 0;
    pthread_mutex_lock(&exchange);
    pthread_rwlock_rdlock(&table_lock);
    for (size_t i = 0; i < table_n && !code; i++) {
        pinned *p = &table[i];
        if (!p->shadow) continue;
        if ((code = push_one(p))) break;
        vn_reply reply;
        if ((code = host_call("vnpuHostRead", p->daemon, p->size, NULL, 0, &reply))) break;
        const mp_obj *data = vn_out(&reply, "data");
        if (data && (data->type == MP_BIN || data->type == MP_STR) && data->n == p->size) {
            char *local = (char *)p->local;
            for (size_t k = 0; k < p->size; k++)
                if (data->v.s[k] != p->shadow[k]) local[k] = p->shadow[k] = data->v.s[k];
        }
        vn_reply_free(&reply);
    }
    pthread_rwlock_unlock(&table_lock);
    pthread_mutex_unlock(&exchange);
    return code;
}

/* Map the daemon's host buffer `daemon` of `size` bytes into the program (its shared memory, or a local copy kept
 * in step); the program's address, or 0 with the code in *code. */
static uintptr_t map_buffer(const char *api, uint64_t daemon, size_t size, int managed, int *code)
{
    vn_reply reply;
    pinned entry = {0, daemon, size, NULL, managed};
    *code = 0;
    if (vn_on_this_machine() && size) {
        vn_req info;
        vn_req_begin(&info, "vnpuHostInfo", 1, 0);
        mp_key(&info.b, "hostPtr"), mp_uint(&info.b, daemon);
        if ((*code = vn_call(&info, &reply))) return 0;
        char *name = mp_strdup(vn_out(&reply, "name")), path[512];
        vn_reply_free(&reply);
        snprintf(path, sizeof(path), "/dev/shm/%s", name);
        free(name);
        int fd = open(path, O_RDWR | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size == size) {
            void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED) entry.local = (uintptr_t)m;
        }
        if (fd >= 0) close(fd);
    }
    if (!entry.local) { /* remote: a local copy kept in step */
        void *m = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        entry.shadow = calloc(size ? size : 1, 1);
        if (m == MAP_FAILED || !entry.shadow) return *code = vn_fail(100000, api, "cannot hold %zu bytes here", size), 0;
        entry.local = (uintptr_t)m;
        if (size) {
            if ((*code = host_call("vnpuHostRead", daemon, size, NULL, 0, &reply))) return 0;
            const mp_obj *data = vn_out(&reply, "data");
            if (data && data->n == size) memcpy(m, data->v.s, size), memcpy(entry.shadow, data->v.s, size);
            vn_reply_free(&reply);
        }
    }
    add(entry);
    return entry.local;
}

static int allocate(const char *api, void **out, const char *out_name, size_t size, int managed, uint32_t flag)
{
    if (!out) return vn_fail(100000, api, "%s is NULL: it must point to where the pointer goes", out_name);
    vn_req r;
    vn_req_begin(&r, api, managed ? 2 : 1, 0);
    mp_key(&r.b, "size"), mp_uint(&r.b, size);
    if (managed) mp_key(&r.b, "flag"), mp_uint(&r.b, flag);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    uint64_t daemon = mp_u64v(vn_out(&reply, out_name));
    vn_reply_free(&reply);
    uintptr_t local = map_buffer(api, daemon, size, managed, &code);
    if (code) return code;
    *out = (void *)local;
    return 0;
}

VN_EXPORT int aclrtMallocHost(void **hostPtr, size_t size)
{
    vn_enter("aclrtMallocHost");
    return allocate("aclrtMallocHost", hostPtr, "hostPtr", size, 0, 0);
}

VN_EXPORT int aclrtMemAllocManaged(void **ptr, uint64_t size, uint32_t flag)
{
    vn_enter("aclrtMemAllocManaged");
    return allocate("aclrtMemAllocManaged", ptr, "ptr", size, 1, flag);
}

/* An argument block (a kernel launch's) with each 8-byte slot that points into managed memory mapped here turned
 * into the daemon's pointer: a kernel takes the pointer the program writes through, as on the device (remote
 * buffers are sent first). NULL when nothing needs translating; else a block the caller frees. */
void *vn_managed_block(const void *block, size_t n)
{
    if (!managed_n || !block || n < 8) return NULL;
    vn_push_pinned();
    char *copy = malloc(n);
    memcpy(copy, block, n);
    int changed = 0;
    pthread_rwlock_rdlock(&table_lock);
    for (size_t at = 0; at + 8 <= n; at += 8) {
        uint64_t slot;
        memcpy(&slot, copy + at, 8);
        size_t offset;
        pinned *p = find((uintptr_t)slot, &offset);
        if (p && p->managed) {
            uint64_t daemon = p->daemon + offset;
            memcpy(copy + at, &daemon, 8), changed = 1;
        }
    }
    pthread_rwlock_unlock(&table_lock);
    if (!changed) free(copy), copy = NULL;
    return copy;
}

/* Remove the buffer that starts at `local` from the table (its entry copied to *out); 0 when none starts there. */
static int take_entry(const void *local, pinned *out)
{
    pthread_rwlock_wrlock(&table_lock);
    size_t offset = 1;
    pinned *p = table_n && local ? find((uintptr_t)local, &offset) : NULL;
    int found = p && offset == 0;
    if (found) {
        *out = *p;
        memmove(p, p + 1, (size_t)(table + table_n - p - 1) * sizeof(pinned));
        table_n--;
        remote_n -= out->shadow != NULL;
        managed_n -= out->managed;
    }
    pthread_rwlock_unlock(&table_lock);
    return found;
}

static void unmap(pinned *entry)
{
    munmap((void *)entry->local, entry->size ? entry->size : 1);
    free(entry->shadow);
}

VN_EXPORT int aclrtFree(void *devPtr)
{
    const char *api = "aclrtFree";
    vn_enter(api);
    int ready = vn_ready(api);
    if (ready) return ready;
    pthread_mutex_lock(&exchange);
    pinned entry = {0};
    int managed = take_entry(devPtr, &entry);
    uint64_t freed = managed ? entry.daemon : (uintptr_t)devPtr;
    vn_note_free(freed);
    vn_req r;
    vn_req_begin(&r, api, 1, 0);
    mp_key(&r.b, "devPtr"), mp_uint(&r.b, freed);
    int code = vn_call(&r, NULL);
    pthread_mutex_unlock(&exchange);
    if (managed) unmap(&entry);
    return code;
}

VN_EXPORT int aclrtFreeHost(void *hostPtr)
{
    const char *api = "aclrtFreeHost";
    vn_enter(api);
    int ready = vn_ready(api);
    if (ready) return ready;
    pthread_mutex_lock(&exchange);
    pinned entry = {0};
    int found = take_entry(hostPtr, &entry);
    vn_req r;
    vn_req_begin(&r, api, 1, 0);
    mp_key(&r.b, "hostPtr"), mp_uint(&r.b, found ? entry.daemon : vn_to_daemon(hostPtr));
    int code = vn_call(&r, NULL);
    pthread_mutex_unlock(&exchange);
    if (found) unmap(&entry);
    return code;
}

/* ---- copies: a side of a copy is a device or pinned pointer, or pageable memory that travels as bytes -------- */
#define DEVICE_BASE 0x12C000000000ull
#define DEVICE_END (DEVICE_BASE + 64 * 0x010000000000ull)

/* 1: host memory, 0: device memory, -1: told by the address (ACL_MEMCPY_DEFAULT) */
static int host_dst(int kind) { return kind == 0 || kind == 2 ? 1 : kind == 4 ? -1 : 0; }
static int host_src(int kind) { return kind == 0 || kind == 1 || kind == 5 ? 1 : kind == 4 ? -1 : 0; }

static int pageable(const void *p, int host)
{
    uintptr_t a = (uintptr_t)p;
    if (!a || host == 0 || is_pinned(p)) return 0;
    if (host < 0 && a >= DEVICE_BASE && a < DEVICE_END) return 0;
    return 1;
}

static int copy(const char *api, void *dst, size_t destMax, const void *src, size_t count, int kind, void *stream,
                int has_stream)
{
    vn_enter(api);
    int ready = vn_ready(api);
    if (ready) return ready;
    int dst_pageable = pageable(dst, host_dst(kind)), src_pageable = pageable(src, host_src(kind));
    for (int side = 0; side < 2; side++) { /* device memory where host memory is taken: reading it would crash */
        uintptr_t a = (uintptr_t)(side ? src : dst);
        if ((side ? src_pageable : dst_pageable) && a >= DEVICE_BASE && a < DEVICE_END)
            return vn_fail(107000, api,
                           "%s %#llx is device memory (aclrtMalloc), but a %s copy takes host memory there: allocate "
                           "it with aclrtMallocHost or malloc, or copy DEVICE_TO_DEVICE",
                           side ? "src" : "dst", (unsigned long long)a, side ? "HOST_TO_DEVICE" : "DEVICE_TO_HOST");
    }
    if ((src_pageable && count <= destMax && !vn_readable(src, count)) || (dst_pageable && !vn_readable(dst, count)))
        return vn_fail(100000, api, "%s does not hold count (%zu) bytes of this program", src_pageable ? "src" : "dst",
                       count);
    int code = vn_push_pinned();
    if (code) return code;
    vn_req r;
    vn_req_begin(&r, api, has_stream ? 6 : 5, has_stream && !dst_pageable && !src_pageable);
    mp_key(&r.b, "dst");
    if (dst_pageable) mp_nil(&r.b);
    else mp_uint(&r.b, vn_to_daemon(dst));
    mp_key(&r.b, "destMax"), mp_uint(&r.b, destMax);
    mp_key(&r.b, "src");
    if (src_pageable) mp_bin(&r.b, src, count <= destMax ? count : 0);
    else mp_uint(&r.b, vn_to_daemon(src));
    mp_key(&r.b, "count"), mp_uint(&r.b, count);
    mp_key(&r.b, "kind"), mp_int(&r.b, kind);
    if (has_stream) {
        mp_key(&r.b, "stream"), mp_uint(&r.b, (uintptr_t)stream);
        r.has_stream = 1, r.stream = (uintptr_t)stream;
    }
    vn_reply reply;
    code = vn_call(&r, &reply);
    if (code) return code;
    if (dst_pageable && reply.root) {
        const mp_obj *data = vn_out(&reply, "data");
        if (data && (data->type == MP_BIN || data->type == MP_STR) && data->n <= count) memcpy(dst, data->v.s, data->n);
    }
    if (reply.root) vn_reply_free(&reply);
    if (!has_stream) code = vn_pull_pinned();
    return code;
}

VN_EXPORT int aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, int kind)
{
    return copy("aclrtMemcpy", dst, destMax, src, count, kind, NULL, 0);
}

VN_EXPORT int aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, int kind, void *stream)
{
    return copy("aclrtMemcpyAsync", dst, destMax, src, count, kind, stream, 1);
}
