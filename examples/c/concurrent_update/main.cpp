// Concurrent task update (the seed's C example): a model waits on an EXTERNAL event before its task group while an update stream rewrites the group's aclnnAdd.
//
//   outtmp = self + alpha * other                     (captured, alpha = 1.1)
//   out    = outtmp + alpha_i * other                 (the task group: alpha_i = 1.1 on even loops, 5.5 on odd ones)
//
// Loops 0 and 1 use the seed's inputs (self = 0, other = 1) and print 2.2 then 6.6; loops 2 and 3 write new
// pseudo-random inputs into the pinned host buffers, which the captured host-to-device copies read when the model
// runs. Every update launches one aclnnAdd (an empty update of a non-empty task group fails with 507000, so the
// even loops launch the original alpha again). Each output is checked against a float64 reference.
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
    const int loops = 4;
    // aclnnAdd: out = self + alpha * other
    std::vector<int64_t> shape = {4, 2};
    float alphaValue = 1.1f;
    float updatealphaValue = 5.5f;
    auto size = GetShapeSize(shape);
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
    aclScalar *updatealpha = aclCreateScalar(&updatealphaValue, aclDataType::ACL_FLOAT);
    CHECK_NOT_NULL(updatealpha);

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

    // 使用aclrtMallocHost申请锁页内存
    float *self_h = nullptr;
    float *other_h = nullptr;
    float *out_h = nullptr;
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&self_h), size * sizeof(float)));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&other_h), size * sizeof(float)));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&out_h), size * sizeof(float)));
    for (int64_t i = 0; i < size; i++) {
        self_h[i] = 0.0f;
        other_h[i] = 1.0f;
        out_h[i] = 0.0f;
    }

    aclrtStream stream1 = nullptr;
    CHECK(aclrtCreateStream(&stream1));
    aclrtEvent event = nullptr;
    // 创建external类型的event
    CHECK(aclrtCreateEventWithFlag(&event, ACL_EVENT_EXTERNAL));

    // ========开始捕获任务========
    CHECK(aclmdlRICaptureBegin(stream1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    // 异步拷贝，将aclnnAdd算子self、other输入的数据从Host侧传到Device侧
    CHECK(aclrtMemcpyAsync(self_d, size * sizeof(float), self_h, size * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE,
                           stream1));
    CHECK(aclrtMemcpyAsync(other_d, size * sizeof(float), other_h, size * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE,
                           stream1));
    // 执行aclnnAdd算子
    CHECK(aclnnAdd(workspaceAddr, workspaceSize, executor, stream1));
    // 在主流stream1上，下发一个Event Wait任务，等待更新任务完成
    CHECK(aclrtStreamWaitEvent(stream1, event));
    CHECK(aclrtResetEvent(event, stream1));
    // 标记要更新的任务
    aclrtTaskGrp handle = nullptr;
    CHECK(aclmdlRICaptureTaskGrpBegin(stream1));
    CHECK(aclnnAdd(workspaceAddr1, workspaceSize1, executor1, stream1));
    CHECK(aclmdlRICaptureTaskGrpEnd(stream1, &handle));
    // 异步拷贝，将算子输出数据从Device侧传回Host侧
    CHECK(aclrtMemcpyAsync(out_h, size * sizeof(float), out_d, size * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST,
                           stream1));
    // ========结束捕获任务========
    aclmdlRI modelRI = nullptr;
    CHECK(aclmdlRICaptureEnd(stream1, &modelRI));

    aclrtStream updateStream = nullptr;
    CHECK(aclrtCreateStream(&updateStream));

    int failures = 0;
    uint32_t rng = 20250101u;
    std::vector<void *> workspaces;
    for (int i = 0; i < loops; i++) {
        if (i >= 2) {
            // new inputs: the captured host-to-device copies read the pinned buffers when the model runs
            for (int64_t j = 0; j < size; j++) {
                self_h[j] = NextRandom(rng);
                other_h[j] = NextRandom(rng);
            }
            ACL_LOG("new inputs, loop: %d", i);
        }
        ACL_LOG("execute model, loop: %d", i);
        CHECK(aclmdlRIExecuteAsync(modelRI, stream1));
        // 开始更新任务：奇数次将aclnnAdd算子的alpha参数更新为updatealpha，偶数次恢复为alpha
        // (an executor is consumed by its launch: each update takes a new one from the first-phase call)
        aclScalar *loopAlpha = (i % 2 == 1) ? updatealpha : alpha;
        uint64_t workspaceSize2 = 0;
        aclOpExecutor *executor2 = nullptr;
        CHECK(aclnnAddGetWorkspaceSize(outtmp, other, loopAlpha, out, &workspaceSize2, &executor2));
        void *workspaceAddr2 = nullptr;
        if (workspaceSize2 > 0) {
            CHECK(aclrtMalloc(&workspaceAddr2, workspaceSize2, ACL_MEM_MALLOC_HUGE_FIRST));
            workspaces.push_back(workspaceAddr2);
        }
        CHECK(aclmdlRICaptureTaskUpdateBegin(updateStream, handle));
        CHECK(aclnnAdd(workspaceAddr2, workspaceSize2, executor2, updateStream));
        if (i % 2 == 1) {
            ACL_LOG("update alpha value of aclnnAdd");
        }
        CHECK(aclmdlRICaptureTaskUpdateEnd(updateStream));
        // 更新任务之后，在updateStream上，下发Event Record任务，用于通知主流stream1继续执行Event Wait之后的任务
        CHECK(aclrtRecordEvent(event, updateStream));
        CHECK(aclrtSynchronizeStream(updateStream));
        CHECK(aclrtSynchronizeStream(stream1));
        ACL_LOG("%f %f %f %f %f %f %f %f", out_h[0], out_h[1], out_h[2], out_h[3], out_h[4], out_h[5], out_h[6],
                out_h[7]);
        // float64 reference: outtmp = self + alpha * other, out = outtmp + alpha_i * other
        double a = static_cast<double>(alphaValue);
        double ai = static_cast<double>(i % 2 == 1 ? updatealphaValue : alphaValue);
        std::vector<double> expected(size);
        for (int64_t j = 0; j < size; j++) {
            double s = self_h[j];
            double o = other_h[j];
            expected[j] = (s + a * o) + ai * o;
        }
        if (Matches(out_h, expected, i)) {
            ACL_LOG("loop %d matches float64", i);
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
    CHECK(aclDestroyScalar(updatealpha));
    CHECK(aclrtFree(self_d));
    CHECK(aclrtFree(other_d));
    CHECK(aclrtFree(out_d));
    CHECK(aclrtFree(outtmp_d));
    CHECK(aclrtFreeHost(self_h));
    CHECK(aclrtFreeHost(other_h));
    CHECK(aclrtFreeHost(out_h));
    CHECK(aclrtDestroyStream(stream1));
    CHECK(aclrtDestroyStream(updateStream));
    CHECK(aclrtDestroyEvent(event));
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
        ACL_ERR("concurrent_update: %d of %d loops differ from the float64 reference", failures, loops);
        return EXIT_FAILURE;
    }
    ACL_LOG("concurrent_update passed");
    return EXIT_SUCCESS;
}
