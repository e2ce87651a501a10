// Callbacks and host functions from C, in the shape of CANN's callback samples: a report thread (its own
// context current, as the samples set it) loops on aclrtProcessReport for a stream subscribed to it; blocking
// and non-blocking callbacks get their userData back in that thread; a host function on another stream reads
// pinned memory that the stream copied into before it, and holds the copy behind it until it returns; a failed
// task reaches the exception-information callback before its synchronize returns.
// Prints "name code" lines, "name value" lines and "values ok|WRONG" for the data checked.
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include "acl/acl.h"

static void Report(const char *name, aclError code)
{
    const char *message = code == ACL_SUCCESS ? nullptr : aclGetRecentErrMsg();
    std::printf("%s %d%s%s\n", name, code, message ? " " : "", message ? message : "");
}

struct Seen {
    std::atomic<int> calls{0};
    std::atomic<int> sum{0};  // of the userData values the callbacks got
    std::atomic<bool> inReportThread{true};
    pthread_t reportThread{};
};

static Seen seen;
static aclrtContext context = nullptr;
static std::atomic<bool> reporting{true};

static void OnReport(void *userData)
{
    seen.calls += 1;
    seen.sum += *static_cast<int *>(userData);
    if (!pthread_equal(pthread_self(), seen.reportThread)) {
        seen.inReportThread = false;
    }
}

static void ReportLoop()
{
    aclrtSetCurrentContext(context);
    while (reporting) {
        aclrtProcessReport(50);  // 507012 when nothing is due: the samples ignore it
    }
}

struct HostRead {
    const float *pinned;
    int count;
    float total;
    bool ran;
};

static void SumPinned(void *args)
{
    auto *read = static_cast<HostRead *>(args);
    read->total = 0;
    for (int i = 0; i < read->count; ++i) {
        read->total += read->pinned[i];
    }
    read->ran = true;
}

struct ExceptionSeen {
    std::atomic<int> calls{0};
    uint32_t taskId = 0, streamId = 0, threadId = 0, deviceId = 0, errorCode = 0;
    aclError argsCode = 0, funcCode = 0;
};

static ExceptionSeen exception;

static void OnException(aclrtExceptionInfo *info)
{
    exception.calls += 1;
    exception.taskId = aclrtGetTaskIdFromExceptionInfo(info);
    exception.streamId = aclrtGetStreamIdFromExceptionInfo(info);
    exception.threadId = aclrtGetThreadIdFromExceptionInfo(info);
    exception.deviceId = aclrtGetDeviceIdFromExceptionInfo(info);
    exception.errorCode = aclrtGetErrorCodeFromExceptionInfo(info);
    void *args = nullptr;
    uint32_t argsLen = 0;
    aclrtFuncHandle func = nullptr;
    exception.argsCode = aclrtGetArgsFromExceptionInfo(info, &args, &argsLen);  // vnpu's kernels have none
    exception.funcCode = aclrtGetFuncHandleFromExceptionInfo(info, &func);
}

static std::atomic<int> created{0}, destroyed{0}, wrongArgs{0};
static int stateTag = 7;

static void OnStreamState(aclrtStream stream, aclrtStreamState state, void *args)
{
    if (args != &stateTag || stream == nullptr) {
        wrongArgs += 1;
    }
    (state == ACL_RT_STREAM_STATE_CREATE_POST ? created : destroyed) += 1;
}

