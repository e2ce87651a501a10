// Multi-threaded use of one device: worker threads launch aclnnAdd/aclnnMul eagerly on their own streams while another thread captures and replays a model in ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL mode.
//
//   each worker t (eager, 6 iterations):  z = a + alpha_t * b  (aclnnAdd);  w = z * b  (aclnnMul)   alpha_t = 1.0 + 0.5 t
//   the capture thread (captured once, replayed 4 times with new inputs):  the same work with alpha = 2.5
//
// Every thread calls aclrtSetDevice itself (the runtime wants it per thread; it is refcounted and paired with
// aclrtResetDevice) and owns its stream. The workers copy with the synchronous aclrtMemcpy, an "unsafe" call:
// in GLOBAL mode a capture anywhere in the process would refuse it (107030); in THREAD_LOCAL mode only the
// capturing thread is restricted. To show it, one iteration of every worker runs while the capture is open (the
// threads meet there), the capture ends after them. Every result is checked against a float64 reference.
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
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

constexpr int32_t kDevice = 0;
constexpr int kWorkers = 3;
constexpr int kIterations = 6;
constexpr int kIterationDuringCapture = 2;
constexpr int kReplays = 4;
const std::vector<int64_t> kShape = {4, 2};
const auto kTimeout = std::chrono::seconds(30);

std::atomic<int> failures{0};

// The threads meet while the capture is open: the capture thread opens it, every worker runs one iteration,
// then the capture thread goes on.
struct Meeting {
    std::mutex mutex;
    std::condition_variable changed;
    bool capturing = false;
    int workersDone = 0;
} meeting;

// z = a + alpha * b;  w = z * b, on `stream`; a launch consumes its executor, so each call takes new ones.
struct AddMul {
    void *a_d = nullptr, *b_d = nullptr, *z_d = nullptr, *w_d = nullptr;
    aclTensor *a = nullptr, *b = nullptr, *z = nullptr, *w = nullptr;
    aclScalar *alpha = nullptr;
    float alphaValue = 0.0f;
    std::vector<void *> workspaces;

    explicit AddMul(float value) : alphaValue(value)
    {
        CreateAclTensor(kShape, &a_d, aclDataType::ACL_FLOAT, &a);
        CreateAclTensor(kShape, &b_d, aclDataType::ACL_FLOAT, &b);
        CreateAclTensor(kShape, &z_d, aclDataType::ACL_FLOAT, &z);
        CreateAclTensor(kShape, &w_d, aclDataType::ACL_FLOAT, &w);
        alpha = aclCreateScalar(&alphaValue, aclDataType::ACL_FLOAT);
        CHECK_NOT_NULL(alpha);
    }

    void Launch(aclrtStream stream)
    {
        uint64_t wsAdd = 0, wsMul = 0;
        aclOpExecutor *exAdd = nullptr, *exMul = nullptr;
        CHECK(aclnnAddGetWorkspaceSize(a, b, alpha, z, &wsAdd, &exAdd));
        CHECK(aclnnMulGetWorkspaceSize(z, b, w, &wsMul, &exMul));
        void *addrAdd = Workspace(wsAdd);
        void *addrMul = Workspace(wsMul);
        CHECK(aclnnAdd(addrAdd, wsAdd, exAdd, stream));
        CHECK(aclnnMul(addrMul, wsMul, exMul, stream));
    }

    void *Workspace(uint64_t size)
    {
        void *addr = nullptr;
        if (size > 0) {
            CHECK(aclrtMalloc(&addr, size, ACL_MEM_MALLOC_HUGE_FIRST));
            workspaces.push_back(addr);
        }
        return addr;
    }

    std::vector<double> Reference(const float *aValues, const float *bValues, int64_t n) const
    {
        std::vector<double> expected(n);
        for (int64_t j = 0; j < n; j++) {
            double av = aValues[j];
            double bv = bValues[j];
            expected[j] = (av + static_cast<double>(alphaValue) * bv) * bv;
        }
        return expected;
    }

    ~AddMul()
    {
        for (aclTensor *tensor : {a, b, z, w}) {
            CHECK(aclDestroyTensor(tensor));
        }
        CHECK(aclDestroyScalar(alpha));
        for (void *addr : {a_d, b_d, z_d, w_d}) {
            CHECK(aclrtFree(addr));
        }
        for (void *addr : workspaces) {
            CHECK(aclrtFree(addr));
        }
    }
};

