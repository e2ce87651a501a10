// vnpu bench, figure 14: the native toolkit from C.
//   native load             aclInit + aclFinalize against the daemon; prints its peak RSS (its wall time is measured
//                           outside)
//   native wait <n>         prints "wait_s X": one aclrtSynchronizeStreamWithTimeout(-1) of an idle stream
//   native seed <n>         prints "step_s X": the seed page's step (execute the captured model, update its task
//                           group on the update stream, record the EXTERNAL event, synchronize both streams)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

#define CHECK(expr)                                                                          \
    do {                                                                                     \
        aclError r_ = (expr);                                                                \
        if (r_ != ACL_SUCCESS) {                                                             \
            const char *m_ = aclGetRecentErrMsg();                                           \
            std::fprintf(stderr, "%s = %d: %s\n", #expr, r_, m_ ? m_ : "");                  \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

static double Seconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static aclTensor *Tensor(void *data)
{
    int64_t shape[2] = {4, 2}, strides[2] = {2, 1};
    return aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, data);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "load";
    const long n = argc > 2 ? std::atol(argv[2]) : 100;
    CHECK(aclInit(nullptr));
    if (!std::strcmp(mode, "load")) {  // and its peak RSS from its exec on (VmHWM), as nothing.c prints it
        CHECK(aclFinalize());
        char line[256];
        FILE *f = std::fopen("/proc/self/status", "r");
        while (f && std::fgets(line, sizeof(line), f))
            if (!std::strncmp(line, "VmHWM:", 6)) std::printf("hwm_kib %s", line + 6);
        if (f) std::fclose(f);
        return 0;
    }
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr, update = nullptr;
    CHECK(aclrtCreateStream(&stream));
    if (!std::strcmp(mode, "wait")) {
        for (long i = 0; i < n / 10 + 1; i++) CHECK(aclrtSynchronizeStreamWithTimeout(stream, -1));
        double start = Seconds();
        for (long i = 0; i < n; i++) CHECK(aclrtSynchronizeStreamWithTimeout(stream, -1));
        std::printf("wait_s %.9f\n", (Seconds() - start) / n);
    } else {
        CHECK(aclrtCreateStream(&update));
        void *x, *y, *tmp, *out, *hx, *hy, *hout;
        for (void **p : {&x, &y, &tmp, &out}) CHECK(aclrtMalloc(p, 32, ACL_MEM_MALLOC_HUGE_FIRST));
        for (void **p : {&hx, &hy, &hout}) CHECK(aclrtMallocHost(p, 32));
        for (int i = 0; i < 8; i++) ((float *)hx)[i] = 0.0f, ((float *)hy)[i] = 1.0f;
        float a1 = 1.1f, a2 = 5.5f;
        aclScalar *alpha = aclCreateScalar(&a1, ACL_FLOAT), *alpha2 = aclCreateScalar(&a2, ACL_FLOAT);
        aclTensor *tx = Tensor(x), *ty = Tensor(y), *tt = Tensor(tmp), *to = Tensor(out);
        aclrtEvent event;
        CHECK(aclrtCreateEventWithFlag(&event, ACL_EVENT_EXTERNAL));
        uint64_t ws;
        aclOpExecutor *e1, *e2;
        CHECK(aclnnAddGetWorkspaceSize(tx, ty, alpha, tt, &ws, &e1));
        CHECK(aclnnAddGetWorkspaceSize(tt, ty, alpha, to, &ws, &e2));
        aclmdlRI model;
        aclrtTaskGrp group;
        CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
        CHECK(aclrtMemcpyAsync(x, 32, hx, 32, ACL_MEMCPY_HOST_TO_DEVICE, stream));
        CHECK(aclrtMemcpyAsync(y, 32, hy, 32, ACL_MEMCPY_HOST_TO_DEVICE, stream));
        CHECK(aclnnAdd(nullptr, ws, e1, stream));
        CHECK(aclrtStreamWaitEvent(stream, event));
        CHECK(aclrtResetEvent(event, stream));
        CHECK(aclmdlRICaptureTaskGrpBegin(stream));
        CHECK(aclnnAdd(nullptr, ws, e2, stream));
        CHECK(aclmdlRICaptureTaskGrpEnd(stream, &group));
        CHECK(aclrtMemcpyAsync(hout, 32, out, 32, ACL_MEMCPY_DEVICE_TO_HOST, stream));
        CHECK(aclmdlRICaptureEnd(stream, &model));
        auto step = [&]() {
            CHECK(aclmdlRIExecuteAsync(model, stream));
            CHECK(aclmdlRICaptureTaskUpdateBegin(update, group));
            aclOpExecutor *e3;
            CHECK(aclnnAddGetWorkspaceSize(tt, ty, alpha2, to, &ws, &e3));
            CHECK(aclnnAdd(nullptr, ws, e3, update));
            CHECK(aclmdlRICaptureTaskUpdateEnd(update));
            CHECK(aclrtRecordEvent(event, update));
            CHECK(aclrtSynchronizeStream(update));
            CHECK(aclrtSynchronizeStream(stream));
        };
        for (long i = 0; i < n / 10 + 1; i++) step();
        double start = Seconds();
        for (long i = 0; i < n; i++) step();
        double took = (Seconds() - start) / n;
        if (((float *)hout)[0] < 6.5f || ((float *)hout)[0] > 6.7f) {
            std::fprintf(stderr, "the seed step computed %f, not 6.6\n", ((float *)hout)[0]);
            return 1;
        }
        std::printf("step_s %.9f\n", took);
    }
    return 0;
}
