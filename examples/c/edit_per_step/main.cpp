// A decode-style loop that changes one kernel of a captured model at every step by editing the model
// (aclmdlRITaskGetParams / aclmdlRITaskSetParams / aclmdlRIUpdate) instead of a task group.
//
//   model:  y = x * scale      (aclnnMuls: the task edited at each step)
//           y = y + bias       (aclnnAdds, fixed)
//
// The parameters a step needs come from a "bank" model captured once with one aclnnMuls per scale and never
// executed: at step i the bank's i-th kernel task gives its parameters (aclmdlRITaskGetParams), which are set on
// the model's scale task (aclmdlRITaskSetParams); aclmdlRIUpdate applies the edit, then the model runs. Nothing
// here depends on how a kernel's arguments are laid out. Each result is checked against a float64 reference.
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
#define CHECK_NOT_NULL(expr)                                                   \
    do {                                                                       \
        if ((expr) == nullptr) {                                               \
            ACL_ERR("%s returned NULL (%s:%d)", #expr, __FILE__, __LINE__);    \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

namespace {
constexpr int64_t kN = 8;
constexpr double kRtol = 1e-5;  // float32 results against a float64 reference
constexpr double kAtol = 1e-6;
const std::vector<float> kScales = {0.5f, 1.5f, -2.0f, 3.0f};
constexpr float kBias = 0.25f;

aclTensor *Tensor(void *deviceAddr)
{
    std::vector<int64_t> shape = {kN};
    std::vector<int64_t> strides = {1};
    aclTensor *tensor = aclCreateTensor(shape.data(), 1, ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, shape.data(), 1,
                                        deviceAddr);
    CHECK_NOT_NULL(tensor);
    return tensor;
}

// Launch y = x * scale on `stream` (phase 1 here, phase 2 on the stream; no workspace for these operators).
void Muls(aclTensor *x, float scale, aclTensor *y, aclrtStream stream)
{
    aclScalar *value = aclCreateScalar(&scale, ACL_FLOAT);
    CHECK_NOT_NULL(value);
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    CHECK(aclnnMulsGetWorkspaceSize(x, value, y, &workspaceSize, &executor));
    CHECK(aclnnMuls(nullptr, workspaceSize, executor, stream));
    aclDestroyScalar(value);
}

void Adds(aclTensor *y, float bias, aclrtStream stream)
{
    float one = 1.0f;
    aclScalar *value = aclCreateScalar(&bias, ACL_FLOAT);
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    CHECK(aclnnAddsGetWorkspaceSize(y, value, alpha, y, &workspaceSize, &executor));
    CHECK(aclnnAdds(nullptr, workspaceSize, executor, stream));
    aclDestroyScalar(value);
    aclDestroyScalar(alpha);
}

// The kernel tasks of a model captured on one stream, in capture order.
std::vector<aclmdlRITask> TasksOf(aclmdlRI model)
{
    uint32_t numStreams = 0;
    CHECK(aclmdlRIGetStreams(model, nullptr, &numStreams));
    std::vector<aclrtStream> streams(numStreams);
    CHECK(aclmdlRIGetStreams(model, streams.data(), &numStreams));
    uint32_t numTasks = 0;
    CHECK(aclmdlRIGetTasksByStream(streams[0], nullptr, &numTasks));
    std::vector<aclmdlRITask> tasks(numTasks);
    CHECK(aclmdlRIGetTasksByStream(streams[0], tasks.data(), &numTasks));
    std::vector<aclmdlRITask> kernels;
    for (aclmdlRITask task : tasks) {
        aclmdlRITaskType type;
        CHECK(aclmdlRITaskGetType(task, &type));
        if (type == ACL_MODEL_RI_TASK_KERNEL) {
            kernels.push_back(task);
        }
    }
    return kernels;
}
}  // namespace

int main()
{
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));

    std::vector<float> x(kN);
    uint32_t state = 2463534242u;  // deterministic pseudo-random inputs (xorshift32)
    for (auto &value : x) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        value = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) - 0.5f;
    }
    void *xDev = nullptr;
    void *yDev = nullptr;
    const size_t bytes = kN * sizeof(float);
    CHECK(aclrtMalloc(&xDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&yDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(xDev, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    aclTensor *xt = Tensor(xDev);
    aclTensor *yt = Tensor(yDev);

    // the model, and the bank of the parameters each step uses
    aclmdlRI model = nullptr;
    CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    Muls(xt, kScales[0], yt, stream);
    Adds(yt, kBias, stream);
    CHECK(aclmdlRICaptureEnd(stream, &model));
    aclmdlRI bank = nullptr;
    CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    for (float scale : kScales) {
        Muls(xt, scale, yt, stream);
    }
    CHECK(aclmdlRICaptureEnd(stream, &bank));
    aclmdlRITask scaleTask = TasksOf(model).at(0);
    std::vector<aclmdlRITask> bankTasks = TasksOf(bank);

    bool ok = bankTasks.size() == kScales.size();
    std::vector<float> y(kN);
    for (size_t step = 0; ok && step < kScales.size(); step++) {
        aclmdlRITaskParams params;
        std::memset(&params, 0, sizeof(params));
        CHECK(aclmdlRITaskGetParams(bankTasks[step], &params));
        params.taskGrp = nullptr;  // SetParams takes no task group (the bank's kernel is in none anyway)
        CHECK(aclmdlRITaskSetParams(scaleTask, &params));
        CHECK(aclmdlRIUpdate(model));
        CHECK(aclmdlRIExecuteAsync(model, stream));
        CHECK(aclrtSynchronizeStream(stream));
        CHECK(aclrtMemcpy(y.data(), bytes, yDev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        bool matches = true;
        for (int64_t j = 0; j < kN; j++) {
            double expected = static_cast<double>(x[j]) * kScales[step] + kBias;
            if (std::fabs(y[j] - expected) > kAtol + kRtol * std::fabs(expected)) {
                ACL_ERR("step %zu: y[%ld] = %.7f, expected %.7f", step, static_cast<long>(j), y[j], expected);
                matches = false;
            }
        }
        ACL_LOG("step %zu: scale %.2f set with aclmdlRITaskSetParams + aclmdlRIUpdate, matches float64: %s", step,
                kScales[step], matches ? "yes" : "no");
        ok = ok && matches;
    }

    CHECK(aclmdlRIDestroy(bank));
    CHECK(aclmdlRIDestroy(model));
    aclDestroyTensor(xt);
    aclDestroyTensor(yt);
    CHECK(aclrtFree(xDev));
    CHECK(aclrtFree(yDev));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    if (!ok) {
        ACL_ERR("edit_per_step failed");
        return EXIT_FAILURE;
    }
    ACL_LOG("edit_per_step passed");
    return EXIT_SUCCESS;
}
