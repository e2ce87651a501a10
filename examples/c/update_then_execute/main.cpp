// Task update "update first, then execute": the task group is rewritten on an update stream (synchronized), then the model runs with the new kernel.
//
//   outtmp = self + alpha * other          (captured, fixed: alpha = 1.1)
//   out    = outtmp + alpha_i * other      (the task group: alpha_i = 5.5, 1.1, 2.0, 5.5, 1.1, one per execution)
//
// No event is needed: the update (aclmdlRICaptureTaskUpdateBegin, aclnnAdd, aclmdlRICaptureTaskUpdateEnd) is
// finished on the update stream before the model is launched. Each output is checked against a float64 reference.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

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
}  // namespace

int main()
{
    int32_t devID = 0;
    std::vector<int64_t> shape = {4, 2};
    auto size = GetShapeSize(shape);
    float alphaValue = 1.1f;
    const std::vector<float> updateValues = {5.5f, 1.1f, 2.0f, 5.5f, 1.1f};  // alpha of the task group, per execution
    void *self_d = nullptr;
    void *other_d = nullptr;
    void *out_d = nullptr;
    void *outtmp_d = nullptr;
    aclTensor *self = nullptr;
    aclTensor *other = nullptr;
    aclTensor *out = nullptr;
    aclTensor *outtmp = nullptr;

    // 初始化
    CHECK(aclInit(nullptr));
    // 指定计算设备
    CHECK(aclrtSetDevice(devID));
    // 准备aclnnAdd算子的输入、输出参数
    CreateAclTensor(shape, &self_d, aclDataType::ACL_FLOAT, &self);
    CreateAclTensor(shape, &other_d, aclDataType::ACL_FLOAT, &other);
    CreateAclTensor(shape, &out_d, aclDataType::ACL_FLOAT, &out);
    CreateAclTensor(shape, &outtmp_d, aclDataType::ACL_FLOAT, &outtmp);
    aclScalar *alpha = aclCreateScalar(&alphaValue, aclDataType::ACL_FLOAT);
    CHECK_NOT_NULL(alpha);
    // outtmp = self + alpha * other
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    CHECK(aclnnAddGetWorkspaceSize(self, other, alpha, outtmp, &workspaceSize, &executor));
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        CHECK(aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST));
    }
    // 更新前：out = outtmp + alpha * other
    uint64_t workspaceSize1 = 0;
    aclOpExecutor *executor1 = nullptr;
    CHECK(aclnnAddGetWorkspaceSize(outtmp, other, alpha, out, &workspaceSize1, &executor1));
    void *workspaceAddr1 = nullptr;
    if (workspaceSize1 > 0) {
        CHECK(aclrtMalloc(&workspaceAddr1, workspaceSize1, ACL_MEM_MALLOC_HUGE_FIRST));
    }

    // 使用aclrtMallocHost申请锁页内存, filled with deterministic pseudo-random inputs
    float *self_h = nullptr;
    float *other_h = nullptr;
    float *out_h = nullptr;
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&self_h), size * sizeof(float)));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&other_h), size * sizeof(float)));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&out_h), size * sizeof(float)));
    uint32_t rng = 1234567u;
    for (int64_t i = 0; i < size; i++) {
        self_h[i] = NextRandom(rng) - 1.0f;  // [-0.5, 0.5)
        other_h[i] = NextRandom(rng);        // [0.5, 1.5)
        out_h[i] = 0.0f;
    }
    ACL_LOG("self:  %f %f %f %f %f %f %f %f", self_h[0], self_h[1], self_h[2], self_h[3], self_h[4], self_h[5],
            self_h[6], self_h[7]);
    ACL_LOG("other: %f %f %f %f %f %f %f %f", other_h[0], other_h[1], other_h[2], other_h[3], other_h[4], other_h[5],
            other_h[6], other_h[7]);

    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    // ========开始捕获任务========
    CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    CHECK(aclrtMemcpyAsync(self_d, size * sizeof(float), self_h, size * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE,
                           stream));
    CHECK(aclrtMemcpyAsync(other_d, size * sizeof(float), other_h, size * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE,
                           stream));
    CHECK(aclnnAdd(workspaceAddr, workspaceSize, executor, stream));
    // 标记要更新的任务
    aclrtTaskGrp handle = nullptr;
    CHECK(aclmdlRICaptureTaskGrpBegin(stream));
    CHECK(aclnnAdd(workspaceAddr1, workspaceSize1, executor1, stream));
    CHECK(aclmdlRICaptureTaskGrpEnd(stream, &handle));
    CHECK(aclrtMemcpyAsync(out_h, size * sizeof(float), out_d, size * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST,
                           stream));
    // ========结束捕获任务========
    aclmdlRI modelRI = nullptr;
    CHECK(aclmdlRICaptureEnd(stream, &modelRI));

    aclrtStream updateStream = nullptr;
    CHECK(aclrtCreateStream(&updateStream));

    int failures = 0;
    std::vector<aclScalar *> scalars;
    std::vector<void *> workspaces;
    for (size_t i = 0; i < updateValues.size(); i++) {
        // 每次更新都需调用第一段接口，获取新的aclOpExecutor (an executor is consumed by its launch)
        float value = updateValues[i];
        aclScalar *updatealpha = aclCreateScalar(&value, aclDataType::ACL_FLOAT);
        CHECK_NOT_NULL(updatealpha);
        scalars.push_back(updatealpha);
        uint64_t workspaceSize2 = 0;
        aclOpExecutor *executor2 = nullptr;
        CHECK(aclnnAddGetWorkspaceSize(outtmp, other, updatealpha, out, &workspaceSize2, &executor2));
        void *workspaceAddr2 = nullptr;
        if (workspaceSize2 > 0) {
            CHECK(aclrtMalloc(&workspaceAddr2, workspaceSize2, ACL_MEM_MALLOC_HUGE_FIRST));
            workspaces.push_back(workspaceAddr2);
        }
        // 先更新任务：在updateStream上下发，并等待更新完成
        CHECK(aclmdlRICaptureTaskUpdateBegin(updateStream, handle));
        CHECK(aclnnAdd(workspaceAddr2, workspaceSize2, executor2, updateStream));
        CHECK(aclmdlRICaptureTaskUpdateEnd(updateStream));
        CHECK(aclrtSynchronizeStream(updateStream));
        ACL_LOG("update alpha value of aclnnAdd to %.1f", value);
        // 再执行模型
        ACL_LOG("execute model, loop: %zu", i);
        CHECK(aclmdlRIExecuteAsync(modelRI, stream));
        CHECK(aclrtSynchronizeStream(stream));
        ACL_LOG("%f %f %f %f %f %f %f %f", out_h[0], out_h[1], out_h[2], out_h[3], out_h[4], out_h[5], out_h[6],
                out_h[7]);
        std::vector<double> expected(size);
        for (int64_t j = 0; j < size; j++) {
            double s = self_h[j];
            double o = other_h[j];
            expected[j] = (s + static_cast<double>(alphaValue) * o) + static_cast<double>(value) * o;
        }
        if (Matches(out_h, expected, static_cast<int>(i))) {
            ACL_LOG("loop %zu matches float64", i);
        } else {
            failures++;
        }
    }

    // 释放资源
    CHECK(aclmdlRIDestroy(modelRI));
    CHECK(aclDestroyTensor(self));
    CHECK(aclDestroyTensor(other));
    CHECK(aclDestroyTensor(out));
    CHECK(aclDestroyTensor(outtmp));
    CHECK(aclDestroyScalar(alpha));
    for (aclScalar *scalar : scalars) {
        CHECK(aclDestroyScalar(scalar));
    }
    CHECK(aclrtFree(self_d));
    CHECK(aclrtFree(other_d));
    CHECK(aclrtFree(out_d));
    CHECK(aclrtFree(outtmp_d));
    CHECK(aclrtFreeHost(self_h));
    CHECK(aclrtFreeHost(other_h));
    CHECK(aclrtFreeHost(out_h));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtDestroyStream(updateStream));
    for (void *addr : {workspaceAddr, workspaceAddr1}) {
        if (addr != nullptr) {
            CHECK(aclrtFree(addr));
        }
    }
    for (void *addr : workspaces) {
        CHECK(aclrtFree(addr));
    }
    // 释放计算设备的资源
    CHECK(aclrtResetDevice(devID));
    // 去初始化
    CHECK(aclFinalize());
    if (failures != 0) {
        ACL_ERR("update_then_execute: %d of %zu loops differ from the float64 reference", failures,
                updateValues.size());
        return EXIT_FAILURE;
    }
    ACL_LOG("update_then_execute passed");
    return EXIT_SUCCESS;
}
