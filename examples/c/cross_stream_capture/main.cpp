// Cross-stream capture: a fork/join over three streams through events, captured once from stream1 and replayed with new inputs, each replay equal to the same work run eagerly.
//
//   stream1:  copy a, b to the device;  record forkEvent
//   stream2:  wait forkEvent;  x = a + 1.5 * b   (aclnnAdd);  record joinEvent2
//   stream3:  wait forkEvent;  y = a * b         (aclnnMul);  record joinEvent3
//   stream1:  wait joinEvent2, joinEvent3;  z = x + 2.0 * y  (aclnnAdd);  copy z to the host
//
// The events come from aclrtCreateEventExWithFlag(ACL_EVENT_SYNC): the kind whose wait pulls another stream into
// a capture (an EXTERNAL event cannot). Every replay must equal the eager result bit for bit and match a float64
// reference.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_mul.h"

#define ACL_LOG(fmt, args...) fprintf(stdout, "[INFO] " fmt "\n", ##args)
#define ACL_ERR(fmt, args...) fprintf(stderr, "[ERROR] " fmt "\n", ##args)

// Every return code is checked: the failing call, its code and the runtime's message, then exit.
#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        auto ret_ = (call);                                                                              \
        if (ret_ != 0) {                                                                                 \
            const char *msg_ = aclGetRecentErrMsg();                                                     \
            ACL_ERR("%s failed (%s:%d): error %d: %s", #call, __FILE__, __LINE__, static_cast<int>(ret_), \
                    msg_ != nullptr ? msg_ : "(no message)");                                            \
            exit(EXIT_FAILURE);                                                                          \
        }                                                                                                \
    } while (0)
#define CHECK_NOT_NULL(expr)                                                                \
    do {                                                                                    \
        if ((expr) == nullptr) {                                                            \
            const char *msg_ = aclGetRecentErrMsg();                                        \
            ACL_ERR("%s returned NULL (%s:%d): %s", #expr, __FILE__, __LINE__,              \
                    msg_ != nullptr ? msg_ : "(no message)");                               \
            exit(EXIT_FAILURE);                                                             \
        }                                                                                   \
    } while (0)

namespace {
constexpr double kRtol = 1e-5;  // float32 results against a float64 reference
constexpr double kAtol = 1e-6;

int64_t GetShapeSize(const std::vector<int64_t> &shape)
{
    int64_t shapeSize = 1;
    for (auto i : shape) {
        shapeSize *= i;
    }
    return shapeSize;
}

void CreateAclTensor(const std::vector<int64_t> &shape, void **deviceAddr, aclDataType dataType, aclTensor **tensor)
{
    auto size = GetShapeSize(shape) * sizeof(float);
    // 申请Device侧内存
    CHECK(aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST));
    // 计算连续tensor的stride
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
        strides[i] = shape[i + 1] * strides[i + 1];
    }
    // 调用aclCreateTensor接口创建aclTensor
    *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0, aclFormat::ACL_FORMAT_ND,
                              shape.data(), shape.size(), *deviceAddr);
    CHECK_NOT_NULL(*tensor);
}

// Deterministic pseudo-random floats in [0.5, 1.5) (xorshift32).
float NextRandom(uint32_t &state)
{
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return 0.5f + static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
}

bool Matches(const float *got, const std::vector<double> &expected, int loop)
{
    bool ok = true;
    for (size_t j = 0; j < expected.size(); j++) {
        if (std::fabs(static_cast<double>(got[j]) - expected[j]) > kAtol + kRtol * std::fabs(expected[j])) {
            ACL_ERR("loop %d: out[%zu] = %.7f, expected %.7f", loop, j, got[j], expected[j]);
            ok = false;
        }
    }
    return ok;
}

struct ForkJoin {
    int64_t size;
    void *a_d, *b_d, *z_d;
    aclTensor *a, *b, *x, *y, *z;
    aclScalar *alphaX, *alphaZ;
    float *a_h, *b_h, *z_h;
    aclrtStream stream1, stream2, stream3;
    aclrtEvent forkEvent, joinEvent2, joinEvent3;
    std::vector<void *> workspaces;

    void *Workspace(uint64_t workspaceSize)
    {
        void *addr = nullptr;
        if (workspaceSize > 0) {
            CHECK(aclrtMalloc(&addr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST));
            workspaces.push_back(addr);
        }
        return addr;
    }

