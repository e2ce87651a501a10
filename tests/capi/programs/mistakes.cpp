// Deliberate mistakes from C: each prints "<label> <code> <message>" so the test can check the exact ACL code
// and that aclGetRecentErrMsg() names the problem; the program then goes on, as after any error.
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

#define CHECK(expr)                                                                                 \
    do {                                                                                            \
        aclError r_ = (expr);                                                                       \
        if (r_ != ACL_SUCCESS) {                                                                    \
            const char *m_ = aclGetRecentErrMsg();                                                  \
            std::printf("FAILED %s = %d: %s\n", #expr, r_, m_ ? m_ : "(no message)");               \
            return 1;                                                                               \
        }                                                                                           \
    } while (0)

static void Report(const char *label, int code)
{
    const char *message = aclGetRecentErrMsg();
    std::printf("%s %d %s\n", label, code, message ? message : "(null)");
    const char *again = aclGetRecentErrMsg();  // read once: the next read has nothing
    std::printf("%s-again %s\n", label, again ? again : "(null)");
}

static aclTensor *Vector(void *data, int64_t n)
{
    int64_t shape[1] = {n}, strides[1] = {1};
    return aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, data);
}

int main()
{
    const char *soc = aclrtGetSocName();  // answered before aclInit, as CANN's sample tooling expects
    std::printf("soc %s\n", soc ? soc : "(null)");
    void *early = nullptr;  // a call before aclInit
    Report("before-init", aclrtMalloc(&early, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    const int64_t n = 8;
    void *x = nullptr, *y = nullptr;
    CHECK(aclrtMalloc(&x, n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&y, n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));

    // a function vnpu declares but does not implement
    Report("not-implemented", aclrtMemcpy2d(y, 16, x, 16, 16, 2, ACL_MEMCPY_DEVICE_TO_DEVICE));
    // an out-parameter that is NULL
    Report("null-out", aclrtMalloc(nullptr, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    // a double free
    void *z = nullptr;
    CHECK(aclrtMalloc(&z, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtFree(z));
    Report("double-free", aclrtFree(z));
    // counts of 2**40 read from host arrays of a few elements: refused with 100000, nothing read or sent
    std::vector<char> few(16, 1);
    Report("huge-copy", aclrtMemcpy(y, SIZE_MAX, few.data(), 1ULL << 40, ACL_MEMCPY_HOST_TO_DEVICE));
    int64_t values[2] = {1, 2};
    aclIntArray *huge = aclCreateIntArray(values, 1ULL << 40);
    std::printf("huge-int-array %s\n", huge == nullptr ? "NULL" : "not NULL");
    Report("huge-int-array-message", 0);
    int32_t pids[1] = {1};
    Report("huge-pid-list", aclrtIpcMemSetImportPid("no-such-key", pids, 1ULL << 40));
    // a bad tensor: NULL, with the reason kept
    int64_t dims[1] = {4}, bad[2] = {1, 1};
    aclTensor *broken = aclCreateTensor(dims, 1, ACL_FLOAT, bad, 0, ACL_FORMAT_ND, dims, 0, x);
    std::printf("bad-tensor %s\n", broken == nullptr ? "NULL" : "not NULL");
    Report("bad-tensor-message", 0);
    // phase 1 refuses shapes that do not broadcast
    aclTensor *a = Vector(x, n), *b = Vector(y, 3), *out = Vector(y, n);
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    uint64_t workspace = 0;
    aclOpExecutor *executor = nullptr;
    Report("phase1", aclnnAddGetWorkspaceSize(a, b, alpha, out, &workspace, &executor));

    // a pipelined launch that fails (its executor was already used) reports at the thread's next waiting call
    aclTensor *c = Vector(y, n);
    CHECK(aclnnAddGetWorkspaceSize(a, c, alpha, out, &workspace, &executor));
    CHECK(aclnnAdd(nullptr, 0, executor, stream));
    Report("reused-executor", aclnnAdd(nullptr, 0, executor, stream));
    CHECK(aclrtFree(x));  // the launch below reads freed memory: queued, so its error comes later
    CHECK(aclnnAddGetWorkspaceSize(a, c, alpha, out, &workspace, &executor));
    aclError launched = aclnnAdd(nullptr, 0, executor, stream);
    std::printf("pipelined-launch %d\n", launched);
    Report("pipelined-sync", aclrtSynchronizeStream(stream));
    CHECK(aclrtSynchronizeStream(stream));  // the stream works on

    // a capture-mode violation from another C thread: GLOBAL forbids it, THREAD_LOCAL allows it
    for (aclmdlRICaptureMode mode : {ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL}) {
        CHECK(aclmdlRICaptureBegin(stream, mode));
        int code = -1;
        std::string message;
        std::thread other([&] {
            aclrtSetDevice(0);
            std::vector<float> host(n, 2.0f);
            code = aclrtMemcpy(y, n * sizeof(float), host.data(), n * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE);
            const char *m = aclGetRecentErrMsg();
            message = m ? m : "(null)";
        });
        other.join();
        std::printf("capture-mode-%d %d %s\n", static_cast<int>(mode), code, message.c_str());
        aclmdlRI model = nullptr;
        CHECK(aclmdlRICaptureEnd(stream, &model));
        CHECK(aclmdlRIDestroy(model));
    }

    // an update that launches fewer kernels than the group holds
    aclrtStream update = nullptr;
    CHECK(aclrtCreateStream(&update));
    aclTensor *d = Vector(y, n);
    CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    CHECK(aclmdlRICaptureTaskGrpBegin(stream));
    for (int i = 0; i < 2; i++) {
        CHECK(aclnnAddGetWorkspaceSize(d, d, alpha, out, &workspace, &executor));
        CHECK(aclnnAdd(nullptr, 0, executor, stream));
    }
    aclrtTaskGrp group = nullptr;
    CHECK(aclmdlRICaptureTaskGrpEnd(stream, &group));
    aclmdlRI model = nullptr;
    CHECK(aclmdlRICaptureEnd(stream, &model));
    CHECK(aclmdlRICaptureTaskUpdateBegin(update, group));
    CHECK(aclnnAddGetWorkspaceSize(d, d, alpha, out, &workspace, &executor));
    CHECK(aclnnAdd(nullptr, 0, executor, update));
    aclError ended = aclmdlRICaptureTaskUpdateEnd(update);
    Report("update-count", ended != ACL_SUCCESS ? ended : aclrtSynchronizeStream(update));
    CHECK(aclmdlRIExecuteAsync(model, stream));
    CHECK(aclrtSynchronizeStream(stream));  // the model still replays its old kernels

    CHECK(aclmdlRIDestroy(model));
    CHECK(aclrtDestroyStream(update));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtFree(y));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    std::printf("done\n");
    return 0;
}
