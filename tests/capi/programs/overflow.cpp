// Overflow detection from C, in the shape of CANN's 4_reliability/overflow_detection sample: in a created
// context, the saturation mode switched and restored, a stream's overflow switch turned on, the 64-byte status
// read into device memory (filled with other bytes first, so the copy shows), reset and read again; the checks'
// codes; then every stream attribute through the aclrtStreamAttrValue union. Prints "name code" and "name value"
// lines. A queued call's error comes back at the next call that waits (its "-sync" line) unless
// VNPU_LAUNCH_BLOCKING=1.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "acl/acl.h"

namespace {
constexpr size_t kStatusSize = 64;

void Report(const char *name, aclError code)
{
    const char *message = code == ACL_SUCCESS ? nullptr : aclGetRecentErrMsg();
    std::printf("%s %d%s%s\n", name, code, message ? " " : "", message ? message : "");
}

// the status as the sample reads it (its first uint32_t), and whether all 64 bytes are zero
void ReadStatus(const char *name, void *device)
{
    uint8_t host[kStatusSize];
    std::memset(host, 0x77, sizeof(host));
    Report("copy-status", aclrtMemcpy(host, sizeof(host), device, kStatusSize, ACL_MEMCPY_DEVICE_TO_HOST));
    uint32_t flag = 0;
    std::memcpy(&flag, host, sizeof(flag));
    bool zero = true;
    for (uint8_t b : host) {
        zero = zero && b == 0;
    }
    std::printf("%s %u %s\n", name, flag, zero ? "zero" : "NONZERO");
}
}  // namespace

