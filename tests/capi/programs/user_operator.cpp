// A user-declared operator from C++ (tests/user_operators.py): aclnnOuterScaledAdd(self, other, scale, out) from
// its generated header, out[i, j] = self[i] + scale * other[j]. Phase 1's codes for a NULL and a 2-D self, an eager
// launch, and a captured replay whose task group an update rewrites. Prints each result as "label v0 v1 ...".
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "acl/acl.h"
#include "aclnnop/aclnn_outer_scaled_add.h"

#define CHECK(x)                                                                  \
    do {                                                                          \
        int e_ = (x);                                                             \
        if (e_ != 0) {                                                            \
            printf("failed %d %s: %s\n", e_, #x, aclGetRecentErrMsg());          \
            return 1;                                                             \
        }                                                                         \
    } while (0)

static const int64_t M = 5, N = 7;

static aclTensor* tensor(void* data, int64_t rows, int64_t cols)
{
    int64_t shape[2] = {rows, cols}, strides[2] = {cols, 1};
    uint64_t dims = rows ? 2 : 1;
    int64_t* s = rows ? shape : shape + 1;
    int64_t* t = rows ? strides : strides + 1;
    return aclCreateTensor(s, dims, ACL_FLOAT, t, 0, ACL_FORMAT_ND, s, dims, data);
}

static int print_result(const char* label, void* out)
{
    float host[M * N];
    CHECK(aclrtMemcpy(host, sizeof(host), out, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
    printf("%s", label);
    for (int64_t i = 0; i < M * N; ++i) printf(" %.9g", host[i]);
    printf("\n");
    return 0;
}

static int launch(aclTensor* a, aclTensor* b, float scale, aclTensor* out, void* workspace, aclrtStream stream)
{
    aclScalar* s = aclCreateScalar(&scale, ACL_FLOAT);
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    CHECK(aclnnOuterScaledAddGetWorkspaceSize(a, b, s, out, &size, &executor));
    CHECK(aclnnOuterScaledAdd(workspace, size, executor, stream));
    aclDestroyScalar(s);
    return 0;
}

int main()
{
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream s, updater;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateStream(&updater));
    float a[M], b[N];
    for (int64_t i = 0; i < M; ++i) a[i] = 3.0f * std::sin(0.7f * i);
    for (int64_t j = 0; j < N; ++j) b[j] = 2.0f * std::cos(1.3f * j);
    void *da, *db, *dout, *workspace;
    CHECK(aclrtMalloc(&da, sizeof(a), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&db, sizeof(b), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dout, M * N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(da, sizeof(a), a, sizeof(a), ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(db, sizeof(b), b, sizeof(b), ACL_MEMCPY_HOST_TO_DEVICE));
    aclTensor* ta = tensor(da, 0, M);
    aclTensor* tb = tensor(db, 0, N);
    aclTensor* tout = tensor(dout, M, N);

    // phase 1: the workspace it asks, and its codes for a NULL tensor and a 2-D self
    float one = 1.0f;
    aclScalar* scale = aclCreateScalar(&one, ACL_FLOAT);
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    CHECK(aclnnOuterScaledAddGetWorkspaceSize(ta, tb, scale, tout, &size, &executor));
    printf("workspace %llu\n", (unsigned long long)size);
    CHECK(aclDestroyAclOpExecutor(executor));
    printf("null-out %d\n", (int)aclnnOuterScaledAddGetWorkspaceSize(ta, tb, scale, nullptr, &size, &executor));
    printf("null-out-message %s\n", aclGetRecentErrMsg());
    printf("2d-self %d\n", (int)aclnnOuterScaledAddGetWorkspaceSize(tout, tb, scale, tout, &size, &executor));
    printf("2d-self-message %s\n", aclGetRecentErrMsg());
    CHECK(aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST));

    // eagerly
    if (launch(ta, tb, 1.5f, tout, workspace, s)) return 1;
    CHECK(aclrtSynchronizeStream(s));
    if (print_result("eager 1.5", dout)) return 1;

    // captured in a task group, replayed, updated, replayed again
    CHECK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    CHECK(aclmdlRICaptureTaskGrpBegin(s));
    if (launch(ta, tb, -2.0f, tout, workspace, s)) return 1;
    aclrtTaskGrp group;
    CHECK(aclmdlRICaptureTaskGrpEnd(s, &group));
    aclmdlRI model;
    CHECK(aclmdlRICaptureEnd(s, &model));
    CHECK(aclmdlRIExecuteAsync(model, s));
    CHECK(aclrtSynchronizeStream(s));
    if (print_result("replay -2", dout)) return 1;
    CHECK(aclmdlRICaptureTaskUpdateBegin(updater, group));
    if (launch(ta, tb, 0.25f, tout, workspace, updater)) return 1;
    CHECK(aclmdlRICaptureTaskUpdateEnd(updater));
    CHECK(aclrtSynchronizeStream(updater));
    CHECK(aclmdlRIExecuteAsync(model, s));
    CHECK(aclrtSynchronizeStream(s));
    if (print_result("updated 0.25", dout)) return 1;
    CHECK(aclmdlRIDestroy(model));
    aclDestroyScalar(scale);
    aclDestroyTensor(ta);
    aclDestroyTensor(tb);
    aclDestroyTensor(tout);
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
