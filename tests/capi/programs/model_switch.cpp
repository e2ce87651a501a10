// The Build API as CANN's model_ri/2_model_switch sample uses it (the same flow, written for vnpu's tests):
// five persistent streams bound to a model built by hand. head: two pageable input copies (run once, at build
// time), out1 = self1 + other1 * 1.2, a device copy of the branch value into `num`, then two switches: num == 1
// jumps to branch1, num == 2 to branch2. branch1 (and branch0): inputs, an add, then activate `end`; branch2
// activates branch0. `end` holds the end task. The first execution (num 1) runs head -> branch1 -> end, the second
// (num 2) head -> branch2 -> branch0 -> end. Prints what the sample prints; exits 0 only if every call succeeded.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

#define INFO(fmt, ...) std::fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define CHECK(call)                                                                                    \
    do {                                                                                               \
        aclError r_ = (call);                                                                          \
        if (r_ != ACL_SUCCESS) {                                                                       \
            const char *m_ = aclGetRecentErrMsg();                                                     \
            std::fprintf(stdout, "[ERROR]  Operation failed: %s returned error code %d (%s)\n", #call, \
                         static_cast<int>(r_), m_ ? m_ : "no message");                                \
            return -1;                                                                                 \
        }                                                                                              \
    } while (0)

