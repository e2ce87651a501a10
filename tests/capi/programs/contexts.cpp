// ACL contexts from C, in the shape of CANN's context and stream samples: set the device, create a context (it
// becomes current), work on its default stream through the real handle, switch back to the primary context,
// destroy the created one, and end with aclrtResetDeviceForce; three times over in one process, each time from
// aclInit to aclFinalize. Prints "name code" lines and "values ok|WRONG" for the data checked.
#include <cstdio>
#include <cstring>

#include "acl/acl.h"

static void Report(const char *name, aclError code)
{
    const char *message = code == ACL_SUCCESS ? nullptr : aclGetRecentErrMsg();
    std::printf("%s %d%s%s\n", name, code, message ? " " : "", message ? message : "");
}

int main()
{
    for (int round = 0; round < 3; round++) {
        Report("init", aclInit(nullptr));
        Report("set", aclrtSetDevice(0));
        Report("set-again", aclrtSetDevice(0));  // two references: the forced reset drops both
        aclrtContext primary = nullptr, made = nullptr, current = nullptr;
        Report("get-primary", aclrtGetCurrentContext(&primary));
        Report("create", aclrtCreateContext(&made, 0));
        Report("get-current", aclrtGetCurrentContext(&current));
        std::printf("created-is-current %d\n", current == made && made != primary);
        aclrtStream stream = nullptr;
        Report("default-stream", aclrtCtxGetCurrentDefaultStream(&stream));
        std::printf("default-stream-is-real %d\n", stream != nullptr);
        void *dev = nullptr;
        Report("malloc", aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
        unsigned char value = static_cast<unsigned char>(17 + 40 * round);
        Report("memset", aclrtMemsetAsync(dev, 64, value, 64, stream));
        Report("sync", aclrtSynchronizeStream(stream));
        unsigned char back[64];
        Report("copy", aclrtMemcpy(back, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST));
        bool ok = true;
        for (unsigned char b : back) {
            ok = ok && b == value;
        }
        std::printf("values %s\n", ok ? "ok" : "WRONG");
        Report("free", aclrtFree(dev));
        Report("back-to-primary", aclrtSetCurrentContext(primary));
        Report("destroy-primary", aclrtDestroyContext(primary));
        Report("destroy", aclrtDestroyContext(made));
        Report("set-destroyed", aclrtSetCurrentContext(made));
        Report("reset-force", aclrtResetDeviceForce(0));
        Report("reset-after", aclrtResetDevice(0));
        Report("finalize", aclFinalize());
    }
    return 0;
}
