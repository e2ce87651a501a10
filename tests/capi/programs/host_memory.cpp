// Host memory from C: pinned buffers written through plain pointers (and pointers inside them), pageable memory
// in synchronous and asynchronous copies, and a pageable copy refused inside a capture. Exits 0 when every value
// matches a reference computed here; prints one line per check.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_mul.h"

#define CHECK(expr)                                                                                 \
    do {                                                                                            \
        aclError r_ = (expr);                                                                       \
        if (r_ != ACL_SUCCESS) {                                                                    \
            const char *m_ = aclGetRecentErrMsg();                                                  \
            std::printf("FAILED %s = %d: %s\n", #expr, r_, m_ ? m_ : "(no message)");               \
            return 1;                                                                               \
        }                                                                                           \
    } while (0)

static int failures = 0;

static void Expect(const char *what, const float *got, const std::vector<double> &want)
{
    for (size_t i = 0; i < want.size(); i++) {
        if (std::fabs(got[i] - want[i]) > 1e-5 * std::fabs(want[i]) + 1e-6) {
            std::printf("MISMATCH %s [%zu]: %f != %f\n", what, i, got[i], want[i]);
            failures++;
            return;
        }
    }
    std::printf("ok %s\n", what);
}

int main()
{
    const int64_t n = 64;
    const size_t bytes = n * sizeof(float);
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    void *a = nullptr, *b = nullptr, *out = nullptr;
    CHECK(aclrtMalloc(&a, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&out, bytes, ACL_MEM_MALLOC_HUGE_FIRST));

    // inputs: a deterministic pseudo-random sequence
    std::vector<float> x(n), y(n);
    unsigned state = 12345;
    for (int64_t i = 0; i < n; i++) {
        state = state * 1103515245u + 12345u;
        x[i] = static_cast<float>((state >> 8) % 1000) / 100.0f - 5.0f;
        state = state * 1103515245u + 12345u;
        y[i] = static_cast<float>((state >> 8) % 1000) / 100.0f - 5.0f;
    }
    std::vector<double> product(n);
    for (int64_t i = 0; i < n; i++) {
        product[i] = static_cast<double>(x[i]) * static_cast<double>(y[i]);
    }

    // pinned memory written through the pointer; the second half goes in through a pointer inside the buffer
    float *pinned = nullptr;
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&pinned), 2 * bytes));
    for (int64_t i = 0; i < n; i++) {
        pinned[i] = x[i];
        pinned[n + i] = y[i];
    }
    CHECK(aclrtMemcpyAsync(a, bytes, pinned, bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK(aclrtMemcpyAsync(b, bytes, pinned + n, bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream));

    int64_t shape[1] = {n}, strides[1] = {1};
    aclTensor *ta = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, a);
    aclTensor *tb = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, b);
    aclTensor *to = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, out);
    uint64_t workspace = 0;
    aclOpExecutor *executor = nullptr;
    CHECK(aclnnMulGetWorkspaceSize(ta, tb, to, &workspace, &executor));
    CHECK(aclnnMul(nullptr, 0, executor, stream));
    // the product comes back into the first half of the pinned buffer, asynchronously (once the copies that read
    // the buffer have run: an asynchronous copy reads pinned memory when it executes, as on the device)
    CHECK(aclrtSynchronizeStream(stream));
    std::memset(pinned, 0, bytes);
    CHECK(aclrtMemcpyAsync(pinned, bytes, out, bytes, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK(aclrtSynchronizeStream(stream));
    Expect("pinned-async", pinned, product);

    // pageable memory: a synchronous copy out, and an asynchronous one (synchronous for pageable memory)
    std::vector<float> pageable(n, 0.0f);
    CHECK(aclrtMemcpy(pageable.data(), bytes, out, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    Expect("pageable-sync", pageable.data(), product);
    std::vector<float> later(n, 0.0f);
    CHECK(aclrtMemcpyAsync(later.data(), bytes, out, bytes, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK(aclrtSynchronizeStream(stream));
    Expect("pageable-async", later.data(), product);
    // a pageable source, then the buffer is reused at once: the copy took its bytes when it was called
    std::vector<float> source(y);
    CHECK(aclrtMemcpyAsync(a, bytes, source.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    std::fill(source.begin(), source.end(), -1.0f);
    std::vector<float> back(n, 0.0f);
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(back.data(), bytes, a, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    Expect("pageable-source", back.data(), std::vector<double>(y.begin(), y.end()));
    // ACL_MEMCPY_DEFAULT tells the sides by their addresses
    std::vector<float> guessed(n, 0.0f);
    CHECK(aclrtMemcpy(guessed.data(), bytes, out, bytes, ACL_MEMCPY_DEFAULT));
    Expect("default-kind", guessed.data(), product);

    // inside a capture, a pageable copy is refused and the capture goes on
    CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    aclError refused = aclrtMemcpyAsync(later.data(), bytes, out, bytes, ACL_MEMCPY_DEVICE_TO_HOST, stream);
    const char *why = aclGetRecentErrMsg();
    std::printf("captured-pageable %d %s\n", refused, why ? why : "(null)");
    CHECK(aclrtMemcpyAsync(pinned + n, bytes, out, bytes, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    aclmdlRI model = nullptr;
    CHECK(aclmdlRICaptureEnd(stream, &model));
    std::memset(pinned + n, 0, bytes);
    CHECK(aclmdlRIExecuteAsync(model, stream));
    CHECK(aclrtSynchronizeStream(stream));
    Expect("captured-pinned", pinned + n, product);

    CHECK(aclmdlRIDestroy(model));
    CHECK(aclDestroyTensor(ta));
    CHECK(aclDestroyTensor(tb));
    CHECK(aclDestroyTensor(to));
    CHECK(aclrtFreeHost(pinned));
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    CHECK(aclrtFree(out));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    std::printf("%s\n", failures == 0 ? "passed" : "FAILED");
    return failures == 0 ? 0 : 2;
}
