// Overflow detection from C, in the shape of CANN's 4_reliability/overflow_detection sample: in a created
// context, the saturation mode switched and restored, a stream's overflow switch turned on, the 64-byte status
// read into device memory (filled with other bytes first, so the copy shows), reset and read again; the checks'
// codes. Prints "name code" and "name value" lines. A queued call's error comes back at the next call that waits
// (its "-sync" line) unless VNPU_LAUNCH_BLOCKING=1.
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

    Report("restore-mode", aclrtSetDeviceSatMode(original));
    Report("get-mode-restored", aclrtGetDeviceSatMode(&current));
    std::printf("restored %d\n", static_cast<int>(current));
    Report("free", aclrtFree(status));
    Report("destroy-stream", aclrtDestroyStream(stream));
    Report("destroy-context", aclrtDestroyContext(context));
    Report("reset-force", aclrtResetDeviceForce(0));
    Report("finalize", aclFinalize());
    return 0;
}
