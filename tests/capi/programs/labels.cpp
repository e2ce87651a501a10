// Labels in a Build model, in the shape of CANN's label/0_simple_label flow (written for vnpu's tests): one
// persistent stream bound to a model; a switch on a device word over [left, right]; `left` guards out = in + 10 and
// then jumps to `done` (a second switch over a one-label list, on a zero word); `right` guards out = in + 20. The
// model runs with the index 0, then 1, then 9 (past maxValue: the last label), each result checked on the host.
// Then the refusals, each printed as `check <name> <code>`, and proof that the model still runs after them.
// Every value line is `check <name> <0 or 1 or code>`; the program exits 0 when its own calls succeeded.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

#define CHECK(call)                                                                                        \
    do {                                                                                                   \
        aclError r_ = (call);                                                                              \
        if (r_ != ACL_SUCCESS) {                                                                           \
            const char *m_ = aclGetRecentErrMsg();                                                         \
            std::printf("FAILED %s = %d (%s)\n", #call, static_cast<int>(r_), m_ ? m_ : "no message"); \
            return 1;                                                                                      \
        }                                                                                                  \
    } while (0)

namespace {

const int64_t kCount = 8;
const size_t kBytes = kCount * sizeof(float);

void Report(const char *name, long value) { std::printf("check %s %ld\n", name, value); }

void ReportCall(const char *name, aclError code) {
    const char *message = aclGetRecentErrMsg();
    std::printf("check %s %d\n", name, static_cast<int>(code));
    if (code != ACL_SUCCESS) std::printf("message %s %s\n", name, message ? message : "(null)");
}

struct Plus {  // out = in + value, an aclnnAdds launch with its own executor
    aclOpExecutor *executor = nullptr;
    uint64_t workspaceSize = 0;
};

int MakePlus(Plus &plus, aclTensor *in, aclTensor *out, float value) {
    float one = 1.0f;
    aclScalar *other = aclCreateScalar(&value, ACL_FLOAT);
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    CHECK(aclnnAddsGetWorkspaceSize(in, other, alpha, out, &plus.workspaceSize, &plus.executor));
    if (plus.workspaceSize != 0) return 1;
    aclDestroyScalar(other);
    aclDestroyScalar(alpha);
    return 0;
}

int SetWord(void *word, uint32_t value) {
    CHECK(aclrtMemcpy(word, sizeof(value), &value, sizeof(value), ACL_MEMCPY_HOST_TO_DEVICE));
    return 0;
}

// Runs the model and reports whether out == in + added on every element.
int RunAndCheck(aclmdlRI model, aclrtStream exec, void *out, const std::vector<float> &in, float added,
                const char *name) {
    std::vector<float> host(kCount, -1.0f);
    CHECK(aclmdlRIExecuteAsync(model, exec));
    CHECK(aclrtSynchronizeStream(exec));
    CHECK(aclrtMemcpy(host.data(), kBytes, out, kBytes, ACL_MEMCPY_DEVICE_TO_HOST));
    bool same = true;
    for (int64_t i = 0; i < kCount; ++i) same = same && host[i] == in[i] + added;
    Report(name, same ? 1 : 0);
    return 0;
}

}  // namespace

int main() {
    aclrtContext context = nullptr;
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateContext(&context, 0));

    std::vector<float> in(kCount);
    for (int64_t i = 0; i < kCount; ++i) in[i] = 0.5f * static_cast<float>(i) - 1.25f;
    void *inDev = nullptr, *outDev = nullptr, *index = nullptr, *zero = nullptr;
    CHECK(aclrtMalloc(&inDev, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&outDev, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&index, sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&zero, sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(inDev, kBytes, in.data(), kBytes, ACL_MEMCPY_HOST_TO_DEVICE));
    if (SetWord(index, 0) != 0 || SetWord(zero, 0) != 0) return 1;
    int64_t shape[1] = {kCount}, strides[1] = {1};
    aclTensor *inT = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, inDev);
    aclTensor *outT = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, outDev);
    Plus ten, twenty;
    if (MakePlus(ten, inT, outT, 10.0f) != 0 || MakePlus(twenty, inT, outT, 20.0f) != 0) return 1;

    aclrtStream stream = nullptr, exec = nullptr;
    CHECK(aclrtCreateStreamWithConfig(&stream, 0, ACL_STREAM_PERSISTENT));
    CHECK(aclrtCreateStream(&exec));
    aclmdlRI model = nullptr;
    CHECK(aclmdlRIBuildBegin(&model, 0));
    CHECK(aclmdlRIBindStream(model, stream, ACL_MODEL_STREAM_FLAG_HEAD));

    aclrtLabel branches[2] = {nullptr, nullptr}, done = nullptr;
    for (aclrtLabel &label : branches) CHECK(aclrtCreateLabel(&label));
    CHECK(aclrtCreateLabel(&done));
    aclrtLabelList branchList = nullptr, doneList = nullptr;
    CHECK(aclrtCreateLabelList(branches, 2, &branchList));
    CHECK(aclrtCreateLabelList(&done, 1, &doneList));

    CHECK(aclrtSwitchLabelByIndex(index, 2, branchList, stream));
    CHECK(aclrtSetLabel(branches[0], stream));
    CHECK(aclnnAdds(nullptr, 0, ten.executor, stream));
    CHECK(aclrtSwitchLabelByIndex(zero, 1, doneList, stream));
    CHECK(aclrtSetLabel(branches[1], stream));
    CHECK(aclnnAdds(nullptr, 0, twenty.executor, stream));
    CHECK(aclrtSetLabel(done, stream));
    CHECK(aclmdlRIEndTask(model, stream));
    CHECK(aclmdlRIBuildEnd(model, nullptr));

    if (RunAndCheck(model, exec, outDev, in, 10.0f, "index-0") != 0) return 1;
    if (SetWord(index, 1) != 0 || RunAndCheck(model, exec, outDev, in, 20.0f, "index-1") != 0) return 1;
    if (SetWord(index, 9) != 0 || RunAndCheck(model, exec, outDev, in, 20.0f, "index-9") != 0) return 1;

    // refusals: NULLs (100000), num out of range (107000, nothing written), a label in a second list, a label set
    // twice or before any list (507000), a stream bound to no model (107005), a destroyed label or list
    aclrtLabelList untouched = nullptr;
    aclrtLabel loose = nullptr, spare = nullptr;
    CHECK(aclrtCreateLabel(&spare));
    ReportCall("create-null", aclrtCreateLabel(nullptr));
    ReportCall("list-null-labels", aclrtCreateLabelList(nullptr, 2, &untouched));
    ReportCall("list-null-out", aclrtCreateLabelList(branches, 2, nullptr));
    ReportCall("list-num-0", aclrtCreateLabelList(&spare, 0, &untouched));
    ReportCall("list-num-65536", aclrtCreateLabelList(&spare, 65536, &untouched));
    ReportCall("list-second", aclrtCreateLabelList(branches, 1, &untouched));
    Report("list-untouched", untouched == nullptr ? 1 : 0);
    CHECK(aclrtCreateLabel(&loose));
    ReportCall("set-null", aclrtSetLabel(nullptr, stream));
    ReportCall("set-twice", aclrtSetLabel(branches[0], stream));
    ReportCall("set-no-list", aclrtSetLabel(loose, stream));
    ReportCall("set-unbound", aclrtSetLabel(spare, exec));
    ReportCall("switch-null", aclrtSwitchLabelByIndex(nullptr, 2, branchList, stream));
    ReportCall("switch-unbound", aclrtSwitchLabelByIndex(index, 2, branchList, exec));
    CHECK(aclrtDestroyLabel(loose));
    ReportCall("destroy-twice", aclrtDestroyLabel(loose));
    ReportCall("destroyed-in-list", aclrtCreateLabelList(&loose, 1, &untouched));
    if (SetWord(index, 0) != 0 || RunAndCheck(model, exec, outDev, in, 10.0f, "after-refusals") != 0) return 1;

    // the sample's teardown order: the model, then the lists, then the labels
    CHECK(aclmdlRIUnbindStream(model, stream));
    CHECK(aclmdlRIDestroy(model));
    CHECK(aclrtDestroyLabelList(branchList));
    ReportCall("list-destroy-twice", aclrtDestroyLabelList(branchList));
    CHECK(aclrtDestroyLabelList(doneList));
    for (aclrtLabel label : {branches[1], branches[0], done, spare}) CHECK(aclrtDestroyLabel(label));
    CHECK(aclDestroyTensor(inT));
    CHECK(aclDestroyTensor(outT));
    for (void *ptr : {inDev, outDev, index, zero}) CHECK(aclrtFree(ptr));
    CHECK(aclrtDestroyStream(exec));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtDestroyContext(context));
    CHECK(aclrtResetDeviceForce(0));
    CHECK(aclFinalize());
    std::printf("done\n");
    return 0;
}
