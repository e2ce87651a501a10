// Introspection and editing of a captured model from C (spec-modelri 3): capture a = x + 1, a task group
// { c = a * 2 }, d = a * 3, a value write and e = a + 5; list the model's streams and tasks (with the arrays too
// small as well), their types and sequence ids; edit the grouped kernel (Get -> clear taskGrp -> Set, its
// argument block's JSON changed on the host: c = a * 4), convert e's kernel into a value write, disable d, update,
// replay, and check the results.
// Prints "name code [message]" lines for calls, "name value" lines for what the program checked.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_mul.h"

static void Report(const char *name, aclError code)
{
    const char *message = code == ACL_SUCCESS ? nullptr : aclGetRecentErrMsg();
    std::printf("%s %d%s%s\n", name, code, message ? " " : "", message ? message : "");
}

static const int kN = 8;
static int64_t shape[1] = {kN};
static int64_t strides[1] = {1};

static aclTensor *Tensor(void *data)
{
    return aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, data);
}

static void Adds(void *out, void *self, float value, aclrtStream s)
{
    float one = 1.0F;
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    aclnnAddsGetWorkspaceSize(Tensor(self), aclCreateScalar(&value, ACL_FLOAT), aclCreateScalar(&one, ACL_FLOAT),
                              Tensor(out), &ws, &ex);
    Report("adds", aclnnAdds(nullptr, ws, ex, s));
}

static void Muls(void *out, void *self, float value, aclrtStream s)
{
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    aclnnMulsGetWorkspaceSize(Tensor(self), aclCreateScalar(&value, ACL_FLOAT), Tensor(out), &ws, &ex);
    Report("muls", aclnnMuls(nullptr, ws, ex, s));
}

static bool Equals(void *dev, float (*want)(int))
{
    float got[kN];
    aclrtMemcpy(got, sizeof(got), dev, sizeof(got), ACL_MEMCPY_DEVICE_TO_HOST);
    for (int i = 0; i < kN; ++i) {
        if (got[i] != want(i)) {
            return false;
        }
    }
    return true;
}

static uint64_t Word(void *dev)
{
    uint64_t word = 0;
    aclrtMemcpy(&word, sizeof(word), dev, sizeof(word), ACL_MEMCPY_DEVICE_TO_HOST);
    return word;
}

