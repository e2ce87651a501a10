// Streams, notifies and events from C, in the shape of CANN's stream and notify samples: a producer stream fills
// a buffer and records a notify, a consumer stream waits for it and copies the buffer; event timestamps around
// the work; stream ids, flags and priority; STOP on failure; an abort that releases a stream blocked forever.
// Prints "name code" lines, "name value" lines and "values ok|WRONG" for the data checked.
#include <cstdint>
#include <cstdio>

#include "acl/acl.h"

static void Report(const char *name, aclError code)
{
    const char *message = code == ACL_SUCCESS ? nullptr : aclGetRecentErrMsg();
    std::printf("%s %d%s%s\n", name, code, message ? " " : "", message ? message : "");
}

int main()
{
    Report("init", aclInit(nullptr));
    Report("set", aclrtSetDevice(0));
    aclrtStream producer = nullptr, consumer = nullptr;
    Report("create-producer", aclrtCreateStream(&producer));
    Report("create-consumer", aclrtCreateStreamWithConfig(&consumer, 3, ACL_STREAM_FAST_LAUNCH));
    int32_t idP = -1, idC = -1;
    uint32_t flags = 99, priority = 99;
    Report("id", aclrtStreamGetId(producer, &idP));
    Report("id-consumer", aclrtStreamGetId(consumer, &idC));
    Report("flags", aclrtStreamGetFlags(consumer, &flags));
    Report("priority", aclrtStreamGetPriority(consumer, &priority));
    std::printf("ids-differ %d\nflags-value %u\npriority-value %u\n", idP != idC, flags, priority);
    Report("id-null", aclrtStreamGetId(producer, nullptr));

    aclrtNotify notify = nullptr;
    Report("notify", aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    uint32_t notifyId = 0;
    Report("notify-id", aclrtGetNotifyId(notify, &notifyId));
    aclrtEvent start = nullptr, end = nullptr;
    Report("event-start", aclrtCreateEvent(&start));
    Report("event-end", aclrtCreateEvent(&end));
    void *src = nullptr, *dst = nullptr;
    Report("malloc-src", aclrtMalloc(&src, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    Report("malloc-dst", aclrtMalloc(&dst, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    Report("wait-notify", aclrtWaitAndResetNotify(notify, consumer, 0));
    Report("copy-async", aclrtMemcpyAsync(dst, 256, src, 256, ACL_MEMCPY_DEVICE_TO_DEVICE, consumer));
    Report("record-start", aclrtRecordEventWithFlag(start, producer, ACL_EVENT_RECORD_DEFAULT));
    Report("fill", aclrtMemsetAsync(src, 256, 0x5A, 256, producer));
    Report("record-notify", aclrtRecordNotify(notify, producer));
    Report("record-end", aclrtRecordEvent(end, producer));
    Report("sync-consumer", aclrtSynchronizeStream(consumer));
    Report("sync-producer", aclrtSynchronizeStream(producer));
    uint64_t t0 = 0, t1 = 0;
    Report("timestamp-start", aclrtEventGetTimestamp(start, &t0));
    Report("timestamp-end", aclrtEventGetTimestamp(end, &t1));
    std::printf("timestamps-ordered %d\n", t0 > 0 && t0 <= t1);
    unsigned char back[256];
    Report("copy-back", aclrtMemcpy(back, 256, dst, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    bool ok = true;
    for (unsigned char b : back) {
        ok = ok && b == 0x5A;
    }
    std::printf("values %s\n", ok ? "ok" : "WRONG");

    void *word = nullptr;
    Report("malloc-word", aclrtMalloc(&word, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    Report("word-zero", aclrtMemset(word, 8, 0, 8));
    Report("value-wait", aclrtValueWait(word, 100, ACL_STREAM_WAIT_VALUE_EQ, consumer));
    Report("after-wait", aclrtMemsetAsync(dst, 256, 0x22, 256, consumer));
    aclrtStreamStatus status = ACL_STREAM_STATUS_COMPLETE;
    Report("query-blocked", aclrtStreamQuery(consumer, &status));
    std::printf("blocked-on-value %d\n", status == ACL_STREAM_STATUS_NOT_READY);
    Report("value-write", aclrtValueWrite(word, 100, 0, producer));
    Report("sync-value", aclrtSynchronizeStream(consumer));
    Report("copy-value", aclrtMemcpy(back, 256, dst, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    std::printf("after-value %s\n", back[0] == 0x22 && back[255] == 0x22 ? "ok" : "WRONG");
    int32_t canAccess = -1;
    Report("can-access-peer", aclrtDeviceCanAccessPeer(&canAccess, 0, 1));
    std::printf("peer %d\n", canAccess);
    Report("free-word", aclrtFree(word));

    // the built-in reduce task, as CANN's built_in_task sample uses it: the same {1, 2, 3, 4} in both, summed
    int32_t four[4] = {1, 2, 3, 4};
    void *sumDst = nullptr, *sumSrc = nullptr;
    Report("malloc-sum-dst", aclrtMalloc(&sumDst, sizeof(four), ACL_MEM_MALLOC_HUGE_FIRST));
    Report("malloc-sum-src", aclrtMalloc(&sumSrc, sizeof(four), ACL_MEM_MALLOC_HUGE_FIRST));
    Report("sum-h2d-dst", aclrtMemcpy(sumDst, sizeof(four), four, sizeof(four), ACL_MEMCPY_HOST_TO_DEVICE));
    Report("sum-h2d-src", aclrtMemcpy(sumSrc, sizeof(four), four, sizeof(four), ACL_MEMCPY_HOST_TO_DEVICE));
    Report("reduce", aclrtReduceAsync(sumDst, sumSrc, sizeof(four), ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT32,
                                      producer, nullptr));
    Report("sync-reduce", aclrtSynchronizeStream(producer));
    Report("sum-d2h", aclrtMemcpy(four, sizeof(four), sumDst, sizeof(four), ACL_MEMCPY_DEVICE_TO_HOST));
    std::printf("sums %d %d %d %d\n", four[0], four[1], four[2], four[3]);
    Report("free-sum-dst", aclrtFree(sumDst));
    Report("free-sum-src", aclrtFree(sumSrc));

    Report("stop-on-failure", aclrtSetStreamFailureMode(producer, ACL_STOP_ON_FAILURE));
    Report("back-to-continue", aclrtSetStreamFailureMode(producer, ACL_CONTINUE_ON_FAILURE));
    aclrtEvent never = nullptr;
    Report("event-never", aclrtCreateEventWithFlag(&never, ACL_EVENT_SYNC));
    Report("wait-forever", aclrtStreamWaitEvent(consumer, never));
    Report("abort", aclrtStreamAbort(consumer));
    Report("sync-after-abort", aclrtSynchronizeStream(consumer));  // 0, or 107023 if the wait had started
    Report("works-after-abort", aclrtMemsetAsync(dst, 256, 0x11, 256, consumer));
    Report("sync-again", aclrtSynchronizeStream(consumer));
    Report("copy-after-abort", aclrtMemcpy(back, 256, dst, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    std::printf("after-abort %s\n", back[0] == 0x11 && back[255] == 0x11 ? "ok" : "WRONG");
    Report("stop-default", aclrtStreamStop(nullptr));

    Report("destroy-notify", aclrtDestroyNotify(notify));
    Report("destroy-event", aclrtDestroyEvent(start));
    Report("free-src", aclrtFree(src));
    Report("free-dst", aclrtFree(dst));
    Report("destroy-producer", aclrtDestroyStreamForce(producer));
    Report("destroy-consumer", aclrtDestroyStreamForce(consumer));
    Report("reset-force", aclrtResetDeviceForce(0));
    Report("finalize", aclFinalize());
    return 0;
}
