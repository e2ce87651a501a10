// What the native toolkit promises beyond the examples, one mode per run: phase 1 asked once per shape, a
// pipelined error's attribution, a daemon that dies mid-program, an unreachable daemon, bad handles.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <signal.h>
#include <unistd.h>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

extern "C" uint64_t vnpuPhase1RoundTrips(void);

static aclTensor *tensor(void *data, std::vector<int64_t> shape)
{
    std::vector<int64_t> strides(shape.size(), 1);
    for (int i = (int)shape.size() - 2; i >= 0; i--) strides[i] = strides[i + 1] * shape[i + 1];
    return aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, shape.data(),
                           shape.size(), data);
}

static int say(const char *label, int code)
{
    const char *m = aclGetRecentErrMsg();
    printf("%s %d %s\n", label, code, m ? m : "");
    return code;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "unreachable")) {
        say("init1", aclInit(nullptr));
        say("init2", aclInit(nullptr));
        say("malloc", aclrtSetDevice(0));
        return 0;
    }
    if (aclInit(nullptr) || aclrtSetDevice(0)) return say("init", 1);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    void *a, *b, *c;
    aclrtMalloc(&a, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&b, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&c, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    uint64_t ws;
    aclOpExecutor *ex;
    if (!strcmp(mode, "phase1")) {
        // the same shapes over fresh tensors and other addresses: one round trip; another shape: one more
        for (int i = 0; i < 50; i++) {
            char *base = (char *)(i % 2 ? a : b);
            aclTensor *x = tensor(base, {2, 4}), *y = tensor(c, {2, 4}), *z = tensor(base + 64, {2, 4});
            if (aclnnAddGetWorkspaceSize(x, y, alpha, z, &ws, &ex)) return say("phase1", 1);
            aclnnAdd(nullptr, ws, ex, stream);
            aclDestroyTensor(x), aclDestroyTensor(y), aclDestroyTensor(z);
        }
        printf("round-trips %llu\n", (unsigned long long)vnpuPhase1RoundTrips());
        aclTensor *x = tensor(a, {3, 4}), *y = tensor(c, {3, 4}), *z = tensor(b, {3, 4});
        aclnnAddGetWorkspaceSize(x, y, alpha, z, &ws, &ex);
        aclnnAdd(nullptr, ws, ex, stream);
        printf("round-trips %llu\n", (unsigned long long)vnpuPhase1RoundTrips());
        // an output that partially overlaps an input: the answer depends on where they lie
        aclTensor *o = tensor((char *)a + 4, {3, 4});
        say("overlap", aclnnAddGetWorkspaceSize(x, y, alpha, o, &ws, &ex));
        say("overlap-again", aclnnAddGetWorkspaceSize(x, y, alpha, o, &ws, &ex));
        aclTensor *wrong = tensor(a, {5, 4});
        say("mismatch", aclnnAddGetWorkspaceSize(x, wrong, alpha, z, &ws, &ex));
        printf("round-trips %llu\n", (unsigned long long)vnpuPhase1RoundTrips());
        say("sync", aclrtSynchronizeStream(stream));
    } else if (!strcmp(mode, "attribution")) {
        aclTensor *x = tensor(a, {2, 4}), *y = tensor(c, {2, 4}), *z = tensor(b, {2, 4});
        aclnnAddGetWorkspaceSize(x, y, alpha, z, &ws, &ex);
        aclnnAdd(nullptr, ws, ex, stream);
        aclrtFree(b);
        aclnnAddGetWorkspaceSize(x, y, alpha, z, &ws, &ex);
        say("launch", aclnnAdd(nullptr, ws, ex, stream));  // pipelined: returns at once
        aclnnAddGetWorkspaceSize(x, y, alpha, z, &ws, &ex);
        aclnnAdd(nullptr, ws, ex, stream);
        say("sync", aclrtSynchronizeStream(stream));
        say("sync-again", aclrtSynchronizeStream(stream));
    } else if (!strcmp(mode, "handles")) {
        aclTensor *x = tensor(a, {2, 4});
        aclDestroyTensor(x);
        say("freed-tensor", aclnnAddGetWorkspaceSize(x, x, alpha, x, &ws, &ex));
        say("foreign-tensor", aclnnAddGetWorkspaceSize((aclTensor *)&one, nullptr, alpha, nullptr, &ws, &ex));
        say("scalar-as-tensor", aclnnAddGetWorkspaceSize((aclTensor *)alpha, nullptr, alpha, nullptr, &ws, &ex));
        say("destroy-twice", aclDestroyTensor(x));
        say("null-executor-out", aclnnAddGetWorkspaceSize(nullptr, nullptr, alpha, nullptr, &ws, nullptr));
        say("bad-executor", aclnnAdd(nullptr, 0, (aclOpExecutor *)&one, stream));
        say("null-out", aclrtMalloc(nullptr, 16, ACL_MEM_MALLOC_HUGE_FIRST));
        void *p;
        say("huge-malloc", aclrtMalloc(&p, (size_t)-1, ACL_MEM_MALLOC_HUGE_FIRST));
        say("bad-stream", aclrtSynchronizeStream((aclrtStream)0x1234));
        say("bad-event", aclrtRecordEvent((aclrtEvent)0x99999, stream));
        say("sync", aclrtSynchronizeStream(stream));
        say("not-implemented", aclrtMemcpy2d(a, 16, b, 16, 16, 1, ACL_MEMCPY_DEVICE_TO_DEVICE));
    } else if (!strcmp(mode, "die")) {
        say("before", aclrtSynchronizeStream(stream));
        kill((pid_t)atoi(argv[2]), SIGKILL);
        sleep(1);
        say("after", aclrtSynchronizeStream(stream));
        say("launch-after", aclrtMemsetAsync(a, 16, 0, 16, stream));
        say("malloc-after", aclrtMalloc(&a, 16, ACL_MEM_MALLOC_HUGE_FIRST));
        return 0;
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    say("finalize", aclFinalize());
    return 0;
}
