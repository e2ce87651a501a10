// Models from C: the three scenarios of CANN's 4_model_sync_external sample (an event made with
// aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) recorded or waited with the *_EXTERNAL flags inside captures), printed
// as the sample prints them; then a model's name, id, abort and destroy callbacks with their userData.
// Prints "[INFO]  ..." lines for the scenarios, then "name value" lines.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"

#define INFO(fmt, ...) std::printf("[INFO]  " fmt "\n", ##__VA_ARGS__)
#define MUST(call)                                                                          \
    do {                                                                                    \
        aclError code_ = (call);                                                            \
        if (code_ != ACL_SUCCESS) {                                                         \
            std::printf("[ERROR]  Operation failed: %s returned error code %d\n", #call, code_); \
            return -1;                                                                      \
        }                                                                                   \
    } while (0)

static const size_t kCount = 8;
static const size_t kBytes = kCount * sizeof(int32_t);

static bool Matches(const std::vector<int32_t> &got)
{
    for (size_t i = 0; i < kCount; ++i) {
        if (got[i] != static_cast<int32_t>(i + 1)) {
            std::printf("[ERROR]  Check result failed at index %zu: actual=%d, expected=%zu\n", i, got[i], i + 1);
            return false;
        }
    }
    INFO("Check result success.");
    return true;
}

struct Buffers {
    void *src = nullptr;
    void *dst = nullptr;
    std::vector<int32_t> host = std::vector<int32_t>(kCount, 0);
    int Make()
    {
        std::vector<int32_t> values(kCount);
        for (size_t i = 0; i < kCount; ++i) values[i] = static_cast<int32_t>(i + 1);
        MUST(aclrtMalloc(&src, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));
        MUST(aclrtMalloc(&dst, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));
        MUST(aclrtMemcpy(src, kBytes, values.data(), kBytes, ACL_MEMCPY_HOST_TO_DEVICE));
        return 0;
    }
    int Free()
    {
        MUST(aclrtFree(src));
        MUST(aclrtFree(dst));
        return 0;
    }
};

// the outside stream records before the launch; the graph's EXTERNAL wait takes that record
static int OutsideRecordGraphWait()
{
    INFO("=== Scenario 1: Stream Record + Graph Wait External ===");
    aclrtStream graph, outside;
    aclrtEvent event;
    aclmdlRI model;
    Buffers b;
    MUST(aclrtCreateStream(&graph));
    MUST(aclrtCreateStream(&outside));
    MUST(aclrtCreateEventExWithFlag(&event, ACL_EVENT_SYNC));
    if (b.Make() != 0) return -1;
    MUST(aclmdlRICaptureBegin(graph, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    MUST(aclrtStreamWaitEventWithFlag(graph, event, 0U, ACL_EVENT_WAIT_EXTERNAL));
    MUST(aclrtMemcpyAsync(b.dst, kBytes, b.src, kBytes, ACL_MEMCPY_DEVICE_TO_DEVICE, graph));
    MUST(aclmdlRICaptureEnd(graph, &model));
    MUST(aclrtRecordEvent(event, outside));
    MUST(aclmdlRIExecuteAsync(model, graph));
    MUST(aclrtSynchronizeStream(graph));
    MUST(aclrtMemcpy(b.host.data(), kBytes, b.dst, kBytes, ACL_MEMCPY_DEVICE_TO_HOST));
    bool ok = Matches(b.host);
    MUST(aclmdlRIDestroy(model));
    MUST(aclrtDestroyEvent(event));
    MUST(aclrtDestroyStream(graph));
    MUST(aclrtDestroyStream(outside));
    return ok ? b.Free() : -1;
}

// the graph records EXTERNAL; a plain wait issued after the launch waits for that replay's record
static int GraphRecordOutsideWait()
{
    INFO("=== Scenario 2: Graph Record External + Stream Wait ===");
    aclrtStream graph, outside;
    aclrtEvent event;
    aclmdlRI model;
    Buffers b;
    MUST(aclrtCreateStream(&graph));
    MUST(aclrtCreateStream(&outside));
    MUST(aclrtCreateEventExWithFlag(&event, ACL_EVENT_SYNC));
    if (b.Make() != 0) return -1;
    MUST(aclmdlRICaptureBegin(graph, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    MUST(aclrtMemcpyAsync(b.dst, kBytes, b.src, kBytes, ACL_MEMCPY_DEVICE_TO_DEVICE, graph));
    MUST(aclrtRecordEventWithFlag(event, graph, ACL_EVENT_RECORD_EXTERNAL));
    MUST(aclmdlRICaptureEnd(graph, &model));
    MUST(aclmdlRIExecuteAsync(model, graph));
    MUST(aclrtStreamWaitEvent(outside, event));
    MUST(aclrtMemcpyAsync(b.host.data(), kBytes, b.dst, kBytes, ACL_MEMCPY_DEVICE_TO_HOST, outside));  // pageable
    MUST(aclrtSynchronizeStream(outside));
    bool ok = Matches(b.host);
    MUST(aclrtSynchronizeStream(graph));
    MUST(aclmdlRIDestroy(model));
    MUST(aclrtDestroyEvent(event));
    MUST(aclrtDestroyStream(graph));
    MUST(aclrtDestroyStream(outside));
    return ok ? b.Free() : -1;
}

// graph 1 copies src -> mid and records EXTERNAL; graph 2, launched after it, waits EXTERNAL and copies mid -> dst
static int GraphRecordGraphWait()
{
    INFO("=== Scenario 3: Graph1 Record External + Graph2 Wait External ===");
    aclrtStream first, second;
    aclrtEvent event;
    aclmdlRI model1, model2;
    Buffers b;
    void *mid = nullptr;
    MUST(aclrtCreateStream(&first));
    MUST(aclrtCreateStream(&second));
    MUST(aclrtCreateEventExWithFlag(&event, ACL_EVENT_SYNC));
    if (b.Make() != 0) return -1;
    MUST(aclrtMalloc(&mid, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    MUST(aclmdlRICaptureBegin(first, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    MUST(aclrtMemcpyAsync(mid, kBytes, b.src, kBytes, ACL_MEMCPY_DEVICE_TO_DEVICE, first));
    MUST(aclrtRecordEventWithFlag(event, first, ACL_EVENT_RECORD_EXTERNAL));
    MUST(aclmdlRICaptureEnd(first, &model1));
    MUST(aclmdlRICaptureBegin(second, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    MUST(aclrtStreamWaitEventWithFlag(second, event, 0U, ACL_EVENT_WAIT_EXTERNAL));
    MUST(aclrtMemcpyAsync(b.dst, kBytes, mid, kBytes, ACL_MEMCPY_DEVICE_TO_DEVICE, second));
    MUST(aclmdlRICaptureEnd(second, &model2));
    MUST(aclmdlRIExecuteAsync(model1, first));
    MUST(aclmdlRIExecuteAsync(model2, second));
    MUST(aclrtSynchronizeStream(second));
    MUST(aclrtSynchronizeStream(first));
    MUST(aclrtMemcpy(b.host.data(), kBytes, b.dst, kBytes, ACL_MEMCPY_DEVICE_TO_HOST));
    bool ok = Matches(b.host);
    MUST(aclmdlRIDestroy(model1));
    MUST(aclmdlRIDestroy(model2));
    MUST(aclrtDestroyEvent(event));
    MUST(aclrtFree(mid));
    MUST(aclrtDestroyStream(first));
    MUST(aclrtDestroyStream(second));
    return ok ? b.Free() : -1;
}

static std::vector<int> calls;  // the userData values the destroy callbacks got, in call order

static void OnDestroyA(void *userData) { calls.push_back(*static_cast<int *>(userData)); }
static void OnDestroyB(void *userData) { calls.push_back(userData == nullptr ? -1 : *static_cast<int *>(userData)); }

static int NamesIdsCallbacks()
{
    aclrtStream s;
    aclmdlRI model;
    void *word = nullptr;
    MUST(aclrtCreateStream(&s));
    MUST(aclrtMalloc(&word, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    MUST(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    MUST(aclrtMemsetAsync(word, 64, 1, 64, s));
    MUST(aclmdlRICaptureEnd(s, &model));

    char name[32];
    std::memset(name, 'z', sizeof name);
    MUST(aclmdlRIGetName(model, sizeof name, name));
    std::printf("name-unset [%s]\n", name);
    MUST(aclmdlRISetName(model, "decoder"));
    MUST(aclmdlRIGetName(model, sizeof name, name));
    std::printf("name [%s]\n", name);
    std::memset(name, 'z', sizeof name);
    std::printf("name-small %d\n", aclmdlRIGetName(model, 7, name));
    std::printf("name-small-zeroed %d\n", name[0] == 0 && name[6] == 0 && name[7] == 'z');
    std::printf("name-zero %d\n", aclmdlRIGetName(model, 0, name));
    std::printf("name-null %d\n", aclmdlRIGetName(model, 8, nullptr));
    std::printf("set-name-null %d\n", aclmdlRISetName(model, nullptr));
    uint32_t id = 12345;
    MUST(aclmdlRIGetId(model, &id));
    std::printf("id %u\n", id);
    std::printf("id-null %d\n", aclmdlRIGetId(model, nullptr));
    MUST(aclmdlRIAbort(model));  // not running: nothing to stop

    static int first = 11, second = 22;
    MUST(aclmdlRIDestroyRegisterCallback(model, OnDestroyA, &first));
    MUST(aclmdlRIDestroyRegisterCallback(model, OnDestroyB, &second));
    std::printf("register-again %d\n", aclmdlRIDestroyRegisterCallback(model, OnDestroyA, &second));
    std::printf("register-null %d\n", aclmdlRIDestroyRegisterCallback(model, nullptr, &second));
    MUST(aclmdlRIDestroyUnregisterCallback(model, OnDestroyB));
    std::printf("unregister-again %d\n", aclmdlRIDestroyUnregisterCallback(model, OnDestroyB));
    MUST(aclmdlRIDestroyRegisterCallback(model, OnDestroyB, nullptr));
    MUST(aclmdlRIExecuteAsync(model, s));
    MUST(aclrtSynchronizeStream(s));
    std::printf("calls-before-destroy %zu\n", calls.size());
    MUST(aclmdlRIDestroy(model));
    std::printf("calls %zu\n", calls.size());
    int a = 0, b = 0;
    for (int v : calls) (v == 11 ? a : b) += 1;
    // by function address, as the runtime orders them
    bool ordered = calls.size() == 2 &&
                   (reinterpret_cast<uintptr_t>(&OnDestroyA) < reinterpret_cast<uintptr_t>(&OnDestroyB)
                        ? (calls[0] == 11 && calls[1] == -1)
                        : (calls[0] == -1 && calls[1] == 11));
    std::printf("callbacks %d %d ordered %d\n", a, b, ordered);
    std::printf("id-after-destroy %d\n", aclmdlRIGetId(model, &id));
    MUST(aclrtFree(word));
    MUST(aclrtDestroyStream(s));
    return 0;
}

int main()
{
    MUST(aclInit(nullptr));
    MUST(aclrtSetDevice(0));
    OutsideRecordGraphWait();
    GraphRecordOutsideWait();
    GraphRecordGraphWait();
    int rest = NamesIdsCallbacks();
    MUST(aclrtResetDevice(0));
    MUST(aclFinalize());
    return rest;
}