int main()
{
    Report("init", aclInit(nullptr));
    Report("set", aclrtSetDevice(0));
    aclrtContext context = nullptr;
    Report("context", aclrtCreateContext(&context, 0));

    aclrtFloatOverflowMode original = ACL_RT_OVERFLOW_MODE_UNDEF, current = ACL_RT_OVERFLOW_MODE_UNDEF;
    Report("get-mode", aclrtGetDeviceSatMode(&original));
    Report("set-saturation", aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION));
    Report("get-mode-again", aclrtGetDeviceSatMode(&current));
    std::printf("modes %d %d\n", static_cast<int>(original), static_cast<int>(current));
    Report("get-mode-null", aclrtGetDeviceSatMode(nullptr));
    Report("set-undef", aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_UNDEF));

    aclrtStream stream = nullptr;
    Report("stream", aclrtCreateStream(&stream));
    Report("switch-on", aclrtSetStreamOverflowSwitch(stream, 1));
    uint32_t queried = 9;
    Report("get-switch", aclrtGetStreamOverflowSwitch(stream, &queried));
    std::printf("switch %u\n", queried);
    Report("switch-two", aclrtSetStreamOverflowSwitch(stream, 2));
    Report("get-switch-null", aclrtGetStreamOverflowSwitch(stream, nullptr));

    void *status = nullptr;
    Report("malloc", aclrtMalloc(&status, kStatusSize, ACL_MEM_MALLOC_HUGE_FIRST));
    Report("fill", aclrtMemset(status, kStatusSize, 0xAB, kStatusSize));
    Report("status", aclrtGetOverflowStatus(status, kStatusSize, stream));
    Report("sync-status", aclrtSynchronizeStream(stream));
    ReadStatus("status-before", status);
    Report("reset", aclrtResetOverflowStatus(stream));
    Report("sync-reset", aclrtSynchronizeStream(stream));
    Report("fill-again", aclrtMemset(status, kStatusSize, 0xCD, kStatusSize));
    Report("status-again", aclrtGetOverflowStatus(status, kStatusSize, stream));
    Report("sync-status-again", aclrtSynchronizeStream(stream));
    ReadStatus("status-after", status);

    Report("status-null", aclrtGetOverflowStatus(nullptr, kStatusSize, stream));
    Report("status-null-sync", aclrtSynchronizeStream(stream));
    Report("status-size", aclrtGetOverflowStatus(status, 32, stream));
    Report("status-size-sync", aclrtSynchronizeStream(stream));

    // stream attributes: the union's other bytes hold junk, which the 32-bit members do not see
    aclrtStreamAttrValue value;
    std::memset(&value, 0x5A, sizeof(value));
    value.overflowSwitch = 0;
    Report("attr-set-check", aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &value));
    Report("get-switch-off", aclrtGetStreamOverflowSwitch(stream, &queried));
    std::memset(&value, 0xFF, sizeof(value));
    Report("attr-get-check", aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &value));
    std::printf("attr-check %u %u %u\n", queried, value.overflowSwitch, value.reserve[1]);  // 0 0 untouched
    std::memset(&value, 0, sizeof(value));
    Report("attr-get-tag", aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &value));
    std::printf("tag-unset %u\n", value.userCustomTag);
    value.userCustomTag = 0xC0FFEE;
    Report("attr-set-tag", aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &value));
    std::memset(&value, 0, sizeof(value));
    Report("attr-get-tag-again", aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &value));
    std::printf("tag %u\n", value.userCustomTag);
    value.failureMode = ACL_STOP_ON_FAILURE;
    Report("attr-set-failure", aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_FAILURE_MODE, &value));
    std::memset(&value, 0xFF, sizeof(value));
    Report("attr-get-failure", aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_FAILURE_MODE, &value));
    std::printf("failure %llu\n", static_cast<unsigned long long>(value.failureMode));
    value.failureMode = ACL_CONTINUE_ON_FAILURE;
    Report("attr-back-to-continue", aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_FAILURE_MODE, &value));
    value.cacheOpInfoSwitch = 1;
    Report("attr-set-cache", aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_CACHE_OP_INFO, &value));
    value.cacheOpInfoSwitch = 9;
    Report("attr-get-cache", aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_CACHE_OP_INFO, &value));
    std::printf("cache %u\n", value.cacheOpInfoSwitch);  // in effect in captures only

    aclrtStream ranked = nullptr;
    Report("stream-ranked", aclrtCreateStreamWithConfig(&ranked, 5, 0));
    Report("attr-get-priority", aclrtGetStreamAttribute(ranked, ACL_STREAM_ATTR_PRIORITY, &value));
    uint32_t first = value.streamPriority;
    value.streamPriority = 3;
    Report("attr-set-priority", aclrtSetStreamAttribute(ranked, ACL_STREAM_ATTR_PRIORITY, &value));
    Report("attr-get-priority-again", aclrtGetStreamAttribute(ranked, ACL_STREAM_ATTR_PRIORITY, &value));
    uint32_t created = 0;
    Report("priority", aclrtStreamGetPriority(ranked, &created));
    std::printf("priorities %u %u %u\n", first, value.streamPriority, created);  // 5 3 5
    Report("attr-priority-default", aclrtSetStreamAttribute(nullptr, ACL_STREAM_ATTR_PRIORITY, &value));

    Report("attr-unknown", aclrtSetStreamAttribute(stream, static_cast<aclrtStreamAttr>(9), &value));
    Report("attr-get-unknown", aclrtGetStreamAttribute(stream, static_cast<aclrtStreamAttr>(0), &value));
    Report("attr-null", aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_USER_CUSTOM_TAG, nullptr));
    Report("attr-get-null", aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_USER_CUSTOM_TAG, nullptr));

    Report("restore-mode", aclrtSetDeviceSatMode(original));
    Report("get-mode-restored", aclrtGetDeviceSatMode(&current));
    std::printf("restored %d\n", static_cast<int>(current));
    Report("free", aclrtFree(status));
    Report("destroy-ranked", aclrtDestroyStream(ranked));
    Report("destroy-stream", aclrtDestroyStream(stream));
    Report("destroy-context", aclrtDestroyContext(context));
    Report("reset-force", aclrtResetDeviceForce(0));
    Report("finalize", aclFinalize());
    return 0;
}