    // The fork/join work; each call takes new executors (a launch consumes its executor).
    void Issue()
    {
        uint64_t wsX = 0, wsY = 0, wsZ = 0;
        aclOpExecutor *exX = nullptr, *exY = nullptr, *exZ = nullptr;
        CHECK(aclnnAddGetWorkspaceSize(a, b, alphaX, x, &wsX, &exX));  // x = a + 1.5 * b
        CHECK(aclnnMulGetWorkspaceSize(a, b, y, &wsY, &exY));          // y = a * b
        CHECK(aclnnAddGetWorkspaceSize(x, y, alphaZ, z, &wsZ, &exZ));  // z = x + 2.0 * y
        void *addrX = Workspace(wsX);
        void *addrY = Workspace(wsY);
        void *addrZ = Workspace(wsZ);
        uint64_t bytes = size * sizeof(float);
        CHECK(aclrtMemcpyAsync(a_d, bytes, a_h, bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream1));
        CHECK(aclrtMemcpyAsync(b_d, bytes, b_h, bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream1));
        // fork：stream2、stream3等待stream1上的forkEvent (during a capture this pulls them into the model)
        CHECK(aclrtRecordEvent(forkEvent, stream1));
        CHECK(aclrtStreamWaitEvent(stream2, forkEvent));
        CHECK(aclrtStreamWaitEvent(stream3, forkEvent));
        CHECK(aclnnAdd(addrX, wsX, exX, stream2));
        CHECK(aclnnMul(addrY, wsY, exY, stream3));
        // join：stream2、stream3的最后一个任务是stream1所等待的Event Record
        CHECK(aclrtRecordEvent(joinEvent2, stream2));
        CHECK(aclrtRecordEvent(joinEvent3, stream3));
        CHECK(aclrtStreamWaitEvent(stream1, joinEvent2));
        CHECK(aclrtStreamWaitEvent(stream1, joinEvent3));
        CHECK(aclnnAdd(addrZ, wsZ, exZ, stream1));
        CHECK(aclrtMemcpyAsync(z_h, bytes, z_d, bytes, ACL_MEMCPY_DEVICE_TO_HOST, stream1));
    }
};
}  // namespace

