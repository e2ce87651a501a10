/* libhccl.so: HCCL for one rank (hccl/hccl.h), enough for torch.distributed's hccl backend with world size 1.
 *
 * A communicator is a host object of the program: one rank, rank 0, a name. Its collectives are device tasks on
 * the stream they are given (an aclrtMemcpyAsync device to device, through libascendcl), so they order with the
 * stream's other work and are captured like any task: with one rank, AllReduce, AllGather, ReduceScatter and Reduce
 * move the send buffer to the receive buffer (nothing when they are the same memory), Broadcast and Barrier move
 * nothing. Send and Recv have no peer and are refused. A communicator of more ranks is HCCL_E_NOT_SUPPORT, saying
 * vnpu has one rank. A failure of the runtime underneath is HCCL_E_RUNTIME, the runtime's message kept. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "core.h"

#define E_PARA 1
#define E_PTR 2
#define E_NOT_SUPPORT 5
#define E_RUNTIME 15
#define COMMS 256

typedef struct {
    char name[COMM_NAME_MAX_LENGTH];
} comm_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static comm_t *comms[COMMS];
static int names;
static int deterministic;

static int comm_of(HcclComm handle, const char *api, comm_t **out)
{
    vn_enter(api);
    if (!handle) return vn_fail(E_PTR, api, "comm is NULL");
    pthread_mutex_lock(&lock);
    int found = 0;
    for (int i = 0; i < COMMS && !found; i++) found = comms[i] == (comm_t *)handle;
    pthread_mutex_unlock(&lock);
    if (!found) return vn_fail(E_PARA, api, "comm (%p) is not an HcclComm this program created", handle);
    *out = (comm_t *)handle;
    return 0;
}

static int new_comm(HcclComm *out, uint32_t ranks, uint32_t rank, const char *name, const char *api)
{
    if (!out) return vn_fail(E_PTR, api, "comm is NULL: it must point to where the communicator goes");
    if (ranks != 1)
        return vn_fail(E_NOT_SUPPORT, api, "vnpu's HCCL has one rank: a communicator of %u ranks needs real HCCL", ranks);
    if (rank >= ranks) return vn_fail(E_PARA, api, "rank %u is not below the rank count %u", rank, ranks);
    comm_t *c = calloc(1, sizeof(*c));
    pthread_mutex_lock(&lock);
    int slot = -1;
    for (int i = 0; i < COMMS && slot < 0; i++)
        if (!comms[i]) slot = i;
    if (slot >= 0) comms[slot] = c;
    int id = ++names;
    pthread_mutex_unlock(&lock);
    if (slot < 0) return free(c), vn_fail(E_PARA, api, "more than %d communicators at once", COMMS);
    if (name && name[0]) snprintf(c->name, sizeof(c->name), "%.*s", COMM_NAME_MAX_LENGTH - 1, name);
    else snprintf(c->name, sizeof(c->name), "vnpu_hccl_%d_%d", (int)getpid(), id);
    *out = c;
    return 0;
}

VN_EXPORT HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo)
{
    vn_enter("HcclGetRootInfo");
    if (!rootInfo) return vn_fail(E_PTR, "HcclGetRootInfo", "rootInfo is NULL");
    memset(rootInfo->internal, 0, sizeof(rootInfo->internal));
    pthread_mutex_lock(&lock);
    int id = ++names;
    pthread_mutex_unlock(&lock);
    snprintf(rootInfo->internal, sizeof(rootInfo->internal), "vnpu-hccl-root pid=%d id=%d", (int)getpid(), id);
    return 0;
}

VN_EXPORT HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, HcclComm *comm)
{
    vn_enter("HcclCommInitRootInfo");
    if (!rootInfo) return vn_fail(E_PTR, "HcclCommInitRootInfo", "rootInfo is NULL");
    return new_comm(comm, nRanks, rank, NULL, "HcclCommInitRootInfo");
}

VN_EXPORT HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                                const HcclCommConfig *config, HcclComm *comm)
{
    vn_enter("HcclCommInitRootInfoConfig");
    if (!rootInfo) return vn_fail(E_PTR, "HcclCommInitRootInfoConfig", "rootInfo is NULL");
    return new_comm(comm, nRanks, rank, config ? config->hcclCommName : NULL, "HcclCommInitRootInfoConfig");
}

/* The ranks of a rank table file: its rank_id entries (one per device of server_list). */
static int cluster_ranks(const char *path, const char *api, uint32_t *ranks)
{
    if (!path) return vn_fail(E_PTR, api, "clusterInfo is NULL");
    FILE *f = fopen(path, "r");
    if (!f) return vn_fail(E_PARA, api, "cannot read the rank table %s: %m", path);
    char *text = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&text, &n);
    char buf[4096];
    for (size_t got; (got = fread(buf, 1, sizeof(buf), f)) > 0;) fwrite(buf, 1, got, mem);
    fclose(f), fclose(mem);
    *ranks = 0;
    for (const char *p = text; (p = strstr(p, "\"rank_id\"")); p++) ++*ranks;
    free(text);
    return 0;
}

