/* vnpu: the part of CANN's profiling/aprof_pub.h that programs and frameworks call: which device a model's
 * profiling data is reported for, and the reporting functions torch_npu links. vnpu collects no msprof data:
 * reports are accepted and dropped, a registered callback is never called (profiling never starts). */
#ifndef VNPU_PROFILING_APROF_PUB_H_
#define VNPU_PROFILING_APROF_PUB_H_

#include <stddef.h>
#include <stdint.h>

#ifndef MSVP_PROF_API
#if defined(VNPU_CDEF)
#define MSVP_PROF_API
#else
#define MSVP_PROF_API __attribute__((visibility("default")))
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef void* VOID_PTR;
#define MSPROF_REPORT_DATA_MAGIC_NUM 0x5A5AU

struct MsprofApi { /* what MsprofReportApi reports */
    uint16_t magicNumber;
    uint16_t level;
    uint32_t type;
    uint32_t threadId;
    uint32_t reserve;
    uint64_t beginTime;
    uint64_t endTime;
    uint64_t itemId;
};

/* a module's profiling switch: called with a MsprofCommandHandleType and its data */
typedef int32_t (*ProfCommandHandle)(uint32_t type, void* data, uint32_t len);

MSVP_PROF_API int32_t MsprofSetDeviceIdByGeModelIdx(const uint32_t geModelIdx, const uint32_t deviceId);
MSVP_PROF_API int32_t MsprofRegisterCallback(uint32_t moduleId, ProfCommandHandle handle);
MSVP_PROF_API int32_t MsprofReportApi(uint32_t nonPersistantFlag, const struct MsprofApi* api);
MSVP_PROF_API int32_t MsprofReportCompactInfo(uint32_t nonPersistantFlag, const VOID_PTR data, uint32_t length);
MSVP_PROF_API int32_t MsprofReportAdditionalInfo(uint32_t nonPersistantFlag, const VOID_PTR data, uint32_t length);
MSVP_PROF_API uint64_t MsprofGetHashId(const char* hashInfo, size_t length);
MSVP_PROF_API uint64_t MsprofSysCycleTime(void);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_PROFILING_APROF_PUB_H_ */