int main()
{
    int32_t devID = 0;
    const int replays = 4;
    std::vector<int64_t> shape = {4, 2};
    ForkJoin w{};
    w.size = GetShapeSize(shape);
    auto size = w.size;
    float alphaXValue = 1.5f;
    float alphaZValue = 2.0f;
    void *x_d = nullptr;
    void *y_d = nullptr;

    // 初始化
    CHECK(aclInit(nullptr));
    // 指定计算设备
    CHECK(aclrtSetDevice(devID));
    CreateAclTensor(shape, &w.a_d, aclDataType::ACL_FLOAT, &w.a);
    CreateAclTensor(shape, &w.b_d, aclDataType::ACL_FLOAT, &w.b);
    CreateAclTensor(shape, &x_d, aclDataType::ACL_FLOAT, &w.x);
    CreateAclTensor(shape, &y_d, aclDataType::ACL_FLOAT, &w.y);
    CreateAclTensor(shape, &w.z_d, aclDataType::ACL_FLOAT, &w.z);
    w.alphaX = aclCreateScalar(&alphaXValue, aclDataType::ACL_FLOAT);
    CHECK_NOT_NULL(w.alphaX);
    w.alphaZ = aclCreateScalar(&alphaZValue, aclDataType::ACL_FLOAT);
    CHECK_NOT_NULL(w.alphaZ);
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&w.a_h), size * sizeof(float)));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&w.b_h), size * sizeof(float)));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&w.z_h), size * sizeof(float)));
    uint32_t rng = 7u;
    for (int64_t i = 0; i < size; i++) {
        w.a_h[i] = NextRandom(rng);
        w.b_h[i] = NextRandom(rng);
        w.z_h[i] = 0.0f;
    }

    CHECK(aclrtCreateStream(&w.stream1));
    CHECK(aclrtCreateStream(&w.stream2));
    CHECK(aclrtCreateStream(&w.stream3));
    // 跨Stream捕获需使用aclrtCreateEventExWithFlag接口创建的ACL_EVENT_SYNC类型Event
    CHECK(aclrtCreateEventExWithFlag(&w.forkEvent, ACL_EVENT_SYNC));
    CHECK(aclrtCreateEventExWithFlag(&w.joinEvent2, ACL_EVENT_SYNC));
    CHECK(aclrtCreateEventExWithFlag(&w.joinEvent3, ACL_EVENT_SYNC));

    // ========开始捕获任务========
    CHECK(aclmdlRICaptureBegin(w.stream1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    w.Issue();
    aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    aclmdlRI capturing = nullptr;
    CHECK(aclmdlRICaptureGetInfo(w.stream2, &status, &capturing));
    // ACTIVE (1): stream2 was pulled into the capture by forkEvent
    ACL_LOG("stream2 capture status: %d", static_cast<int>(status));
    if (status != ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE) {
        ACL_ERR("stream2 is not capturing (status %d)", static_cast<int>(status));
        return EXIT_FAILURE;
    }
    // ========结束捕获任务========
    aclmdlRI modelRI = nullptr;
    CHECK(aclmdlRICaptureEnd(w.stream1, &modelRI));

    int failures = 0;
    std::vector<float> eager(size);
    for (int i = 0; i < replays; i++) {
        // new inputs each time: the captured host-to-device copies read the pinned buffers when the model runs
        for (int64_t j = 0; j < size; j++) {
            w.a_h[j] = NextRandom(rng);
            w.b_h[j] = NextRandom(rng);
            w.z_h[j] = 0.0f;
        }
        // eager execution of the same work
        w.Issue();
        CHECK(aclrtSynchronizeStream(w.stream1));
        std::memcpy(eager.data(), w.z_h, size * sizeof(float));
        // replay of the captured model
        for (int64_t j = 0; j < size; j++) {
            w.z_h[j] = 0.0f;
        }
        ACL_LOG("execute model, loop: %d", i);
        CHECK(aclmdlRIExecuteAsync(modelRI, w.stream1));
        CHECK(aclrtSynchronizeStream(w.stream1));
        const float *z = w.z_h;
        ACL_LOG("%f %f %f %f %f %f %f %f", z[0], z[1], z[2], z[3], z[4], z[5], z[6], z[7]);
        std::vector<double> expected(size);
        for (int64_t j = 0; j < size; j++) {
            double a = w.a_h[j];
            double b = w.b_h[j];
            expected[j] = (a + static_cast<double>(alphaXValue) * b) + static_cast<double>(alphaZValue) * (a * b);
        }
        bool sameAsEager = std::memcmp(eager.data(), z, size * sizeof(float)) == 0;
        if (!sameAsEager) {
            ACL_ERR("loop %d: the replay differs from the eager execution", i);
            for (int64_t j = 0; j < size; j++) {
                ACL_ERR("  z[%ld] = %.7f, eager %.7f", static_cast<long>(j), z[j], eager[j]);
            }
        }
        if (Matches(z, expected, i) && sameAsEager) {
            ACL_LOG("loop %d equals eager execution and matches float64", i);
        } else {
            failures++;
        }
    }

    // 释放资源
    CHECK(aclmdlRIDestroy(modelRI));
    for (aclTensor *tensor : {w.a, w.b, w.x, w.y, w.z}) {
        CHECK(aclDestroyTensor(tensor));
    }
    CHECK(aclDestroyScalar(w.alphaX));
    CHECK(aclDestroyScalar(w.alphaZ));
    for (void *addr : {w.a_d, w.b_d, x_d, y_d, w.z_d}) {
        CHECK(aclrtFree(addr));
    }
    for (void *addr : w.workspaces) {
        CHECK(aclrtFree(addr));
    }
    CHECK(aclrtFreeHost(w.a_h));
    CHECK(aclrtFreeHost(w.b_h));
    CHECK(aclrtFreeHost(w.z_h));
    CHECK(aclrtDestroyStream(w.stream1));
    CHECK(aclrtDestroyStream(w.stream2));
    CHECK(aclrtDestroyStream(w.stream3));
    CHECK(aclrtDestroyEvent(w.forkEvent));
    CHECK(aclrtDestroyEvent(w.joinEvent2));
    CHECK(aclrtDestroyEvent(w.joinEvent3));
    // 释放计算设备的资源
    CHECK(aclrtResetDevice(devID));
    // 去初始化
    CHECK(aclFinalize());
    if (failures != 0) {
        ACL_ERR("cross_stream_capture: %d of %d replays failed", failures, replays);
        return EXIT_FAILURE;
    }
    ACL_LOG("cross_stream_capture passed");
    return EXIT_SUCCESS;
}
