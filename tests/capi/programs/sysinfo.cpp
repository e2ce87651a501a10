// Host-side runtime calls from C, as CANN's quick-start samples make them: versions, run mode, fp16, type sizes,
// CANN attributes, data buffers, the stream priority range, and the last error next to aclGetRecentErrMsg.
// Prints "name value..." lines.
#include <cinttypes>
#include <cstdio>

#include "acl/acl.h"

int main()
{
    std::printf("soc %s\n", aclrtGetSocName());
    std::printf("init %d\n", aclInit(nullptr));
    char version[ACL_PKG_VERSION_MAX_SIZE] = {0};
    aclError code = aclsysGetVersionStr(const_cast<char *>("runtime"), version);
    std::printf("version-str %d %s\n", code, version);
    int32_t number = 0;
    code = aclsysGetVersionNum(const_cast<char *>("runtime"), &number);
    std::printf("version-num %d %d\n", code, number);
    code = aclsysGetVersionStr(const_cast<char *>("no_such_package"), version);
    std::printf("version-missing %d\n", code);
    int32_t major = 0, minor = 0, patch = 0;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // the runtime deprecates it, samples still call it
    code = aclrtGetVersion(&major, &minor, &patch);
#pragma GCC diagnostic pop
    std::printf("acl-version %d %d.%d.%d\n", code, major, minor, patch);
    aclrtRunMode mode = ACL_DEVICE;
    code = aclrtGetRunMode(&mode);
    std::printf("run-mode %d %d\n", code, mode);

    // 1_error_handling: an ACL-layer argument error sets a message but no last error
    code = aclrtGetRunMode(nullptr);
    aclError peekedNull = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
    std::printf("run-mode-null %d peek %d get %d\n", code, peekedNull, aclrtGetLastError(ACL_RT_THREAD_LEVEL));
    const char *message = aclGetRecentErrMsg();
    std::printf("message-first %d\n", message != nullptr);
    message = aclGetRecentErrMsg();
    std::printf("message-second %d\n", message != nullptr);
    // a runtime error is stored: peek keeps it, get clears it
    code = aclrtSetDevice(99);
    aclError peeked = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
    aclError got = aclrtGetLastError(ACL_RT_THREAD_LEVEL);
    aclError again = aclrtGetLastError(ACL_RT_THREAD_LEVEL);
    std::printf("bad-device %d peek %d get %d again %d\n", code, peeked, got, again);
    std::printf("bad-level %d\n", aclrtGetLastError(static_cast<aclrtLastErrLevel>(3)));

    aclFloat16 half = aclFloatToFloat16(1.625f);
    std::printf("fp16 0x%04x %f\n", half, aclFloat16ToFloat(half));
    std::printf("fp16-saturate 0x%04x 0x%04x\n", aclFloatToFloat16(1e9f), aclFloat16ToFloat(0x7C00) == 65536.0f);
    std::printf("sizes %zu %zu %zu %zu\n", aclDataTypeSize(ACL_FLOAT), aclDataTypeSize(ACL_FLOAT16),
                aclDataTypeSize(ACL_INT64), aclDataTypeSize(ACL_STRING));

    const aclCannAttr *attributes = nullptr;
    size_t count = 0;
    code = aclGetCannAttributeList(&attributes, &count);
    std::printf("attributes %d %zu", code, count);
    for (size_t i = 0; i < count; i++) {
        int32_t value = -1;
        aclGetCannAttribute(attributes[i], &value);
        std::printf(" %d=%d", attributes[i], value);
    }
    std::printf("\n");
    int32_t ignored = 0;
    std::printf("attribute-bad %d\n", aclGetCannAttribute(static_cast<aclCannAttr>(9), &ignored));

    int32_t least = -1, greatest = -1;
    code = aclrtDeviceGetStreamPriorityRange(&least, &greatest);
    aclError onlyLeast = aclrtDeviceGetStreamPriorityRange(&least, nullptr);
    std::printf("priorities %d %d %d %d\n", code, least, greatest, onlyLeast);

    static char payload[48];
    aclDataBuffer *buffer = aclCreateDataBuffer(payload, sizeof payload);
    std::printf("buffer %d %zu\n", aclGetDataBufferAddr(buffer) == payload, aclGetDataBufferSizeV2(buffer));
    code = aclUpdateDataBuffer(buffer, payload + 8, 8);
    std::printf("buffer-update %d %zu\n", code, aclGetDataBufferSizeV2(buffer));
    code = aclDestroyDataBuffer(buffer);
    std::printf("buffer-destroy %d %d\n", code, aclDestroyDataBuffer(nullptr));
    std::printf("buffer-gone %d\n", aclDestroyDataBuffer(buffer));
    // device queries (device/1, context/0, 3_cross_version)
    int32_t compatible = -1;
    code = aclrtCheckArchCompatibility(aclrtGetSocName(), &compatible);
    std::printf("arch %d %d\n", code, compatible);
    code = aclrtCheckArchCompatibility("Ascend310P3", &compatible);
    std::printf("arch-other %d %d\n", code, compatible);
    std::printf("arch-unknown %d\n", aclrtCheckArchCompatibility("NoSuchSoc", &compatible));
    int64_t vectors = 0;
    code = aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &vectors);
    std::printf("vector-cores %d %" PRId64 "\n", code, vectors);
    int32_t capability = -1;
    code = aclrtGetDeviceCapability(0, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, &capability);
    std::printf("capability %d %d\n", code, capability);
    std::printf("set-device %d\n", aclrtSetDevice(0));
    code = aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 1);
    uint32_t limit = 0;
    aclError read = aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &limit);
    std::printf("res-limit %d %d %u\n", code, read, limit);
    std::printf("res-limit-too-many %d\n", aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 21));
    aclrtErrorInfo errorInfo;
    errorInfo.tryRepair = 9;
    errorInfo.errorType = ACL_RT_ERROR_OTHERS;
    code = aclrtGetErrorVerbose(0, &errorInfo);
    std::printf("error-verbose %d %d %d %d\n", code, errorInfo.errorType, errorInfo.tryRepair, errorInfo.hasDetail);
    std::printf("error-verbose-null %d\n", aclrtGetErrorVerbose(0, nullptr));
    std::printf("error-verbose-device %d\n", aclrtGetErrorVerbose(5, &errorInfo));
    aclrtUtilizationInfo usage{};
    code = aclrtGetDeviceUtilizationRate(0, &usage);
    std::printf("utilization %d %d %d %d %d\n", code, usage.cubeUtilization, usage.vectorUtilization,
                usage.aicpuUtilization, usage.memoryUtilization);
    usage.utilizationExtend = reinterpret_cast<aclrtUtilizationExtendInfo *>(&usage);
    std::printf("utilization-extend %d\n", aclrtGetDeviceUtilizationRate(0, &usage));
    std::printf("reset-force %d\n", aclrtResetDeviceForce(0));
    std::printf("finalize %d\n", aclFinalize());
    return 0;
}