void Worker(int t)
{
    // 每个线程需各自指定计算设备
    CHECK(aclrtSetDevice(kDevice));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    const int64_t n = GetShapeSize(kShape);
    const size_t bytes = n * sizeof(float);
    std::vector<float> aHost(n), bHost(n), wHost(n);
    uint32_t rng = 1000u + 17u * static_cast<uint32_t>(t);
    {
        AddMul work(1.0f + 0.5f * static_cast<float>(t));
        for (int i = 0; i < kIterations; i++) {
            bool duringCapture = (i == kIterationDuringCapture);
            if (duringCapture) {
                std::unique_lock<std::mutex> lock(meeting.mutex);
                if (!meeting.changed.wait_for(lock, kTimeout, [] { return meeting.capturing; })) {
                    ACL_ERR("worker %d: the capture did not begin within 30 s", t);
                    exit(EXIT_FAILURE);
                }
            }
            for (int64_t j = 0; j < n; j++) {
                aHost[j] = NextRandom(rng);
                bHost[j] = NextRandom(rng);
            }
            // synchronous copies: refused in every thread while a GLOBAL-mode capture is open, allowed here
            CHECK(aclrtMemcpy(work.a_d, bytes, aHost.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
            CHECK(aclrtMemcpy(work.b_d, bytes, bHost.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
            work.Launch(stream);
            CHECK(aclrtSynchronizeStream(stream));
            CHECK(aclrtMemcpy(wHost.data(), bytes, work.w_d, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
            bool ok = Matches(wHost.data(), work.Reference(aHost.data(), bHost.data(), n), i);
            ACL_LOG("worker %d, iteration %d%s: %f %f ... %f %s", t, i, duringCapture ? " (during the capture)" : "",
                    wHost[0], wHost[1], wHost[n - 1], ok ? "matches float64" : "DIFFERS");
            if (!ok) {
                failures++;
            }
            if (duringCapture) {
                std::lock_guard<std::mutex> lock(meeting.mutex);
                meeting.workersDone++;
                meeting.changed.notify_all();
            }
        }
    }
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(kDevice));
}

void Capturer()
{
    // 每个线程需各自指定计算设备
    CHECK(aclrtSetDevice(kDevice));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    const int64_t n = GetShapeSize(kShape);
    const size_t bytes = n * sizeof(float);
    float *a_h = nullptr;
    float *b_h = nullptr;
    float *w_h = nullptr;
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&a_h), bytes));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&b_h), bytes));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&w_h), bytes));
    uint32_t rng = 31337u;
    {
        AddMul work(2.5f);
        // ========开始捕获任务（THREAD_LOCAL：只限制本线程的非安全调用）========
        CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
        ACL_LOG("capture thread: capture began (ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL)");
        {
            std::unique_lock<std::mutex> lock(meeting.mutex);
            meeting.capturing = true;
            meeting.changed.notify_all();
            if (!meeting.changed.wait_for(lock, kTimeout, [] { return meeting.workersDone == kWorkers; })) {
                ACL_ERR("capture thread: the workers did not finish their iteration within 30 s");
                exit(EXIT_FAILURE);
            }
        }
        ACL_LOG("capture thread: %d workers ran an iteration while the capture was open", kWorkers);
        CHECK(aclrtMemcpyAsync(work.a_d, bytes, a_h, bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream));
        CHECK(aclrtMemcpyAsync(work.b_d, bytes, b_h, bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream));
        work.Launch(stream);
        CHECK(aclrtMemcpyAsync(w_h, bytes, work.w_d, bytes, ACL_MEMCPY_DEVICE_TO_HOST, stream));
        aclmdlRI modelRI = nullptr;
        CHECK(aclmdlRICaptureEnd(stream, &modelRI));
        // ========结束捕获任务========
        for (int i = 0; i < kReplays; i++) {
            // new inputs: the captured copies read the pinned buffers when the model runs
            for (int64_t j = 0; j < n; j++) {
                a_h[j] = NextRandom(rng);
                b_h[j] = NextRandom(rng);
                w_h[j] = 0.0f;
            }
            CHECK(aclmdlRIExecuteAsync(modelRI, stream));
            CHECK(aclrtSynchronizeStream(stream));
            bool ok = Matches(w_h, work.Reference(a_h, b_h, n), i);
            ACL_LOG("capture thread, replay %d: %f %f ... %f %s", i, w_h[0], w_h[1], w_h[n - 1],
                    ok ? "matches float64" : "DIFFERS");
            if (!ok) {
                failures++;
            }
        }
        CHECK(aclmdlRIDestroy(modelRI));
    }
    CHECK(aclrtFreeHost(a_h));
    CHECK(aclrtFreeHost(b_h));
    CHECK(aclrtFreeHost(w_h));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(kDevice));
}
}  // namespace

int main()
{
    setvbuf(stdout, nullptr, _IOLBF, 0);  // several threads print: keep each line whole
    // 初始化
    CHECK(aclInit(nullptr));
    // 指定计算设备
    CHECK(aclrtSetDevice(kDevice));
    std::vector<std::thread> threads;
    threads.emplace_back(Capturer);
    for (int t = 0; t < kWorkers; t++) {
        threads.emplace_back(Worker, t);
    }
    for (auto &thread : threads) {
        thread.join();
    }
    // 释放计算设备的资源
    CHECK(aclrtResetDevice(kDevice));
    // 去初始化
    CHECK(aclFinalize());
    if (failures.load() != 0) {
        ACL_ERR("multi_thread: %d results differ from the float64 reference", failures.load());
        return EXIT_FAILURE;
    }
    ACL_LOG("multi_thread passed");
    return EXIT_SUCCESS;
}
