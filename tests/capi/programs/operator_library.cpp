// The operator library's layout as CANN's example programs and torch_npu reach it: a header by its family path and
// one bare (-I include/aclnnop), the feature libraries opened by name, the host objects found through libopapi's
// handle, and an operator vnpu does not implement answering its phase 1 and phase 2 with a status and a message.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnn_adaptive_max_pool3d_backward.h"
#include "aclnnop/aclnn_set_pytorch_random.h"
#include "aclnnop/aclnn_trans_quant_param.h"

static const char *message()
{
    const char *text = aclGetRecentErrMsg();
    return text != nullptr ? text : "(none)";
}

int main(int argc, char **argv)
{
    printf("init %d\n", aclnnInit(nullptr));
    void *opapi = dlopen("libopapi.so", RTLD_LAZY);
    printf("host-object %d\n", opapi != nullptr && dlsym(opapi, "aclCreateTensor") != nullptr);
    printf("host-list %d\n", opapi != nullptr && dlsym(opapi, "aclCreateTensorList") != nullptr);
    for (int i = 1; i < argc; ++i) {  // each feature library: the same aclnnAdd as the program links
        void *library = dlopen(argv[i], RTLD_LAZY);
        bool same = library != nullptr && dlsym(library, "aclnnAdd") == reinterpret_cast<void *>(&aclnnAdd);
        printf("alias %s %d\n", argv[i], same);
    }
    uint64_t workspaceSize = 99;
    aclOpExecutor *executor = reinterpret_cast<aclOpExecutor *>(0x1);
    aclnnStatus status = aclnnAdaptiveMaxPool3dBackwardGetWorkspaceSize(nullptr, nullptr, nullptr, nullptr,
                                                                        &workspaceSize, &executor);
    printf("phase1 %d %llu %d\n", status, static_cast<unsigned long long>(workspaceSize), executor == nullptr);
    printf("phase1-message %s\n", message());
    printf("phase2 %d\n", aclnnAdaptiveMaxPool3dBackward(nullptr, 0, executor, nullptr));
    printf("phase2-message %s\n", message());
    printf("read-once %d\n", aclGetRecentErrMsg() == nullptr);
    int32_t modes[5];  // one call a statement: the order of a call's arguments is unspecified
    modes[0] = aclnnGetPytorchRandom();
    modes[1] = aclnnSetPytorchRandom(1);
    modes[2] = aclnnGetPytorchRandom();
    modes[3] = aclnnSetPytorchRandom(2);
    modes[4] = aclnnGetPytorchRandom();
    printf("random-mode %d %d %d %d %d\n", modes[0], modes[1], modes[2], modes[3], modes[4]);
    float scales[3] = {1.0f, 0.5f, -2.0f};
    float offsets[3] = {1.4f, -2.5f, 300.0f};
    uint64_t *packed = nullptr;
    uint64_t count = 0;
    int packing = aclnnTransQuantParam(scales, 3, offsets, 3, &packed, &count);
    printf("trans-quant %d %llu", packing, static_cast<unsigned long long>(count));
    for (uint64_t i = 0; i < count; ++i) printf(" %llx", static_cast<unsigned long long>(packed[i]));
    printf("\n");
    free(packed);
    printf("trans-quant-scale-only %d", aclnnTransQuantParam(scales + 1, 1, nullptr, 0, &packed, &count));
    printf(" %llu %llx\n", static_cast<unsigned long long>(count), static_cast<unsigned long long>(packed[0]));
    free(packed);
    printf("trans-quant-refused %d %d\n", aclnnTransQuantParam(nullptr, 1, nullptr, 0, &packed, &count),
           aclnnTransQuantParam(scales, 3, nullptr, 3, &packed, &count));
    printf("finalize %d\n", aclnnFinalize());
    return 0;
}
