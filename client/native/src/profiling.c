/* The profiling reports torch_npu links (Msprof*): accepted and dropped, as vnpu collects no msprof data. */
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>

#include "acl/acl.h"
#include "profiling/aprof_pub.h"
#include "core.h"

VN_EXPORT int32_t MsprofSetDeviceIdByGeModelIdx(const uint32_t geModelIdx, const uint32_t deviceId)
{
    (void)geModelIdx, (void)deviceId;
    return 0;
}
VN_EXPORT int32_t MsprofRegisterCallback(uint32_t moduleId, ProfCommandHandle handle)
{
    (void)moduleId, (void)handle;
    return 0;
}
VN_EXPORT int32_t MsprofReportApi(uint32_t nonPersistantFlag, const struct MsprofApi *api)
{
    (void)nonPersistantFlag, (void)api;
    return 0;
}
VN_EXPORT int32_t MsprofReportCompactInfo(uint32_t nonPersistantFlag, const VOID_PTR data, uint32_t length)
{
    (void)nonPersistantFlag, (void)data, (void)length;
    return 0;
}
VN_EXPORT int32_t MsprofReportAdditionalInfo(uint32_t nonPersistantFlag, const VOID_PTR data, uint32_t length)
{
    (void)nonPersistantFlag, (void)data, (void)length;
    return 0;
}

/* a stable 64-bit id of the text (FNV-1a); the maximum for NULL or empty text, as libprofapi answers, and for a
 * length longer than the memory mapped there (never read past it) */
VN_EXPORT uint64_t MsprofGetHashId(const char *hashInfo, size_t length)
{
    if (!hashInfo || !length || !vn_readable(hashInfo, length)) return UINT64_MAX;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < length; i++) h = (h ^ (uint8_t)hashInfo[i]) * 1099511628211ull;
    return h == UINT64_MAX ? h - 1 : h;
}

VN_EXPORT uint64_t MsprofSysCycleTime(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}