int main()
{
    Report("init", aclInit(nullptr));
    Report("stream-state", aclrtRegStreamStateCallback("callbacks-test", OnStreamState, &stateTag));
    Report("stream-state-again", aclrtRegStreamStateCallback("callbacks-test", OnStreamState, &stateTag));
    Report("set", aclrtSetDevice(0));
    Report("context", aclrtCreateContext(&context, 0));
    aclrtStream stream = nullptr, hostStream = nullptr;
    Report("stream", aclrtCreateStream(&stream));
    Report("host-stream", aclrtCreateStream(&hostStream));

    std::thread reporter(ReportLoop);
    seen.reportThread = reporter.native_handle();
    auto reportTid = static_cast<uint64_t>(reporter.native_handle());
    Report("subscribe", aclrtSubscribeReport(reportTid, stream));
    Report("subscribe-again", aclrtSubscribeReport(reportTid + 1, stream));
    static int data[3] = {520, 7, 11};
    Report("callback-block", aclrtLaunchCallback(OnReport, &data[0], ACL_CALLBACK_BLOCK, stream));
    Report("callback-no-block", aclrtLaunchCallback(OnReport, &data[1], ACL_CALLBACK_NO_BLOCK, stream));
    Report("callback-block-2", aclrtLaunchCallback(OnReport, &data[2], ACL_CALLBACK_BLOCK, stream));
    Report("callback-bad-block", aclrtLaunchCallback(OnReport, &data[2], static_cast<aclrtCallbackBlockType>(5), stream));
    Report("host-func-on-subscribed", aclrtLaunchHostFunc(stream, SumPinned, nullptr));  // callback/0's mistake
    Report("sync", aclrtSynchronizeStream(stream));
    std::printf("calls %d\nsum %d\nin-report-thread %d\n", seen.calls.load(), seen.sum.load(),
                seen.inReportThread.load() ? 1 : 0);

    // a host function reads what the stream copied into pinned memory, and holds the copy behind it
    const int count = 256;
    float values[count];
    float expected = 0;
    for (int i = 0; i < count; ++i) {
        values[i] = static_cast<float>((i * 37) % 101) / 8.0F;
        expected += values[i];
    }
    void *device = nullptr, *pinned = nullptr, *after = nullptr;
    Report("malloc", aclrtMalloc(&device, sizeof(values), ACL_MEM_MALLOC_HUGE_FIRST));
    Report("malloc-after", aclrtMalloc(&after, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    Report("malloc-host", aclrtMallocHost(&pinned, sizeof(values)));
    std::memset(pinned, 0, sizeof(values));
    Report("h2d", aclrtMemcpy(device, sizeof(values), values, sizeof(values), ACL_MEMCPY_HOST_TO_DEVICE));
    HostRead read{static_cast<const float *>(pinned), count, 0, false};
    Report("d2h-async", aclrtMemcpyAsync(pinned, sizeof(values), device, sizeof(values), ACL_MEMCPY_DEVICE_TO_HOST,
                                         hostStream));
    Report("host-func", aclrtLaunchHostFunc(hostStream, SumPinned, &read));
    Report("memset-after", aclrtMemsetAsync(after, 8, 0x33, 8, hostStream));
    Report("host-func-null", aclrtLaunchHostFunc(hostStream, nullptr, &read));
    Report("sync-host", aclrtSynchronizeStream(hostStream));
    unsigned char back[8] = {};
    Report("copy-after", aclrtMemcpy(back, 8, after, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    bool ok = read.ran && read.total == expected && back[0] == 0x33 && back[7] == 0x33;
    std::printf("values %s\n", ok ? "ok" : "WRONG");
    Report("subscribe-host-stream", aclrtSubscribeReport(reportTid, hostStream));
    Report("subscribe-host-func", aclrtSubscribeHostFunc(reportTid, hostStream));

    // a task fails (a copy from memory freed before it runs): the exception callback gets its ids before the
    // synchronize that reports it returns, as in the callback_exception sample
    Report("register-exception-callback", aclrtExceptionInfoCallbackRegister(OnException));
    Report("register-null", aclrtExceptionInfoCallbackRegister(nullptr));
    void *victim = nullptr;
    aclrtEvent gate = nullptr;
    Report("malloc-victim", aclrtMalloc(&victim, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    Report("gate", aclrtCreateEvent(&gate));
    Report("gate-wait", aclrtStreamWaitEvent(hostStream, gate));
    Report("doomed-copy", aclrtMemcpyAsync(after, 8, victim, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, hostStream));
    uint32_t lastTask = 0;
    Report("last-task", aclrtGetThreadLastTaskId(&lastTask));
    Report("free-victim", aclrtFree(victim));
    Report("gate-record", aclrtRecordEvent(gate, nullptr));
    Report("sync-failed", aclrtSynchronizeStream(hostStream));
    int32_t streamId = -1;
    Report("stream-id", aclrtStreamGetId(hostStream, &streamId));
    std::printf("exception %d %d %d %d\n", exception.calls.load(), exception.taskId == lastTask,
                static_cast<int32_t>(exception.streamId) == streamId,
                exception.threadId == static_cast<uint32_t>(pthread_self()));
    std::printf("exception-code %u\n", exception.errorCode);
    std::printf("exception-null %u\n", aclrtGetTaskIdFromExceptionInfo(nullptr));
    std::printf("exception-kernel-detail %d %d\n", exception.argsCode, exception.funcCode);
    Report("peek-after-failure", aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL));
    Report("get-after-failure", aclrtGetLastError(ACL_RT_THREAD_LEVEL));
    Report("unregister-exception-callback", aclrtExceptionInfoCallbackUnregister(OnException));
    Report("destroy-gate", aclrtDestroyEvent(gate));

    reporting = false;
    reporter.join();
    Report("process-bad-timeout", aclrtProcessReport(0));
    Report("process-unsubscribed", aclrtProcessReport(10));  // this thread serves no stream
    Report("unsubscribe", aclrtUnSubscribeReport(reportTid, stream));
    Report("callback-unsubscribed", aclrtLaunchCallback(OnReport, &data[0], ACL_CALLBACK_BLOCK, stream));
    Report("free-host", aclrtFreeHost(pinned));
    Report("free", aclrtFree(device));
    Report("free-after", aclrtFree(after));
    Report("destroy-stream", aclrtDestroyStreamForce(stream));
    Report("destroy-host-stream", aclrtDestroyStreamForce(hostStream));
    Report("destroy-context", aclrtDestroyContext(context));
    Report("reset-force", aclrtResetDeviceForce(0));
    Report("stream-state-off", aclrtRegStreamStateCallback("callbacks-test", nullptr, nullptr));
    std::printf("stream-states %d %d %d\n", created.load(), destroyed.load(), wrongArgs.load());
    Report("finalize", aclFinalize());
    return 0;
}