int main()
{
    Report("init", aclInit(nullptr));
    Report("set", aclrtSetDevice(0));
    aclrtStream s = nullptr;
    Report("stream", aclrtCreateStream(&s));
    void *x = nullptr, *a = nullptr, *c = nullptr, *d = nullptr, *e = nullptr, *w = nullptr, *w2 = nullptr;
    for (void **p : {&x, &a, &c, &d, &e, &w, &w2}) {
        aclrtMalloc(p, kN * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
        aclrtMemset(*p, kN * sizeof(float), 0, kN * sizeof(float));
    }
    float host[kN];
    for (int i = 0; i < kN; ++i) {
        host[i] = static_cast<float>(i);
    }
    aclrtMemcpy(x, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE);

    Report("capture-begin", aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    Adds(a, x, 1.0F, s);
    Report("group-begin", aclmdlRICaptureTaskGrpBegin(s));
    Muls(c, a, 2.0F, s);
    aclrtTaskGrp group = nullptr;
    Report("group-end", aclmdlRICaptureTaskGrpEnd(s, &group));
    Muls(d, a, 3.0F, s);
    Report("value-write", aclrtValueWrite(w, 7, 0, s));
    Adds(e, a, 5.0F, s);
    aclmdlRI model = nullptr;
    Report("capture-end", aclmdlRICaptureEnd(s, &model));

    // the streams: NULL array -> the count; too small -> 107039, the array untouched
    uint32_t numStreams = 99;
    Report("streams-count", aclmdlRIGetStreams(model, nullptr, &numStreams));
    std::printf("streams-count-value %u\n", numStreams);
    aclrtStream lane = reinterpret_cast<aclrtStream>(0x5A5A);
    numStreams = 0;
    Report("streams-short", aclmdlRIGetStreams(model, &lane, &numStreams));
    std::printf("streams-untouched %d\n", lane == reinterpret_cast<aclrtStream>(0x5A5A));
    numStreams = 1;
    Report("streams", aclmdlRIGetStreams(model, &lane, &numStreams));
    Report("streams-null-count", aclmdlRIGetStreams(model, &lane, nullptr));

    // the tasks: the count, a short array filled then 107039, a long one with its tail nulled
    uint32_t numTasks = 0;
    Report("tasks-count", aclmdlRIGetTasksByStream(lane, nullptr, &numTasks));
    std::printf("tasks-count-value %u\n", numTasks);
    aclmdlRITask tasks[8];
    numTasks = 2;
    Report("tasks-short", aclmdlRIGetTasksByStream(lane, tasks, &numTasks));
    std::printf("tasks-short-filled %u %d\n", numTasks, tasks[0] != nullptr && tasks[1] != nullptr);
    for (auto &t : tasks) {
        t = reinterpret_cast<aclmdlRITask>(0x77);
    }
    numTasks = 8;
    Report("tasks", aclmdlRIGetTasksByStream(lane, tasks, &numTasks));
    std::printf("tasks-tail-nulled %d\n", tasks[5] == nullptr && tasks[7] == nullptr);
    Report("tasks-user-stream", aclmdlRIGetTasksByStream(s, tasks, &numTasks));
    std::string types, seqs;
    for (uint32_t i = 0; i < 5; ++i) {
        aclmdlRITaskType type = ACL_MODEL_RI_TASK_DEFAULT;
        uint32_t seq = 99;
        aclmdlRITaskGetType(tasks[i], &type);
        aclmdlRITaskGetSeqId(tasks[i], &seq);
        types += std::to_string(type);
        seqs += std::to_string(seq);
    }
    std::printf("types %s\nseq-ids %s\n", types.c_str(), seqs.c_str());
    Report("type-null", aclmdlRITaskGetType(tasks[0], nullptr));
    aclrtLaunchKernelAttrValue timeout = {};
    Report("attr-timeout", aclmdlRIKernelTaskGetAttribute(tasks[0], ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, &timeout));
    std::printf("attr-timeout-value %u\n", timeout.timeout);

    // edit the grouped kernel: Get -> clear taskGrp -> Set, its arguments changed on the host (c = a * 4)
    aclmdlRITaskParams params;
    std::memset(&params, 0x33, sizeof(params));
    Report("get-params", aclmdlRITaskGetParams(tasks[1], &params));
    std::printf("params-size %zu\nparams-kernel %d %d\n", sizeof(params), params.type == ACL_MODEL_RI_TASK_KERNEL,
                params.taskGrp == group);
    std::printf("params-zeroed %d\n", params.rsv0[0] == 0 && params.rsv1[0] == 0 &&
                                          params.kernelTaskParams.cfg == nullptr);
    std::vector<char> text(params.kernelTaskParams.argsSize + 1, 0);
    Report("read-args", aclrtMemcpy(text.data(), params.kernelTaskParams.argsSize, params.kernelTaskParams.args,
                                    params.kernelTaskParams.argsSize, ACL_MEMCPY_DEVICE_TO_HOST));
    std::string json(text.data());
    size_t at = json.find("\"value\":2.0");
    std::printf("args-json %d\n", at != std::string::npos && json.find("\"op\":\"Muls\"") != std::string::npos);
    if (at != std::string::npos) {
        json.replace(at, 11, "\"value\":4.0");
    }
    params.taskGrp = nullptr;
    params.kernelTaskParams.args = &json[0];
    params.kernelTaskParams.isHostArgs = 1;
    params.kernelTaskParams.argsSize = json.size();
    Report("set-kernel", aclmdlRITaskSetParams(tasks[1], &params));

    // e's kernel becomes a value write of 42 into w2; d's kernel is disabled
    aclmdlRITaskParams value = {};
    value.type = ACL_MODEL_RI_TASK_VALUE_WRITE;
    value.valueWriteTaskParams.devAddr = w2;
    value.valueWriteTaskParams.value = 42;
    Report("set-value", aclmdlRITaskSetParams(tasks[4], &value));
    aclmdlRITaskType converted = ACL_MODEL_RI_TASK_DEFAULT;
    aclmdlRITaskGetType(tasks[4], &converted);
    std::printf("converted-type %d\n", converted);
    Report("disable", aclmdlRITaskDisable(tasks[2]));
    Report("execute-before-update", aclmdlRIExecuteAsync(model, s));
    Report("update", aclmdlRIUpdate(model));
    numTasks = 0;
    Report("tasks-after", aclmdlRIGetTasksByStream(lane, nullptr, &numTasks));
    std::printf("tasks-after-value %u\n", numTasks);

    Report("execute", aclmdlRIExecuteAsync(model, s));
    Report("sync", aclrtSynchronizeStream(s));
    std::printf("a %s\n", Equals(a, [](int i) { return i + 1.0F; }) ? "ok" : "WRONG");
    std::printf("c %s\n", Equals(c, [](int i) { return (i + 1.0F) * 4.0F; }) ? "ok" : "WRONG");
    std::printf("d %s\n", Equals(d, [](int) { return 0.0F; }) ? "ok" : "WRONG");
    std::printf("e %s\n", Equals(e, [](int) { return 0.0F; }) ? "ok" : "WRONG");
    std::printf("w %llu\nw2 %llu\n", static_cast<unsigned long long>(Word(w)), static_cast<unsigned long long>(Word(w2)));
    Report("destroy", aclmdlRIDestroy(model));
    Report("finalize", aclFinalize());
    return 0;
}