namespace {

const int64_t kCount = 8;
const size_t kBytes = kCount * sizeof(float);

struct Add {
    void *self = nullptr, *other = nullptr, *out = nullptr, *workspace = nullptr;
    aclTensor *tSelf = nullptr, *tOther = nullptr, *tOut = nullptr;
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
};

aclTensor *Tensor(void **device) {
    int64_t shape[2] = {4, 2}, strides[2] = {2, 1};
    if (aclrtMalloc(device, kBytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return nullptr;
    return aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, *device);
}

int Prepare(Add &add, aclScalar *alpha) {
    add.tSelf = Tensor(&add.self);
    add.tOther = Tensor(&add.other);
    add.tOut = Tensor(&add.out);
    if (!add.tSelf || !add.tOther || !add.tOut) return -1;
    CHECK(aclnnAddGetWorkspaceSize(add.tSelf, add.tOther, alpha, add.tOut, &add.workspaceSize, &add.executor));
    if (add.workspaceSize > 0) CHECK(aclrtMalloc(&add.workspace, add.workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST));
    return 0;
}

int Inputs(Add &add, std::vector<float> &self, std::vector<float> &other, aclrtStream stream) {
    CHECK(aclrtMemcpyAsync(add.self, kBytes, self.data(), kBytes, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK(aclrtMemcpyAsync(add.other, kBytes, other.data(), kBytes, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    return 0;
}

int Release(Add &add) {
    CHECK(aclDestroyTensor(add.tSelf));
    CHECK(aclDestroyTensor(add.tOther));
    CHECK(aclDestroyTensor(add.tOut));
    CHECK(aclrtFree(add.self));
    CHECK(aclrtFree(add.other));
    CHECK(aclrtFree(add.out));
    if (add.workspace != nullptr) CHECK(aclrtFree(add.workspace));
    return 0;
}

void Print(const std::vector<float> &data) {
    std::fprintf(stdout, "[INFO]  The vector data is: ");
    for (float value : data) std::fprintf(stdout, "%.4f  ", value);
    std::fprintf(stdout, "\n");
}

void *DeviceWord(int32_t value) {
    void *word = nullptr;
    if (aclrtMalloc(&word, sizeof(value), ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return nullptr;
    if (aclrtMemcpy(word, sizeof(value), &value, sizeof(value), ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
        return nullptr;
    }
    return word;
}

int Results(Add *adds, aclrtStream copies, const char *when) {
    std::vector<float> host[3];
    for (int i = 0; i < 3; ++i) {
        host[i].assign(kCount, -1.0f);
        CHECK(aclrtMemcpyAsync(host[i].data(), kBytes, adds[i].out, kBytes, ACL_MEMCPY_DEVICE_TO_HOST, copies));
    }
    CHECK(aclrtSynchronizeStream(copies));
    for (int i = 0; i < 3; ++i) {
        INFO("After %s, print data%d.", when, i + 1);
        Print(host[i]);
    }
    return 0;
}

}  // namespace

int main() {
    aclrtContext context = nullptr;
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateContext(&context, 0));

    float alphaValue = 1.2f;
    aclScalar *alpha = aclCreateScalar(&alphaValue, ACL_FLOAT);
    Add adds[3];  // adds[0] on head, adds[1] on branch0, adds[2] on branch1 (the sample's stream1, 2, 3)
    for (Add &add : adds) {
        if (Prepare(add, alpha) != 0) return -1;
    }
    std::vector<float> self[3] = {std::vector<float>(kCount, 1.0f), std::vector<float>(kCount, 2.0f),
                                  std::vector<float>(kCount, 3.0f)};
    std::vector<float> other(kCount, 2.0f);

    void *one = DeviceWord(1), *two = DeviceWord(2), *num = DeviceWord(0), *branchValue = DeviceWord(1);
    if (!one || !two || !num || !branchValue) return -1;

    aclrtStream head, branch0, branch1, branch2, end, copies, executor;
    CHECK(aclrtCreateStreamWithConfig(&head, 0, ACL_STREAM_PERSISTENT));
    CHECK(aclrtCreateStreamWithConfig(&branch0, 0, ACL_STREAM_PERSISTENT));
    CHECK(aclrtCreateStreamWithConfig(&branch1, 0, ACL_STREAM_PERSISTENT));
    CHECK(aclrtCreateStreamWithConfig(&branch2, 0, ACL_STREAM_PERSISTENT));
    CHECK(aclrtCreateStreamWithConfig(&end, 0, ACL_STREAM_PERSISTENT));
    CHECK(aclrtCreateStream(&copies));
    CHECK(aclrtCreateStream(&executor));

    aclmdlRI model = nullptr;
    CHECK(aclmdlRIBuildBegin(&model, 0));
    CHECK(aclmdlRIBindStream(model, head, ACL_MODEL_STREAM_FLAG_HEAD));
    CHECK(aclmdlRIBindStream(model, branch0, ACL_MODEL_STREAM_FLAG_DEFAULT));
    CHECK(aclmdlRIBindStream(model, branch1, ACL_MODEL_STREAM_FLAG_DEFAULT));
    CHECK(aclmdlRIBindStream(model, branch2, ACL_MODEL_STREAM_FLAG_DEFAULT));
    CHECK(aclmdlRIBindStream(model, end, ACL_MODEL_STREAM_FLAG_DEFAULT));

    if (Inputs(adds[0], self[0], other, head) != 0) return -1;  // pageable: copied now, once
    if (Inputs(adds[1], self[1], other, branch0) != 0) return -1;
    if (Inputs(adds[2], self[2], other, branch1) != 0) return -1;
    CHECK(aclnnAdd(adds[0].workspace, adds[0].workspaceSize, adds[0].executor, head));
    CHECK(aclrtMemcpyAsync(num, sizeof(int32_t), branchValue, sizeof(int32_t), ACL_MEMCPY_DEVICE_TO_DEVICE, head));
    CHECK(aclnnAdd(adds[1].workspace, adds[1].workspaceSize, adds[1].executor, branch0));
    CHECK(aclrtActiveStream(end, branch0));
    CHECK(aclnnAdd(adds[2].workspace, adds[2].workspaceSize, adds[2].executor, branch1));
    CHECK(aclrtActiveStream(end, branch1));
    CHECK(aclrtSwitchStream(num, ACL_RT_EQUAL, one, ACL_RT_SWITCH_INT32, branch1, nullptr, head));
    CHECK(aclrtSwitchStream(num, ACL_RT_EQUAL, two, ACL_RT_SWITCH_INT32, branch2, nullptr, head));
    CHECK(aclrtActiveStream(branch0, branch2));
    CHECK(aclmdlRIEndTask(model, end));
    CHECK(aclmdlRIBuildEnd(model, nullptr));

    CHECK(aclmdlRIExecuteAsync(model, executor));
    CHECK(aclrtSynchronizeStream(executor));
    if (Results(adds, copies, "executing") != 0) return -1;

    int32_t second = 2;  // the kept device copy puts it into num at the next execution
    CHECK(aclrtMemcpyAsync(branchValue, sizeof(second), &second, sizeof(second), ACL_MEMCPY_HOST_TO_DEVICE, copies));
    CHECK(aclrtSynchronizeStream(copies));
    CHECK(aclmdlRIExecuteAsync(model, executor));
    CHECK(aclrtSynchronizeStream(executor));
    if (Results(adds, copies, "second execution") != 0) return -1;

    for (aclrtStream stream : {head, branch0, branch1, branch2, end}) CHECK(aclmdlRIUnbindStream(model, stream));
    CHECK(aclmdlRIDestroy(model));
    for (aclrtStream stream : {head, branch0, branch1, branch2, end, copies, executor}) {
        CHECK(aclrtDestroyStream(stream));
    }
    for (Add &add : adds) {
        if (Release(add) != 0) return -1;
    }
    CHECK(aclDestroyScalar(alpha));
    for (void *word : {one, two, num, branchValue}) CHECK(aclrtFree(word));
    CHECK(aclrtDestroyContext(context));
    CHECK(aclrtResetDeviceForce(0));
    CHECK(aclFinalize());
    return 0;
}
