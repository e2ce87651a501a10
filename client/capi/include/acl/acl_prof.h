/* vnpu: the profiling API (aclprof*), shaped like CANN's acl/acl_prof.h: the msproftx stamps, marks and ranges,
 * the profiling session (config, init, start, stop, finalize), model subscription and its op records. */
#ifndef INC_EXTERNAL_ACL_PROF_H_
#define INC_EXTERNAL_ACL_PROF_H_

#ifndef MSVP_PROF_API
#if defined(VNPU_CDEF)
#define MSVP_PROF_API
#elif defined(_MSC_VER)
#define MSVP_PROF_API __declspec(dllexport)
#else
#define MSVP_PROF_API __attribute__((visibility("default")))
#endif
#endif

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* vnpu: defines ACL_PROF_* */

/* vnpu: enums aclprof* */

typedef struct aclprofConfig aclprofConfig;
typedef struct aclprofStopConfig aclprofStopConfig;
typedef struct aclprofAicoreEvents aclprofAicoreEvents;
typedef struct aclprofSubscribeConfig aclprofSubscribeConfig;
typedef struct aclprofStepInfo aclprofStepInfo;

/* A program that declared these three itself defines ACL_PROF_TENSOR_INFO_DEFINED first (as with CANN). */
#ifndef ACL_PROF_TENSOR_INFO_DEFINED
#define ACL_PROF_TENSOR_INFO_DEFINED
typedef struct aclprofTensor {
    uint32_t type; /* 0 input, 1 output */
    uint32_t format; /* an aclFormat */
    uint32_t dataType; /* an aclDataType */
    uint32_t shapeDim; /* at most ACL_PROF_TENSOR_DATA_SHAPE_LEN */
    uint32_t shape[ACL_PROF_TENSOR_DATA_SHAPE_LEN];
} aclprofTensor;

typedef struct aclprofTensorInfo {
    uint64_t opNameId; /* aclprofStr2Id of the name */
    uint64_t opTypeId;
    uint32_t resv;
    uint32_t tensorNum;
    uint32_t kernelType;
    uint32_t blockNums;
    void *stream;
    aclprofTensor *tensors;
} aclprofTensorInfo;

typedef struct aclprofEventAttributes {
    uint16_t version;
    uint16_t size;
    uint32_t messageType; /* an aclprofMessageType */
    union Message {
        aclprofTensorInfo *tensorInfo;
    } message;
} aclprofEventAttributes;
#endif

/* the profiling session */
MSVP_PROF_API aclError aclprofInit(const char *profilerResultPath, size_t length);
MSVP_PROF_API aclError aclprofFinalize(void);
MSVP_PROF_API aclError aclprofStart(const aclprofConfig *profilerConfig);
MSVP_PROF_API aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
    aclprofAicoreMetrics aicoreMetrics, const aclprofAicoreEvents *aicoreEvents, uint64_t dataTypeConfig);
MSVP_PROF_API aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig);
MSVP_PROF_API aclError aclprofStop(const aclprofConfig *profilerConfig);
MSVP_PROF_API aclError aclprofSetConfig(aclprofConfigType configType, const char *config, size_t configLength);

/* model subscription, and the op records it delivers */
MSVP_PROF_API aclError aclprofModelSubscribe(uint32_t modelId, const aclprofSubscribeConfig *profSubscribeConfig);
MSVP_PROF_API aclError aclprofModelUnSubscribe(uint32_t modelId);
MSVP_PROF_API aclprofSubscribeConfig *aclprofCreateSubscribeConfig(int8_t timeInfoSwitch,
    aclprofAicoreMetrics aicoreMetrics, void *fd);
MSVP_PROF_API aclError aclprofDestroySubscribeConfig(const aclprofSubscribeConfig *profSubscribeConfig);
MSVP_PROF_API aclError aclprofGetOpDescSize(size_t *opDescSize);
MSVP_PROF_API aclError aclprofGetOpNum(const void *opInfo, size_t opInfoLen, uint32_t *opNumber);
MSVP_PROF_API aclError aclprofGetOpTypeLen(const void *opInfo, size_t opInfoLen, uint32_t index, size_t *opTypeLen);
MSVP_PROF_API aclError aclprofGetOpType(const void *opInfo, size_t opInfoLen, uint32_t index, char *opType,
    size_t opTypeLen);
MSVP_PROF_API aclError aclprofGetOpNameLen(const void *opInfo, size_t opInfoLen, uint32_t index, size_t *opNameLen);
MSVP_PROF_API aclError aclprofGetOpName(const void *opInfo, size_t opInfoLen, uint32_t index, char *opName,
    size_t opNameLen);
MSVP_PROF_API uint64_t aclprofGetOpStart(const void *opInfo, size_t opInfoLen, uint32_t index);
MSVP_PROF_API uint64_t aclprofGetOpEnd(const void *opInfo, size_t opInfoLen, uint32_t index);
MSVP_PROF_API uint64_t aclprofGetOpDuration(const void *opInfo, size_t opInfoLen, uint32_t index);
MSVP_PROF_API size_t aclprofGetModelId(const void *opInfo, size_t opInfoLen, uint32_t index);
MSVP_PROF_API aclprofSubscribeOpFlag aclprofGetOpFlag(const void *opInfo, size_t opInfoLen, uint32_t index);
MSVP_PROF_API const char *aclprofGetOpAttriValue(const void *opInfo, size_t opInfoLen, uint32_t index,
    aclprofSubscribeOpAttri attri);

/* training steps */
MSVP_PROF_API aclError aclprofGetStepTimestamp(aclprofStepInfo *stepInfo, aclprofStepTag tag, aclrtStream stream);
MSVP_PROF_API aclprofStepInfo *aclprofCreateStepInfo(void);
MSVP_PROF_API void aclprofDestroyStepInfo(aclprofStepInfo *stepinfo);

/* msproftx: stamps carrying a message, marks, push/pop and ranges */
MSVP_PROF_API void *aclprofCreateStamp(void);
MSVP_PROF_API void aclprofDestroyStamp(void *stamp);
MSVP_PROF_API aclError aclprofPush(void *stamp);
MSVP_PROF_API aclError aclprofPop(void);
MSVP_PROF_API aclError aclprofRangeStart(void *stamp, uint32_t *rangeId);
MSVP_PROF_API aclError aclprofRangeStop(uint32_t rangeId);
MSVP_PROF_API aclError aclprofSetStampTraceMessage(void *stamp, const char *msg, uint32_t msgLen);
MSVP_PROF_API aclError aclprofMark(void *stamp);
MSVP_PROF_API aclError aclprofMarkEx(const char *msg, size_t msgLen, aclrtStream stream);
MSVP_PROF_API uint64_t aclprofStr2Id(const char *message);
MSVP_PROF_API aclError aclprofRangePushEx(aclprofEventAttributes *attr);
MSVP_PROF_API aclError aclprofRangePop(void);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_PROF_H_ */
