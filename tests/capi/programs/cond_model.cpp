// Conditional models from C in the flow of CANN's model_ri/3_cond_model sample (S3 of the modelri spec), written
// anew: an IF, a WHILE and a SWITCH model, each a parent capture on one stream whose branches are captured into
// sub-models on a second stream, every cond handle ASSIGN_DEFAULT with default 0, so the host's writes before each
// launch are overwritten and the 0 path is taken. Prints the sample's lines; after them, "check" lines for what
// the sample does not show (the sub-models written into the C array, a NULL modelRI for a sub-model's End and the
// 107000 for a root's, the 107045 of a parent whose branch was never captured).
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

#define INFO(fmt, ...) std::fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define CHECK_ERROR(expr)                                                                                  \
    do {                                                                                                   \
        aclError r_ = (expr);                                                                              \
        if (r_ != ACL_SUCCESS) {                                                                           \
            std::fprintf(stdout, "[ERROR]  Operation failed: %s returned error code %d\n", #expr, r_);     \
            const char *m_ = aclGetRecentErrMsg();                                                         \
            std::fprintf(stdout, "[ERROR]  %s\n", m_ ? m_ : "(no message)");                               \
            return -1;                                                                                     \
        }                                                                                                  \
    } while (0)

namespace {
constexpr int64_t kCount = 8;
constexpr size_t kBytes = kCount * sizeof(float);
const std::vector<int64_t> kDims = {4, 2};
const float kA[kCount] = {1, 2, 3, 4, 5, 6, 7, 8};
const float kB[kCount] = {0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f, 4};

void Print(const std::vector<float> &values)
{
    std::fprintf(stdout, "[INFO]  The vector data is: ");
    for (float v : values) {
        std::fprintf(stdout, "%.4f  ", v);
    }
    std::fprintf(stdout, "\n");
}

struct Tensor {
    void *dev = nullptr;
    aclTensor *t = nullptr;
};

int MakeTensor(Tensor &out)
{
    CHECK_ERROR(aclrtMalloc(&out.dev, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    std::vector<int64_t> strides = {2, 1};
    out.t = aclCreateTensor(kDims.data(), kDims.size(), ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, kDims.data(),
                            kDims.size(), out.dev);
    return out.t == nullptr ? -1 : 0;
}

// the three tensors of every test: a and b filled from the host, dst left as the allocator hands it out
struct Operands {
    Tensor a, b, dst;
    int Make()
    {
        if (MakeTensor(a) || MakeTensor(b) || MakeTensor(dst)) {
            return -1;
        }
        CHECK_ERROR(aclrtMemcpy(a.dev, kBytes, kA, kBytes, ACL_MEMCPY_HOST_TO_DEVICE));
        CHECK_ERROR(aclrtMemcpy(b.dev, kBytes, kB, kBytes, ACL_MEMCPY_HOST_TO_DEVICE));
        return 0;
    }
    int Free()
    {
        for (Tensor *x : {&a, &b, &dst}) {
            CHECK_ERROR(aclDestroyTensor(x->t));
            CHECK_ERROR(aclrtFree(x->dev));
        }
        return 0;
    }
};

// dst = a + alpha * b on `stream`: phase 1 here, phase 2 launched (captured when the stream captures)
struct Add {
    aclScalar *alpha = nullptr;
    uint64_t wsSize = 0;
    aclOpExecutor *executor = nullptr;
    void *ws = nullptr;
    int Prepare(Operands &ops, float *value)
    {
        alpha = aclCreateScalar(value, ACL_FLOAT);
        if (aclnnAddGetWorkspaceSize(ops.a.t, ops.b.t, alpha, ops.dst.t, &wsSize, &executor) != 0) {
            return -1;
        }
        if (wsSize > 0) {
            CHECK_ERROR(aclrtMalloc(&ws, wsSize, ACL_MEM_MALLOC_HUGE_FIRST));
        }
        return 0;
    }
    int Launch(aclrtStream stream) { return aclnnAdd(ws, wsSize, executor, stream) == 0 ? 0 : -1; }
    int Release()
    {
        CHECK_ERROR(aclDestroyScalar(alpha));
        if (ws != nullptr) {
            CHECK_ERROR(aclrtFree(ws));
        }
        return 0;
    }
};

// a parent capture on `main` with one condition task of `size` branches
struct CondModel {
    aclrtStream main = nullptr, side = nullptr, exec = nullptr;
    aclmdlRI parent = nullptr;
    aclmdlRICondHandle handle = nullptr;
    uint64_t *word = nullptr;
    aclmdlRI branches[3] = {};
    int Begin(aclmdlRICondTaskType type, uint32_t size)
    {
        CHECK_ERROR(aclrtCreateStream(&main));
        CHECK_ERROR(aclrtCreateStream(&side));
        CHECK_ERROR(aclrtCreateStream(&exec));
        CHECK_ERROR(aclmdlRICaptureBegin(main, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
        aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
        CHECK_ERROR(aclmdlRICaptureGetInfo(main, &status, &parent));
        CHECK_ERROR(aclmdlRICondHandleCreate(parent, 0, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &handle));
        CHECK_ERROR(aclmdlRICondHandleGetCondPtr(handle, &word));
        aclmdlRICondTaskParams params;
        params.handle = handle;
        params.type = type;
        params.size = size;
        params.modelRIArray = branches;
        CHECK_ERROR(aclmdlRIAddCondTask(params, main, 0));
        return 0;
    }
    int BeginBranch(int i) { return aclmdlRICaptureToModelRIBegin(side, branches[i], ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL); }
    int Run(uint64_t hostValue, std::vector<float> &out, void *dst)
    {
        CHECK_ERROR(aclrtMemcpy(word, sizeof(uint64_t), &hostValue, sizeof(uint64_t), ACL_MEMCPY_HOST_TO_DEVICE));
        CHECK_ERROR(aclmdlRIExecuteAsync(parent, exec));
        CHECK_ERROR(aclrtSynchronizeStream(exec));
        CHECK_ERROR(aclrtMemcpy(out.data(), kBytes, dst, kBytes, ACL_MEMCPY_DEVICE_TO_HOST));
        return 0;
    }
    int Destroy()
    {
        CHECK_ERROR(aclmdlRIDestroy(parent));
        for (aclrtStream s : {side, main, exec}) {
            CHECK_ERROR(aclrtDestroyStream(s));
        }
        return 0;
    }
};

int32_t TestIf()
{
    INFO("========== IF condition ==========");
    Operands ops;
    if (ops.Make()) {
        return -1;
    }
    float alphaTrue = 2.0f, alphaFalse = 0.5f;
    Add onTrue, onFalse;
    if (onTrue.Prepare(ops, &alphaTrue) || onFalse.Prepare(ops, &alphaFalse)) {
        return -1;
    }
    CondModel m;
    if (m.Begin(ACL_MODEL_RI_COND_TYPE_IF, 2)) {
        return -1;
    }
    std::printf("check if-array %d\n", m.branches[0] != nullptr && m.branches[1] != nullptr &&
                                           m.branches[0] != m.branches[1]);
    CHECK_ERROR(m.BeginBranch(0));
    CHECK_ERROR(onTrue.Launch(m.side));
    aclmdlRI ended = nullptr;
    CHECK_ERROR(aclmdlRICaptureEnd(m.side, &ended));
    std::printf("check if-end-writes %d\n", ended == m.branches[0]);
    CHECK_ERROR(m.BeginBranch(1));
    CHECK_ERROR(onFalse.Launch(m.side));
    CHECK_ERROR(aclmdlRICaptureEnd(m.side, nullptr));  // a sub-model's End may take NULL
    std::printf("check root-null %d\n", aclmdlRICaptureEnd(m.main, nullptr));
    CHECK_ERROR(aclmdlRICaptureEnd(m.main, &m.parent));  // the capture went on after the NULL

    std::vector<float> out(kCount, 0.0f);
    CHECK_ERROR(m.Run(1, out, ops.dst.dev));
    INFO("IF true branch result:");
    Print(out);
    CHECK_ERROR(m.Run(0, out, ops.dst.dev));
    INFO("IF false branch result:");
    Print(out);
    if (m.Destroy() || onTrue.Release() || onFalse.Release() || ops.Free()) {
        return -1;
    }
    INFO("IF condition PASSED");
    return 0;
}

int32_t TestWhile()
{
    INFO("========== WHILE condition ==========");
    Operands ops;  // dst comes back where the IF test's dst was, with what the IF test left in it
    if (ops.Make()) {
        return -1;
    }
    float one = 1.0f;
    Add add;
    if (add.Prepare(ops, &one)) {
        return -1;
    }
    const uint64_t zero = 0;
    void *zeroDev = nullptr;
    CHECK_ERROR(aclrtMalloc(&zeroDev, sizeof(uint64_t), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ERROR(aclrtMemcpy(zeroDev, sizeof(uint64_t), &zero, sizeof(uint64_t), ACL_MEMCPY_HOST_TO_DEVICE));
    CondModel m;
    if (m.Begin(ACL_MODEL_RI_COND_TYPE_WHILE, 1)) {
        return -1;
    }
    CHECK_ERROR(m.BeginBranch(0));
    CHECK_ERROR(add.Launch(m.side));
    CHECK_ERROR(aclrtMemcpyAsync(m.word, sizeof(uint64_t), zeroDev, sizeof(uint64_t), ACL_MEMCPY_DEVICE_TO_DEVICE,
                                 m.side));  // the body ends the loop
    CHECK_ERROR(aclmdlRICaptureEnd(m.side, &m.branches[0]));
    CHECK_ERROR(aclmdlRICaptureEnd(m.main, &m.parent));

    std::vector<float> out(kCount, 0.0f);
    CHECK_ERROR(m.Run(1, out, ops.dst.dev));
    INFO("WHILE single iteration result:");
    Print(out);
    if (m.Destroy() || add.Release() || ops.Free()) {
        return -1;
    }
    CHECK_ERROR(aclrtFree(zeroDev));
    INFO("WHILE condition PASSED");
    return 0;
}

int32_t TestSwitch()
{
    INFO("========== SWITCH condition ==========");
    Operands ops;
    if (ops.Make()) {
        return -1;
    }
    float alphas[3] = {1.0f, 2.0f, 0.5f};
    Add cases[3];
    for (int i = 0; i < 3; ++i) {
        if (cases[i].Prepare(ops, &alphas[i])) {
            return -1;
        }
    }
    CondModel m;
    if (m.Begin(ACL_MODEL_RI_COND_TYPE_SWITCH, 3)) {
        return -1;
    }
    for (int i = 0; i < 3; ++i) {
        CHECK_ERROR(m.BeginBranch(i));
        CHECK_ERROR(cases[i].Launch(m.side));
        CHECK_ERROR(aclmdlRICaptureEnd(m.side, &m.branches[i]));
    }
    CHECK_ERROR(aclmdlRICaptureEnd(m.main, &m.parent));
    std::vector<float> out(kCount, 0.0f);
    for (uint64_t i = 0; i < 3; ++i) {
        CHECK_ERROR(m.Run(i, out, ops.dst.dev));
        INFO("SWITCH case %d result:", static_cast<int>(i));
        Print(out);
    }
    if (m.Destroy() || ops.Free()) {
        return -1;
    }
    for (Add &c : cases) {
        if (c.Release()) {
            return -1;
        }
    }
    INFO("SWITCH condition PASSED");
    return 0;
}

// not in the sample: a parent whose second branch was never captured
int32_t TestUnfinished()
{
    CondModel m;
    if (m.Begin(ACL_MODEL_RI_COND_TYPE_IF, 2)) {
        return -1;
    }
    CHECK_ERROR(m.BeginBranch(0));
    CHECK_ERROR(aclmdlRICaptureEnd(m.side, &m.branches[0]));
    aclmdlRI parent = m.parent;
    std::printf("check unfinished %d\n", aclmdlRICaptureEnd(m.main, &parent));
    std::printf("check unfinished-destroyed %d\n", aclmdlRIDestroy(m.parent));
    for (aclrtStream s : {m.side, m.main, m.exec}) {
        CHECK_ERROR(aclrtDestroyStream(s));
    }
    return 0;
}
}  // namespace

int32_t main()
{
    CHECK_ERROR(aclInit(nullptr));
    CHECK_ERROR(aclrtSetDevice(0));
    aclrtContext context = nullptr;
    CHECK_ERROR(aclrtCreateContext(&context, 0));
    TestIf();
    TestWhile();
    TestSwitch();
    INFO("========== All tests PASSED ==========");
    TestUnfinished();
    CHECK_ERROR(aclrtDestroyContext(context));
    CHECK_ERROR(aclrtResetDeviceForce(0));
    CHECK_ERROR(aclFinalize());
    return 0;
}
