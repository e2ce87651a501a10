// aclnnFusedInferAttentionScoreV4GetMaxWorkspaceSize as torch_npu reaches it: looked up with dlsym on libopapi.so's
// handle (no public header declares it) and called through a pointer of phase 1's type, then its executor
// destroyed. Prints one line per call: the call, its status, and what it wrote.
#include <cstdio>
#include <dlfcn.h>
#include <initializer_list>

#include "acl/acl.h"
#include "aclnnop/aclnn_fused_infer_attention_score_v4.h"

using MaxWorkspace = decltype(&aclnnFusedInferAttentionScoreV4GetWorkspaceSize);

namespace {
aclTensor *Tensor(const int64_t *dims, uint64_t rank, aclDataType type, void *data)
{
    int64_t strides[4] = {1, 1, 1, 1};
    for (int i = static_cast<int>(rank) - 2; i >= 0; i--) {
        strides[i] = strides[i + 1] * dims[i + 1];
    }
    return aclCreateTensor(dims, rank, type, strides, 0, ACL_FORMAT_ND, dims, rank, data);
}

aclnnStatus Call(MaxWorkspace fn, const aclTensor *query, aclTensorList *keys, aclTensorList *values,
                 aclIntArray *lengths, const aclTensor *out, uint64_t *size, aclOpExecutor **executor)
{
    char layout[] = "BSH";
    return fn(query, keys, values, nullptr, nullptr, nullptr, lengths, nullptr, nullptr, nullptr, nullptr, nullptr,
              nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
              nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 2, 0.25, 2147483647, 2147483647, layout, 1, 0, 1,
              0, 0, false, 0, 0, 0, out, nullptr, size, executor);
}
}  // namespace

int main()
{
    aclInit(nullptr);
    aclrtSetDevice(0);
    void *handle = dlopen("libopapi.so", RTLD_LAZY | RTLD_GLOBAL);
    printf("dlopen libopapi.so %s\n", handle != nullptr ? "ok" : "failed");
    const char *names[] = {"aclnnFusedInferAttentionScoreV2GetMaxWorkspaceSize",
                           "aclnnFusedInferAttentionScoreV3GetMaxWorkspaceSize",
                           "aclnnFusedInferAttentionScoreV4GetMaxWorkspaceSize",
                           "aclnnNsaCompressAttentionInferGetMaxWorkspaceSize",
                           "aclnnNsaSelectedAttentionInferGetMaxWorkspaceSize"};
    for (const char *name : names) {
        printf("dlsym %s %s\n", name, dlsym(handle, name) != nullptr ? "found" : "missing");
    }
    auto fn = reinterpret_cast<MaxWorkspace>(dlsym(handle, names[2]));

    // decode: batch 1, one query token, 2 query heads and 1 KV head of dimension 4 (BSH), 5 cached tokens
    const int64_t qDims[3] = {1, 1, 8};
    const int64_t kvDims[3] = {1, 5, 4};
    void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
    aclrtMalloc(&q, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&k, 40, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&v, 40, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&o, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    aclTensor *query = Tensor(qDims, 3, ACL_FLOAT16, q);
    aclTensor *out = Tensor(qDims, 3, ACL_FLOAT16, o);
    aclTensor *key = Tensor(kvDims, 3, ACL_FLOAT16, k);
    aclTensor *value = Tensor(kvDims, 3, ACL_FLOAT16, v);
    aclTensorList *keys = aclCreateTensorList(&key, 1);
    aclTensorList *values = aclCreateTensorList(&value, 1);
    const int64_t five[1] = {5};
    aclIntArray *lengths = aclCreateIntArray(five, 1);

    uint64_t size = 7;
    aclOpExecutor *executor = nullptr;
    aclnnStatus status = Call(fn, query, keys, values, lengths, out, &size, &executor);
    printf("max %d size %lu executor %s\n", status, static_cast<unsigned long>(size), executor ? "set" : "null");
    uint64_t phase1Size = 7;
    aclOpExecutor *phase1 = nullptr;
    status = Call(aclnnFusedInferAttentionScoreV4GetWorkspaceSize, query, keys, values, lengths, out, &phase1Size,
                  &phase1);
    printf("phase1 %d size %lu\n", status, static_cast<unsigned long>(phase1Size));
    printf("aclDestroyAclOpExecutor %d\n", aclDestroyAclOpExecutor(executor));
    printf("aclDestroyAclOpExecutor %d\n", aclDestroyAclOpExecutor(phase1));
    executor = nullptr;
    printf("null query %d executor %s\n", Call(fn, nullptr, keys, values, lengths, out, &size, &executor),
           executor ? "set" : "null");
    printf("null workspaceSize %d\n", Call(fn, query, keys, values, lengths, out, nullptr, &executor));

    // lengths past the 5 cached tokens: the max call reads their count alone (CANN's FakeArray), phase 1 refuses
    const int64_t nine[1] = {9};
    aclIntArray *longer = aclCreateIntArray(nine, 1);
    executor = nullptr;
    status = Call(fn, query, keys, values, longer, out, &size, &executor);
    printf("max past the cache %d size %lu\n", status, static_cast<unsigned long>(size));
    aclDestroyAclOpExecutor(executor);
    printf("phase1 past the cache %d\n", Call(aclnnFusedInferAttentionScoreV4GetWorkspaceSize, query, keys, values,
                                                longer, out, &phase1Size, &phase1));
    aclDestroyIntArray(longer);

    aclDestroyIntArray(lengths);
    aclDestroyTensorList(keys);
    aclDestroyTensorList(values);
    aclDestroyTensor(query);
    aclDestroyTensor(out);
    for (void *p : {q, k, v, o}) {
        aclrtFree(p);
    }
    aclrtResetDevice(0);
    printf("aclFinalize %d\n", aclFinalize());
    return 0;
}
