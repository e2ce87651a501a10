/* vnpu: HCCL for one rank (libhccl.so). A communicator of world size 1: its collectives are device tasks on the
 * given stream (a copy where data moves, captured like any task); Send/Recv have no peer and are refused. The
 * rest of HCCL answers HCCL_E_NOT_SUPPORT, and HcclGetErrorString / aclGetRecentErrMsg say why. */
#ifndef HCCL_H_
#define HCCL_H_

#include "hccl/hccl_types.h"
#include "acl/acl.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(VNPU_CDEF)
#define HCCL_API
#else
#define HCCL_API __attribute__((visibility("default")))
#endif

/* --- communicators */
HCCL_API HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo);
HCCL_API HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                         HcclComm* comm);
HCCL_API HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                               const HcclCommConfig* config, HcclComm* comm);
HCCL_API HcclResult HcclCommInitClusterInfo(const char* clusterInfo, uint32_t rank, HcclComm* comm);
HCCL_API HcclResult HcclCommInitClusterInfoConfig(const char* clusterInfo, uint32_t rank, HcclCommConfig* config,
                                                  HcclComm* comm);
HCCL_API HcclResult HcclCommInitAll(uint32_t ndev, int32_t* devices, HcclComm* comms);
HCCL_API HcclResult HcclCommDestroy(HcclComm comm);
HCCL_API HcclResult HcclGetCommName(HcclComm comm, char* commName);
HCCL_API HcclResult HcclGetRankSize(HcclComm comm, uint32_t* rankSize);
HCCL_API HcclResult HcclGetRankId(HcclComm comm, uint32_t* rank);
HCCL_API HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult* asyncError);
HCCL_API const char* HcclGetErrorString(HcclResult code);
HCCL_API uint32_t HcclGetCommConfigCapability(void);
HCCL_API HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue);
HCCL_API HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue* configValue);

/* --- collectives: device tasks on `stream` */
HCCL_API HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                                  HcclReduceOp op, HcclComm comm, aclrtStream stream);
HCCL_API HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                                  aclrtStream stream);
HCCL_API HcclResult HcclReduceScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                                      HcclReduceOp op, HcclComm comm, aclrtStream stream);
HCCL_API HcclResult HcclAllGather(void* sendBuf, void* recvBuf, uint64_t sendCount, HcclDataType dataType,
                                  HcclComm comm, aclrtStream stream);
HCCL_API HcclResult HcclReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                               HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream);
HCCL_API HcclResult HcclBarrier(HcclComm comm, aclrtStream stream);
HCCL_API HcclResult HcclSend(void* sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,
                             HcclComm comm, aclrtStream stream);
HCCL_API HcclResult HcclRecv(void* recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank,
                             HcclComm comm, aclrtStream stream);
HCCL_API HcclResult HcclAlltoAll(const void* sendBuf, uint64_t sendCount, HcclDataType sendType,
                                 const void* recvBuf, uint64_t recvCount, HcclDataType recvType, HcclComm comm,
                                 aclrtStream stream);
HCCL_API HcclResult HcclBatchSendRecv(HcclSendRecvItem* sendRecvInfo, uint32_t itemNum, HcclComm comm,
                                      aclrtStream stream);

/* HcclCommConfigInit: the configuration's defaults, as CANN's inline function sets them */
#if !defined(VNPU_CDEF)
static inline void HcclCommConfigInit(HcclCommConfig* config)
{
    typedef struct {
        size_t size;
        uint32_t magicWord;
        uint32_t version;
        uint64_t reserved;
    } configInfo_t;
    configInfo_t* info;
    if (config == NULL) {
        return;
    }
    info = (configInfo_t*)config;
    info->size = sizeof(HcclCommConfig);
    info->magicWord = HCCL_COMM_CONFIG_MAGIC_WORD;
    info->version = HCCL_COMM_CONFIG_VERSION;
    info->reserved = 0;
    config->hcclBufferSize = HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET;
    config->hcclDeterministic = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
    config->hcclCommName[0] = '\0';
    config->hcclUdi[0] = '\0';
    config->hcclOpExpansionMode = HCCL_COMM_DEFAULT_OP_EXPANSION_MODE;
    config->hcclRdmaTrafficClass = HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET;
    config->hcclRdmaServiceLevel = HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET;
    config->hcclWorldRankID = 0;
    config->hcclJobID = 0;
    config->aclGraphZeroCopyEnable = 0;
    config->hcclExecTimeOut = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
    config->hcclAlgo[0] = '\0';
    config->hcclRetryEnable[0] = '\0';
    config->hcclRetryParams[0] = '\0';
    config->hcclBufferName[0] = '\0';
    config->hcclQos = HCCL_COMM_QOS_CONFIG_NOT_SET;
    config->hcclSymWinMaxMemSizePerRank = HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE;
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* HCCL_H_ */
