// Launches the <<<>>> kernels through their host wrappers (eagerly, then captured in a task group and updated),
// then the fatbin's ScaleKernel with config.
#include <cmath>
#include <cstdio>

#include "acl/acl.h"
#include "scale_kernel.h"

#define CHECK(x)                                                                 \
    do {                                                                         \
        aclError e_ = (x);                                                       \
        if (e_ != ACL_SUCCESS) {                                                 \
            printf("failed %d %s: %s\n", e_, #x, aclGetRecentErrMsg());         \
            return 1;                                                            \
        }                                                                        \
    } while (0)

int main()
{
    const uint32_t blocks = 4, per = 8, n = blocks * per;
    float x[n], y[n];
    for (uint32_t i = 0; i < n; ++i) x[i] = std::sin(0.37f * i) * 5.0f;
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    void *dx, *dy;
    CHECK(aclrtMalloc(&dx, sizeof(x), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dy, sizeof(y), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(dx, sizeof(x), x, sizeof(x), ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(ScaleDo(blocks, s, static_cast<float*>(dx), static_cast<float*>(dy), -1.75f, per));
    printf("before hello\n");
    HelloDo(2, s);  // a kernel that prints: its lines are out when the launch returns, with no synchronize
    printf("after hello\n");
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(y, sizeof(y), dy, sizeof(y), ACL_MEMCPY_DEVICE_TO_HOST));
    printf("scaled");
    for (uint32_t i = 0; i < n; ++i) printf(" %.9g", y[i]);
    printf("\n");

    // the <<<>>> launch captured in a task group, then its factor updated through the group
    aclrtStream updater;
    CHECK(aclrtCreateStream(&updater));
    aclmdlRI model;
    aclrtTaskGrp group;
    CHECK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    CHECK(aclmdlRICaptureTaskGrpBegin(s));
    CHECK(ScaleDo(blocks, s, static_cast<float*>(dx), static_cast<float*>(dy), 2.5f, per));
    CHECK(aclmdlRICaptureTaskGrpEnd(s, &group));
    CHECK(aclmdlRICaptureEnd(s, &model));
    CHECK(aclmdlRICaptureTaskUpdateBegin(updater, group));
    CHECK(ScaleDo(blocks, updater, static_cast<float*>(dx), static_cast<float*>(dy), -0.5f, per));
    CHECK(aclmdlRICaptureTaskUpdateEnd(updater));
    CHECK(aclrtSynchronizeStream(updater));
    CHECK(aclmdlRIExecuteAsync(model, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(y, sizeof(y), dy, sizeof(y), ACL_MEMCPY_DEVICE_TO_HOST));
    printf("updated");
    for (uint32_t i = 0; i < n; ++i) printf(" %.9g", y[i]);
    printf("\n");
    CHECK(aclmdlRIDestroy(model));
    CHECK(aclrtDestroyStream(updater));

    aclrtBinHandle bin;
    aclrtFuncHandle func;
    CHECK(aclrtBinaryLoadFromFile("./out/fatbin/scale_fatbin/scale_fatbin.o", nullptr, &bin));
    printf("not-in-fatbin %d\n", aclrtBinaryGetFunction(bin, "AddKernel", &func));
    CHECK(aclrtBinaryGetFunction(bin, "ScaleKernel", &func));
    aclrtArgsHandle args;
    aclrtParamHandle p;
    float factor = 3.0f;
    CHECK(aclrtKernelArgsInit(func, &args));
    CHECK(aclrtKernelArgsAppend(args, &dx, sizeof(dx), &p));
    CHECK(aclrtKernelArgsAppend(args, &dy, sizeof(dy), &p));
    CHECK(aclrtKernelArgsAppend(args, &factor, sizeof(factor), &p));
    CHECK(aclrtKernelArgsAppend(args, const_cast<uint32_t*>(&per), sizeof(per), &p));
    CHECK(aclrtKernelArgsFinalize(args));
    CHECK(aclrtLaunchKernelWithConfig(func, blocks, s, nullptr, args, nullptr));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(y, sizeof(y), dy, sizeof(y), ACL_MEMCPY_DEVICE_TO_HOST));
    printf("fatbin");
    for (uint32_t i = 0; i < n; ++i) printf(" %.9g", y[i]);
    printf("\n");
    CHECK(aclrtBinaryUnLoad(bin));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
