/* The runtime's internal rt* entry points that torch_npu links (no public header declares them): registering a
 * device binary and launching its kernels by stub. vnpu has no device binaries: each answers
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000), the runtime's own code for it, says so in aclGetRecentErrMsg and once
 * per entry point on stderr. */
#include <stdint.h>
#include <stdio.h>

#include "core.h"

static int refuse(const char *name, int *said)
{
    if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "vnpu: %s is an internal entry point of CANN's runtime (device binaries and their kernel "
                        "stubs), which vnpu does not have: it answers 207000\n", name);
    return vn_fail(207000, name, "%s is an internal entry point of CANN's runtime, which vnpu does not have", name);
}

VN_EXPORT int rtDevBinaryRegister(const void *bin, void **handle)
{
    static int said;
    (void)bin, (void)handle;
    return refuse("rtDevBinaryRegister", &said);
}

VN_EXPORT int rtFunctionRegister(void *binHandle, const void *stubFunc, const char *stubName, const void *kernelInfoExt,
                                 uint32_t funcMode)
{
    static int said;
    (void)binHandle, (void)stubFunc, (void)stubName, (void)kernelInfoExt, (void)funcMode;
    return refuse("rtFunctionRegister", &said);
}

VN_EXPORT int rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args, uint32_t argsSize, void *smDesc,
                             void *stream)
{
    static int said;
    (void)stubFunc, (void)blockDim, (void)args, (void)argsSize, (void)smDesc, (void)stream;
    return refuse("rtKernelLaunch", &said);
}

VN_EXPORT int rtGetC2cCtrlAddr(uint64_t *addr, uint32_t *len)
{
    static int said;
    (void)addr, (void)len;
    return refuse("rtGetC2cCtrlAddr", &said);
}