VN_EXPORT HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank, HcclComm *comm)
{
    vn_enter("HcclCommInitClusterInfo");
    uint32_t ranks;
    int code = cluster_ranks(clusterInfo, "HcclCommInitClusterInfo", &ranks);
    return code ? code : new_comm(comm, ranks, rank, NULL, "HcclCommInitClusterInfo");
}

VN_EXPORT HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank, HcclCommConfig *config,
                                                   HcclComm *comm)
{
    vn_enter("HcclCommInitClusterInfoConfig");
    uint32_t ranks;
    int code = cluster_ranks(clusterInfo, "HcclCommInitClusterInfoConfig", &ranks);
    return code ? code : new_comm(comm, ranks, rank, config ? config->hcclCommName : NULL, "HcclCommInitClusterInfoConfig");
}

VN_EXPORT HcclResult HcclCommDestroy(HcclComm comm)
{
    comm_t *c;
    int code = comm_of(comm, "HcclCommDestroy", &c);
    if (code) return code;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < COMMS; i++)
        if (comms[i] == c) comms[i] = NULL;
    pthread_mutex_unlock(&lock);
    free(c);
    return 0;
}

VN_EXPORT HcclResult HcclGetCommName(HcclComm comm, char *commName)
{
    comm_t *c;
    int code = comm_of(comm, "HcclGetCommName", &c);
    if (code) return code;
    if (!commName) return vn_fail(E_PTR, "HcclGetCommName", "commName is NULL: it must hold 128 bytes");
    memcpy(commName, c->name, strlen(c->name) + 1);
    return 0;
}

#define OUT_U32(NAME, OUT, VALUE)                                                                                  \
    VN_EXPORT HcclResult NAME(HcclComm comm, uint32_t *OUT)                                                        \
    {                                                                                                              \
        comm_t *c;                                                                                                 \
        int code = comm_of(comm, #NAME, &c);                                                                       \
        if (code) return code;                                                                                     \
        if (!OUT) return vn_fail(E_PTR, #NAME, "%s is NULL: it must point to where the result goes", #OUT);        \
        *OUT = VALUE;                                                                                              \
        return 0;                                                                                                  \
    }
OUT_U32(HcclGetRankSize, rankSize, 1)
OUT_U32(HcclGetRankId, rank, 0)

/* no collective of one rank fails after it was queued */
VN_EXPORT HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError)
{
    comm_t *c;
    int code = comm_of(comm, "HcclGetCommAsyncError", &c);
    if (code) return code;
    if (!asyncError) return vn_fail(E_PTR, "HcclGetCommAsyncError", "asyncError is NULL: it must point to where the result goes");
    *asyncError = 0;
    return 0;
}

VN_EXPORT const char *HcclGetErrorString(HcclResult code)
{
    switch ((int)code) {
    case 0: return "no error";
    case E_PARA: return "parameter error";
    case E_PTR: return "empty pointer";
    case E_NOT_SUPPORT: return "not supported";
    case E_RUNTIME: return "runtime error";
    case 4: return "internal error";
    default: return "unknown HcclResult";
    }
}

static int dtype_size(int dtype)
{
    switch (dtype) {
    case 0: case 7: case 14: case 15: case 16: case 17: return 1;
    case 1: case 3: case 8: case 11: return 2;
    case 2: case 4: case 9: return 4;
    case 5: case 6: case 10: return 8;
    case 12: return 16;
    default: return 0;
    }
}

/* the one data movement of a one-rank collective: `count` elements from send to recv, on the stream */
static int move(HcclComm comm, void *send, void *recv, uint64_t count, int dtype, aclrtStream stream, const char *api)
{
    comm_t *c;
    int code = comm_of(comm, api, &c);
    if (code) return code;
    int size = dtype_size(dtype);
    if (!size) return vn_fail(E_PARA, api, "%s: dataType %d is not an HcclDataType vnpu moves", api, dtype);
    if (count && (!send || !recv)) return vn_fail(E_PTR, api, "%s: a buffer is NULL", api);
    if (!count || send == recv) return 0;
    if (count > UINT64_MAX / (uint64_t)size) return vn_fail(E_PARA, api, "%s: count %llu is too large", api, (unsigned long long)count);
    size_t nbytes = (size_t)(count * (uint64_t)size);
    code = aclrtMemcpyAsync(recv, nbytes, send, nbytes, ACL_MEMCPY_DEVICE_TO_DEVICE, stream);
    if (code) {
        char *kept = vn_take_message();
        vn_fail(E_RUNTIME, api, "%s: %s", api, kept ? kept : "the runtime failed");
        free(kept);
        return E_RUNTIME;
    }
    return 0;
}

static int reduce_op(int op, const char *api)
{
    if (op >= 0 && op <= 3) return 0;
    vn_enter(api);
    return vn_fail(E_PARA, api, "%s: op %d is not an HcclReduceOp (SUM, PROD, MAX or MIN)", api, op);
}

static int root_of(uint32_t root, const char *api)
{
    if (root == 0) return 0;
    vn_enter(api);
    return vn_fail(E_PARA, api, "%s: root %u is not a rank of a one-rank communicator (only 0)", api, root);
}

VN_EXPORT HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                                   HcclReduceOp op, HcclComm comm, aclrtStream stream)
{
    int code = reduce_op(op, "HcclAllReduce");
    return code ? code : move(comm, sendBuf, recvBuf, count, dataType, stream, "HcclAllReduce");
}

