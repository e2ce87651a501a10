// Per-thread state from C threads, against a daemon with two devices: each thread has its own current device
// (a thread that never set one is told so), its own recent error message, and a pipelined error comes back to the
// thread that made the call, not to another. Prints one "name value" line per check; main's thread is "main".
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

static std::mutex printing;

static void Say(const char *name, long value, const char *message = nullptr)
{
    std::lock_guard<std::mutex> lock(printing);
    std::printf("%s %ld%s%s\n", name, value, message ? " " : "", message ? message : "");
}

static void Report(const char *name, aclError code)
{
    const char *message = code == ACL_SUCCESS ? nullptr : aclGetRecentErrMsg();
    Say(name, code, message ? message : nullptr);
}

// One executor that fails at launch: its output tensor's memory is freed before phase 2 runs on the device.
static aclError FailingLaunch(aclrtStream stream, void *x, void *dead)
{
    int64_t shape[1] = {4}, strides[1] = {1};
    aclTensor *a = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, x);
    aclTensor *o = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, dead);
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    uint64_t workspace = 0;
    aclOpExecutor *executor = nullptr;
    aclError code = aclnnAddGetWorkspaceSize(a, a, alpha, o, &workspace, &executor);
    if (code == ACL_SUCCESS) {
        code = aclnnAdd(nullptr, 0, executor, stream);
    }
    aclDestroyTensor(a);
    aclDestroyTensor(o);
    aclDestroyScalar(alpha);
    return code;
}

int main()
{
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        std::printf("setup failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    uint32_t count = 0;
    Report("count-code", aclrtGetDeviceCount(&count));
    Say("count", count);

    // a thread that never called aclrtSetDevice has no current device, whatever the main thread did
    std::thread([] {
        int32_t device = -1;
        Report("unset-get-device", aclrtGetDevice(&device));
        aclrtStream stream = nullptr;
        Report("unset-create-stream", aclrtCreateStream(&stream));
    }).join();

    // two threads on two devices at once: each sees its own, and memory lands on its own device
    std::mutex meet;
    int arrived = 0;
    auto onDevice = [&](const char *name, int32_t want) {
        Report((std::string(name) + "-set").c_str(), aclrtSetDevice(want));
        {
            std::lock_guard<std::mutex> lock(meet);
            arrived++;
        }
        while (true) {  // both threads have set their device before either reads it
            std::lock_guard<std::mutex> lock(meet);
            if (arrived == 2) {
                break;
            }
        }
        int32_t device = -1;
        Report((std::string(name) + "-get-code").c_str(), aclrtGetDevice(&device));
        Say((std::string(name) + "-device").c_str(), device);
        void *p = nullptr;
        Report((std::string(name) + "-malloc").c_str(), aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
        Say((std::string(name) + "-pointer").c_str(), static_cast<long>(reinterpret_cast<uintptr_t>(p)));
        float in[16], out[16];
        for (int i = 0; i < 16; i++) {
            in[i] = static_cast<float>(want * 100 + i);
        }
        Report((std::string(name) + "-copy-in").c_str(), aclrtMemcpy(p, 64, in, 64, ACL_MEMCPY_HOST_TO_DEVICE));
        Report((std::string(name) + "-copy-out").c_str(), aclrtMemcpy(out, 64, p, 64, ACL_MEMCPY_DEVICE_TO_HOST));
        Say((std::string(name) + "-roundtrip").c_str(), std::memcmp(in, out, sizeof in) == 0);
        Report((std::string(name) + "-free").c_str(), aclrtFree(p));
        Report((std::string(name) + "-reset").c_str(), aclrtResetDevice(want));
    };
    std::thread zero(onDevice, "t0", 0), one(onDevice, "t1", 1);
    zero.join();
    one.join();
    int32_t device = -1;
    Report("main-get-code", aclrtGetDevice(&device));
    Say("main-device", device);

    // a pipelined failure on thread A is returned by A's next waiting call; thread B's calls meanwhile succeed
    // and B's aclGetRecentErrMsg says nothing of A's error
    aclrtStream stream = nullptr;
    void *x = nullptr, *dead = nullptr;
    Report("main-stream", aclrtCreateStream(&stream));
    Report("main-malloc-x", aclrtMalloc(&x, 16, ACL_MEM_MALLOC_HUGE_FIRST));
    Report("main-malloc-dead", aclrtMalloc(&dead, 16, ACL_MEM_MALLOC_HUGE_FIRST));
    Report("main-free-dead", aclrtFree(dead));
    Report("a-launch", FailingLaunch(stream, x, dead));
    std::thread([] {
        Report("b-set", aclrtSetDevice(0));
        aclrtStream own = nullptr;
        Report("b-stream", aclrtCreateStream(&own));
        Report("b-sync", aclrtSynchronizeStream(own));
        const char *message = aclGetRecentErrMsg();
        Say("b-message-null", message == nullptr);
        Report("b-destroy", aclrtDestroyStream(own));
        Report("b-reset", aclrtResetDevice(0));
    }).join();
    Report("a-sync", aclrtSynchronizeStream(stream));
    Report("main-free-x", aclrtFree(x));
    Report("main-destroy", aclrtDestroyStream(stream));
    Report("main-reset", aclrtResetDevice(0));
    Report("main-finalize", aclFinalize());
    return 0;
}
