// vnpu bench, figure 10: the cost of calls made from C through the toolkit's libraries.
//   calls <launches> <waits>  prints "launches_per_s X" (aclnnAdd phase 1 + phase 2, pipelined, then one
//   synchronize) and "wait_s Y" (one aclrtSynchronizeStreamWithTimeout(-1) of an idle stream: a waiting call that reaches the
//   daemon, where a plain synchronize of a stream known finished is answered by the client), timed in the program.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

#define CHECK(expr)                                                                          \
    do {                                                                                     \
        aclError r_ = (expr);                                                                \
        if (r_ != ACL_SUCCESS) {                                                             \
            const char *m_ = aclGetRecentErrMsg();                                           \
            std::fprintf(stderr, "%s = %d: %s\n", #expr, r_, m_ ? m_ : "");                  \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

static double Seconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv)
{
    const long launches = argc > 1 ? std::atol(argv[1]) : 1000;
    const long waits = argc > 2 ? std::atol(argv[2]) : 100;
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    int64_t shape[1] = {8}, strides[1] = {1};
    void *x = nullptr, *y = nullptr, *z = nullptr;
    CHECK(aclrtMalloc(&x, 32, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&y, 32, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&z, 32, ACL_MEM_MALLOC_HUGE_FIRST));
    aclTensor *a = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, x);
    aclTensor *b = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, y);
    aclTensor *c = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, z);
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    auto launch = [&](long n) {
        for (long i = 0; i < n; i++) {
            uint64_t workspace = 0;
            aclOpExecutor *executor = nullptr;
            CHECK(aclnnAddGetWorkspaceSize(a, b, alpha, c, &workspace, &executor));
            CHECK(aclnnAdd(nullptr, 0, executor, stream));
        }
        CHECK(aclrtSynchronizeStream(stream));
    };
    launch(launches / 10 + 1);  // warm-up
    double start = Seconds();
    launch(launches);
    double launched = Seconds() - start;
    start = Seconds();
    for (long i = 0; i < waits; i++) {
        CHECK(aclrtSynchronizeStreamWithTimeout(stream, -1));
    }
    double waited = Seconds() - start;
    std::printf("launches_per_s %.1f\nwait_s %.9f\n", launches / launched, waited / waits);
    CHECK(aclDestroyTensor(a));
    CHECK(aclDestroyTensor(b));
    CHECK(aclDestroyTensor(c));
    CHECK(aclDestroyScalar(alpha));
    CHECK(aclrtFree(x));
    CHECK(aclrtFree(y));
    CHECK(aclrtFree(z));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
