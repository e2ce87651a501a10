// Task update, method 1 of the seed page: the work before and after the changing kernel is captured into two models, and the changing aclnnAdd is launched eagerly between their executions.
//
//   model 1 (captured):  copy self, other to the device;  outtmp = self + alpha * other      (alpha = 1.1)
//   eager, between:      out = outtmp + alpha_i * other   (a new aclnnAdd every step: alpha_i = 1.1, 5.5, 1.1, 5.5)
//   model 2 (captured):  res = out * other;  copy res to the host
//
// All on one stream, so stream order runs model 1, the eager kernel and model 2 in turn. Each result is checked
// against a float64 reference.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
}  // namespace

int main()
{
    int32_t devID = 0;
    std::vector<int64_t> shape = {4, 2};
    auto size = GetShapeSize(shape);
    float alphaValue = 1.1f;
    const std::vector<float> stepValues = {1.1f, 5.5f, 1.1f, 5.5f};  // alpha of the eager aclnnAdd, one per step
    void *self_d = nullptr;
    void *other_d = nullptr;
    void *outtmp_d = nullptr;
    void *out_d = nullptr;
    void *res_d = nullptr;
    aclTensor *self = nullptr;
    aclTensor *other = nullptr;
    aclTensor *outtmp = nullptr;
    aclTensor *out = nullptr;
    aclTensor *res = nullptr;

    // 初始化
    CHECK(aclInit(nullptr));
    // 指定计算设备
    CHECK(aclrtSetDevice(devID));
    // 准备算子的输入、输出参数
    CreateAclTensor(shape, &self_d, aclDataType::ACL_FLOAT, &self);
    CreateAclTensor(shape, &other_d, aclDataType::ACL_FLOAT, &other);
    CreateAclTensor(shape, &outtmp_d, aclDataType::ACL_FLOAT, &outtmp);
    CreateAclTensor(shape, &out_d, aclDataType::ACL_FLOAT, &out);
    CreateAclTensor(shape, &res_d, aclDataType::ACL_FLOAT, &res);
    aclScalar *alpha = aclCreateScalar(&alphaValue, aclDataType::ACL_FLOAT);
    CHECK_NOT_NULL(alpha);
    // outtmp = self + alpha * other (model 1)
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    CHECK(aclnnAddGetWorkspaceSize(self, other, alpha, outtmp, &workspaceSize, &executor));
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        CHECK(aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST));
    }
    // res = out * other (model 2)
    uint64_t workspaceSize3 = 0;
    aclOpExecutor *executor3 = nullptr;
    CHECK(aclnnMulGetWorkspaceSize(out, other, res, &workspaceSize3, &executor3));
    void *workspaceAddr3 = nullptr;
    if (workspaceSize3 > 0) {
        CHECK(aclrtMalloc(&workspaceAddr3, workspaceSize3, ACL_MEM_MALLOC_HUGE_FIRST));
    }

    // 使用aclrtMallocHost申请锁页内存, filled with deterministic pseudo-random inputs
    float *self_h = nullptr;
    float *other_h = nullptr;
    float *res_h = nullptr;
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&self_h), size * sizeof(float)));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&other_h), size * sizeof(float)));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&res_h), size * sizeof(float)));
    uint32_t rng = 424242u;
    for (int64_t i = 0; i < size; i++) {
        self_h[i] = NextRandom(rng);
        other_h[i] = NextRandom(rng);
        res_h[i] = 0.0f;
    }
    ACL_LOG("self:  %f %f %f %f %f %f %f %f", self_h[0], self_h[1], self_h[2], self_h[3], self_h[4], self_h[5],
            self_h[6], self_h[7]);
    ACL_LOG("other: %f %f %f %f %f %f %f %f", other_h[0], other_h[1], other_h[2], other_h[3], other_h[4], other_h[5],
            other_h[6], other_h[7]);

    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    // ========捕获模型1：可变任务之前的任务========
    aclmdlRI modelRI1 = nullptr;
    CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    CHECK(aclrtMemcpyAsync(self_d, size * sizeof(float), self_h, size * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE,
                           stream));
    CHECK(aclrtMemcpyAsync(other_d, size * sizeof(float), other_h, size * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE,
                           stream));
    CHECK(aclnnAdd(workspaceAddr, workspaceSize, executor, stream));
    CHECK(aclmdlRICaptureEnd(stream, &modelRI1));
    // ========捕获模型2：可变任务之后的任务========
    aclmdlRI modelRI2 = nullptr;
    CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    CHECK(aclnnMul(workspaceAddr3, workspaceSize3, executor3, stream));
    CHECK(aclrtMemcpyAsync(res_h, size * sizeof(float), res_d, size * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST,
                           stream));
    CHECK(aclmdlRICaptureEnd(stream, &modelRI2));

    int failures = 0;
    std::vector<aclScalar *> scalars;
    std::vector<void *> workspaces;
    for (size_t i = 0; i < stepValues.size(); i++) {
        float value = stepValues[i];
        ACL_LOG("execute model 1, loop: %zu", i);
        CHECK(aclmdlRIExecuteAsync(modelRI1, stream));
        // 可变任务单独下发：out = outtmp + alpha_i * other，每次调用第一段接口获取新的aclOpExecutor
        aclScalar *stepalpha = aclCreateScalar(&value, aclDataType::ACL_FLOAT);
        CHECK_NOT_NULL(stepalpha);
        scalars.push_back(stepalpha);
        uint64_t workspaceSize2 = 0;
        aclOpExecutor *executor2 = nullptr;
        CHECK(aclnnAddGetWorkspaceSize(outtmp, other, stepalpha, out, &workspaceSize2, &executor2));
        void *workspaceAddr2 = nullptr;
        if (workspaceSize2 > 0) {
            CHECK(aclrtMalloc(&workspaceAddr2, workspaceSize2, ACL_MEM_MALLOC_HUGE_FIRST));
            workspaces.push_back(workspaceAddr2);
        }
        CHECK(aclnnAdd(workspaceAddr2, workspaceSize2, executor2, stream));
        ACL_LOG("launch aclnnAdd with alpha %.1f", value);
        ACL_LOG("execute model 2, loop: %zu", i);
        CHECK(aclmdlRIExecuteAsync(modelRI2, stream));
        CHECK(aclrtSynchronizeStream(stream));
        ACL_LOG("%f %f %f %f %f %f %f %f", res_h[0], res_h[1], res_h[2], res_h[3], res_h[4], res_h[5], res_h[6],
                res_h[7]);
        std::vector<double> expected(size);
        for (int64_t j = 0; j < size; j++) {
            double s = self_h[j];
            double o = other_h[j];
            expected[j] = ((s + static_cast<double>(alphaValue) * o) + static_cast<double>(value) * o) * o;
        }
        if (Matches(res_h, expected, static_cast<int>(i))) {
            ACL_LOG("loop %zu matches float64", i);
        } else {
            failures++;
        }
    }

    // 释放资源
    CHECK(aclmdlRIDestroy(modelRI1));
    CHECK(aclmdlRIDestroy(modelRI2));
    for (aclTensor *tensor : {self, other, outtmp, out, res}) {
        CHECK(aclDestroyTensor(tensor));
    }
    CHECK(aclDestroyScalar(alpha));
    for (aclScalar *scalar : scalars) {
        CHECK(aclDestroyScalar(scalar));
    }
    for (void *addr : {self_d, other_d, outtmp_d, out_d, res_d}) {
        CHECK(aclrtFree(addr));
    }
    CHECK(aclrtFreeHost(self_h));
    CHECK(aclrtFreeHost(other_h));
    CHECK(aclrtFreeHost(res_h));
    CHECK(aclrtDestroyStream(stream));
    for (void *addr : {workspaceAddr, workspaceAddr3}) {
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
        ACL_ERR("split_models: %d of %zu loops differ from the float64 reference", failures, stepValues.size());
        return EXIT_FAILURE;
    }
    ACL_LOG("split_models passed");
    return EXIT_SUCCESS;
}
