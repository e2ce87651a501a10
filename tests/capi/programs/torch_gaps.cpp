// The functions torch_npu reaches beyond the seed, from C: the device count before aclInit, aclsysGetCANNVersion,
// aclrtMallocAlign32, aclrtSynchronizeDeviceWithTimeout, aclrtSetOpExecuteTimeOutV2, the SysParamOpt calls, the
// compile options, TensorDesc and aclop attributes, the refused legacy execution, and one-rank HCCL.
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "hccl/hccl.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // aclsysGetCANNVersion: torch_npu calls it
#define SHOW(expr) std::printf("%s = %d\n", #expr, static_cast<int>(expr))

int main()
{
    uint32_t count = 0;
    SHOW(aclrtGetDeviceCount(&count));
    std::printf("count %u\n", count);
    aclCANNPackageVersion version;
    SHOW(aclsysGetCANNVersion(ACL_PKG_NAME_CANN, &version));
    std::printf("version %s major %s minor %s\n", version.version, version.majorVersion, version.minorVersion);
    SHOW(aclInit(nullptr));
    SHOW(aclrtSetDevice(0));
    void *a = nullptr;
    SHOW(aclrtMallocAlign32(&a, 100, ACL_MEM_MALLOC_HUGE_FIRST));
    SHOW(aclrtSynchronizeDeviceWithTimeout(1000));
    uint64_t actual = 0;
    SHOW(aclrtSetOpExecuteTimeOutV2(2000, &actual));
    std::printf("actual %llu\n", static_cast<unsigned long long>(actual));
    int64_t value = -1;
    SHOW(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, &value));
    std::printf("ai cores %lld\n", static_cast<long long>(value));
    aclrtUuid uuid;
    SHOW(aclrtDeviceGetUuid(0, &uuid));
    SHOW(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value));
    std::printf("process param %lld\n", static_cast<long long>(value));
    SHOW(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value));
    SHOW(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1));
    SHOW(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value));
    std::printf("context param %lld\n", static_cast<long long>(value));
    SHOW(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL));

    SHOW(aclSetCompileopt(ACL_OP_JIT_COMPILE, "disable"));
    size_t size = aclGetCompileoptSize(ACL_OP_JIT_COMPILE);
    std::vector<char> jit(size);
    SHOW(aclGetCompileopt(ACL_OP_JIT_COMPILE, jit.data(), size));
    std::printf("jit %s (size %zu)\n", jit.data(), size);

    int64_t dims[] = {2, 3};
    aclTensorDesc *desc = aclCreateTensorDesc(ACL_FLOAT, 2, dims, ACL_FORMAT_ND);
    int64_t dim = 0;
    SHOW(aclGetTensorDescDimV2(desc, 1, &dim));
    std::printf("desc dims %zu dim1 %lld size %zu format %d\n", aclGetTensorDescNumDims(desc),
                static_cast<long long>(dim), aclGetTensorDescSize(desc), static_cast<int>(aclGetTensorDescFormat(desc)));
    SHOW(aclGetTensorDescDimV2(desc, 5, &dim));
    aclopAttr *attr = aclopCreateAttr();
    SHOW(aclopSetAttrFloat(attr, "value", 1.0f));
    aclDataBuffer *buffer = aclCreateDataBuffer(a, 24);
    const aclTensorDesc *outDesc[] = {desc};
    aclDataBuffer *outputs[] = {buffer};
    SHOW(aclopCompileAndExecute("Fill", 0, nullptr, nullptr, 1, outDesc, outputs, attr, ACL_ENGINE_SYS,
                                ACL_COMPILE_SYS, nullptr, nullptr));
    std::printf("message %s\n", aclGetRecentErrMsg());
    aclopDestroyAttr(attr);
    aclDestroyTensorDesc(desc);
    aclDestroyDataBuffer(buffer);

    HcclRootInfo root;
    SHOW(HcclGetRootInfo(&root));
    HcclComm comm = nullptr;
    SHOW(HcclCommInitRootInfo(1, &root, 0, &comm));
    SHOW(HcclCommInitRootInfo(2, &root, 0, &comm));
    uint32_t ranks = 0, rank = 9;
    SHOW(HcclGetRankSize(comm, &ranks));
    SHOW(HcclGetRankId(comm, &rank));
    std::printf("ranks %u rank %u\n", ranks, rank);
    float host[4] = {1.5f, -2.0f, 3.25f, 8.0f}, back[4] = {0};
    void *send = nullptr, *recv = nullptr;
    aclrtMalloc(&send, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&recv, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(send, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    SHOW(HcclAllReduce(send, recv, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    SHOW(aclrtSynchronizeStream(stream));
    aclrtMemcpy(back, sizeof(back), recv, sizeof(back), ACL_MEMCPY_DEVICE_TO_HOST);
    std::printf("allreduce %g %g %g %g\n", back[0], back[1], back[2], back[3]);
    SHOW(HcclSend(send, 4, HCCL_DATA_TYPE_FP32, 1, comm, stream));
    SHOW(HcclCommDestroy(comm));
    aclrtDestroyStream(stream);
    aclrtFree(send);
    aclrtFree(recv);
    aclrtFree(a);
    SHOW(aclrtResetDevice(0));
    SHOW(aclFinalize());
    return 0;
}