VN_EXPORT HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op,
                                uint32_t root, HcclComm comm, aclrtStream stream)
{
    int code = reduce_op(op, "HcclReduce");
    if (!code) code = root_of(root, "HcclReduce");
    return code ? code : move(comm, sendBuf, recvBuf, count, dataType, stream, "HcclReduce");
}

VN_EXPORT HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                                       HcclReduceOp op, HcclComm comm, aclrtStream stream)
{
    int code = reduce_op(op, "HcclReduceScatter");
    return code ? code : move(comm, sendBuf, recvBuf, recvCount, dataType, stream, "HcclReduceScatter");
}

VN_EXPORT HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount, HcclDataType dataType,
                                   HcclComm comm, aclrtStream stream)
{
    return move(comm, sendBuf, recvBuf, sendCount, dataType, stream, "HcclAllGather");
}

VN_EXPORT HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                                   aclrtStream stream)
{
    int code = root_of(root, "HcclBroadcast");
    return code ? code : move(comm, buf, buf, count, dataType, stream, "HcclBroadcast");
}

VN_EXPORT HcclResult HcclBarrier(HcclComm comm, aclrtStream stream)
{
    (void)stream;
    comm_t *c;
    return comm_of(comm, "HcclBarrier", &c);
}

static int no_peer(HcclComm comm, uint32_t peer, const char *api)
{
    comm_t *c;
    int code = comm_of(comm, api, &c);
    if (code) return code;
    return vn_fail(E_PARA, api, "%s: rank %u is no peer: a one-rank communicator has none", api, peer);
}

VN_EXPORT HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank, HcclComm comm,
                              aclrtStream stream)
{
    (void)sendBuf, (void)count, (void)dataType, (void)stream;
    return no_peer(comm, destRank, "HcclSend");
}

VN_EXPORT HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank, HcclComm comm,
                              aclrtStream stream)
{
    (void)recvBuf, (void)count, (void)dataType, (void)stream;
    return no_peer(comm, srcRank, "HcclRecv");
}

/* HCCL_DETERMINISTIC: 0 (non-deterministic), 1 (deterministic) or 2 (strict): one rank is all three */
VN_EXPORT HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue)
{
    vn_enter("HcclSetConfig");
    if (config != 0) return vn_fail(E_PARA, "HcclSetConfig", "config %d is not an HcclConfig", (int)config);
    if (configValue.value < 0 || configValue.value > 2)
        return vn_fail(E_PARA, "HcclSetConfig", "HCCL_DETERMINISTIC takes 0, 1 or 2, not %d", configValue.value);
    __atomic_store_n(&deterministic, configValue.value, __ATOMIC_RELAXED);
    return 0;
}

VN_EXPORT HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue *configValue)
{
    vn_enter("HcclGetConfig");
    if (config != 0) return vn_fail(E_PARA, "HcclGetConfig", "config %d is not an HcclConfig", (int)config);
    if (!configValue) return vn_fail(E_PTR, "HcclGetConfig", "configValue is NULL");
    configValue->value = __atomic_load_n(&deterministic, __ATOMIC_RELAXED);
    return 0;
}

/* HCCL_COMM_CONFIG_RESERVED: every field of HcclCommConfig is understood (the name is used; one rank has nothing
 * else to tune) */
VN_EXPORT uint32_t HcclGetCommConfigCapability(void) { return 12; }
