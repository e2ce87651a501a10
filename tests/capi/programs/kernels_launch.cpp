// Custom kernels from C++: a binary loaded from a file, an argument block built with aclrtKernelArgs*, launches
// with config and by raw bytes, a `<<<>>>`-style launch (vnpuLaunchKernel, what ascendc_library's stubs call),
// kernel printf, a trap, and a kernel captured in a task group whose alpha an update changes.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "acl/acl.h"
#include "vnpu/vnpu.h"

#define CHECK(x)                                                                  \
    do {                                                                          \
        aclError e_ = (x);                                                        \
        if (e_ != ACL_SUCCESS) {                                                  \
            printf("failed %d %s: %s\n", e_, #x, aclGetRecentErrMsg());          \
            return 1;                                                             \
        }                                                                         \
    } while (0)

static const uint32_t N = 16;

struct VectorAddArgs {  // each argument at an 8-byte boundary
    void* a;
    void* b;
    void* dst;
    float alpha;
    uint32_t pad0;
    uint32_t n;
    uint32_t pad1;
};

static int print_result(const char* label, void* dst)
{
    float out[N];
    CHECK(aclrtMemcpy(out, sizeof(out), dst, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST));
    printf("%s", label);
    for (uint32_t i = 0; i < N; ++i) printf(" %.9g", out[i]);
    printf("\n");
    return 0;
}

int main(int argc, char** argv)
{
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream s, updater;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateStream(&updater));
    float a[N], b[N];
    for (uint32_t i = 0; i < N; ++i) {
        a[i] = 3.0f * std::sin(0.7f * i);
        b[i] = 2.0f * std::cos(1.3f * i);
    }
    void *da, *db, *dst;
    CHECK(aclrtMalloc(&da, sizeof(a), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&db, sizeof(b), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dst, sizeof(a), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(da, sizeof(a), a, sizeof(a), ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(db, sizeof(b), b, sizeof(b), ACL_MEMCPY_HOST_TO_DEVICE));

    aclrtBinHandle bin;
    printf("missing-file %d\n", aclrtBinaryLoadFromFile("/nonexistent/kernels.o", nullptr, &bin));
    CHECK(aclrtBinaryLoadFromFile(argv[1], nullptr, &bin));
    aclrtFuncHandle func;
    printf("missing-kernel %d\n", aclrtBinaryGetFunction(bin, "NoSuchKernel", &func));
    CHECK(aclrtBinaryGetFunction(bin, "VectorAddKernel", &func));

    // aclrtLaunchKernelWithConfig with an argument block built on the host
    aclrtArgsHandle args;
    aclrtParamHandle p, alphaParam;
    CHECK(aclrtKernelArgsInit(func, &args));
    CHECK(aclrtKernelArgsAppend(args, &da, sizeof(da), &p));
    CHECK(aclrtKernelArgsAppend(args, &db, sizeof(db), &p));
    CHECK(aclrtKernelArgsAppend(args, &dst, sizeof(dst), &p));
    float alpha = 0.5f;
    uint32_t n = N;
    CHECK(aclrtKernelArgsAppend(args, &alpha, sizeof(alpha), &alphaParam));
    CHECK(aclrtKernelArgsAppend(args, &n, sizeof(n), &p));
    alpha = 1.5f;
    CHECK(aclrtKernelArgsParaUpdate(args, alphaParam, &alpha, sizeof(alpha)));
    CHECK(aclrtKernelArgsFinalize(args));
    printf("append-after-finalize %d\n", aclrtKernelArgsAppend(args, &n, sizeof(n), &p));
    aclrtLaunchKernelAttr attr;
    attr.id = ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US;
    attr.value.timeoutUs.timeoutLow = 5000000;
    attr.value.timeoutUs.timeoutHigh = 0;
    aclrtLaunchKernelCfg cfg = {&attr, 1};
    CHECK(aclrtLaunchKernelWithConfig(func, 1, s, &cfg, args, nullptr));
    CHECK(aclrtSynchronizeStream(s));
    if (print_result("with-config 1.5", dst)) return 1;

    // a custom kernel captured in a task group, its arguments updated
    VectorAddArgs raw = {da, db, dst, -2.25f, 0, N, 0};
    CHECK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    CHECK(aclmdlRICaptureTaskGrpBegin(s));
    CHECK(aclrtLaunchKernel(func, 1, &raw, sizeof(raw), s));
    aclrtTaskGrp group;
    CHECK(aclmdlRICaptureTaskGrpEnd(s, &group));
    aclmdlRI model;
    CHECK(aclmdlRICaptureEnd(s, &model));
    CHECK(aclmdlRIExecuteAsync(model, s));
    CHECK(aclrtSynchronizeStream(s));
    if (print_result("replay -2.25", dst)) return 1;
    raw.alpha = 4.0f;
    CHECK(aclmdlRICaptureTaskUpdateBegin(updater, group));
    CHECK(aclrtLaunchKernel(func, 1, &raw, sizeof(raw), updater));
    CHECK(aclmdlRICaptureTaskUpdateEnd(updater));
    CHECK(aclrtSynchronizeStream(updater));
    CHECK(aclmdlRIExecuteAsync(model, s));
    CHECK(aclrtSynchronizeStream(s));
    if (print_result("updated 4", dst)) return 1;
    CHECK(aclmdlRIDestroy(model));

    // managed memory: the host writes and reads it through the pointer, and a kernel takes the same pointer
    float *ma, *mb, *mdst;
    CHECK(aclrtMemAllocManaged(reinterpret_cast<void**>(&ma), sizeof(a), ACL_RT_MEM_ATTACH_GLOBAL));
    CHECK(aclrtMemAllocManaged(reinterpret_cast<void**>(&mb), sizeof(b), ACL_RT_MEM_ATTACH_GLOBAL));
    CHECK(aclrtMemAllocManaged(reinterpret_cast<void**>(&mdst), sizeof(a), ACL_RT_MEM_ATTACH_GLOBAL));
    std::memcpy(ma, a, sizeof(a));
    std::memcpy(mb, b, sizeof(b));
    aclrtArgsHandle margs;
    CHECK(aclrtKernelArgsInit(func, &margs));
    CHECK(aclrtKernelArgsAppend(margs, &ma, sizeof(ma), &p));
    CHECK(aclrtKernelArgsAppend(margs, &mb, sizeof(mb), &p));
    CHECK(aclrtKernelArgsAppend(margs, &mdst, sizeof(mdst), &p));
    alpha = 0.75f;
    CHECK(aclrtKernelArgsAppend(margs, &alpha, sizeof(alpha), &p));
    CHECK(aclrtKernelArgsAppend(margs, &n, sizeof(n), &p));
    CHECK(aclrtKernelArgsFinalize(margs));
    CHECK(aclrtLaunchKernelWithConfig(func, 1, s, nullptr, margs, nullptr));
    CHECK(aclrtSynchronizeStream(s));
    printf("managed 0.75");
    for (uint32_t i = 0; i < N; ++i) printf(" %.9g", mdst[i]);
    printf("\n");
    VectorAddArgs managed = {ma, mb, mdst, -1.5f, 0, N, 0};
    CHECK(aclrtLaunchKernel(func, 1, &managed, sizeof(managed), s));
    CHECK(aclrtSynchronizeStream(s));
    printf("managed-raw -1.5");
    for (uint32_t i = 0; i < N; ++i) printf(" %.9g", mdst[i]);
    printf("\n");
    CHECK(aclrtFree(ma));
    CHECK(aclrtFree(mb));
    CHECK(aclrtFree(mdst));

    // <<<>>> style: printf and a trap
    struct { void* p; int32_t v; int32_t pad; } write = {dst, 123, 0};
    printf("host before kernels\n");
    CHECK(vnpuLaunchKernel("DeviceWrite", 2, s, &write, sizeof(write)));
    CHECK(vnpuLaunchKernel("KernelPrint", 3, s, nullptr, 0));
    CHECK(aclrtSynchronizeStream(s));
    printf("host after kernels\n");
    CHECK(vnpuLaunchKernel("ErrorOPf", 1, s, nullptr, 0));
    printf("trap %d\n", aclrtSynchronizeStream(s));
    printf("unregistered %d\n", vnpuLaunchKernel("NotAKernel", 1, s, nullptr, 0));
    printf("unregistered-reported %d\n", aclrtSynchronizeStream(s));  // a pipelined launch's error comes here
    CHECK(aclrtBinaryUnLoad(bin));
    CHECK(aclrtDestroyStream(updater));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("done\n");
    return 0;
}
