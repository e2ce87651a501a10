// Every argument kind of CANN's operator prototypes, from C, through aclnnKindsProbe (tests/kind_operators.py): a
// tensor list, an optional tensor given and NULL, a scalar list, bool and float arrays, double, float, char *, int8,
// int32 and uint64 attributes; the list host objects' sizes and ownership; and the codes and messages phase 1 gives
// for bad input. Prints "key value" lines for tests/capi/test_argument_kinds.py.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_kinds_probe.h"

namespace {
constexpr int64_t kLength = 5;

aclTensor *Vector(const std::vector<float> &values, void **device)
{
    std::vector<int64_t> shape = {kLength}, strides = {1};
    aclrtMalloc(device, kLength * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(*device, kLength * sizeof(float), values.data(), kLength * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE);
    return aclCreateTensor(shape.data(), 1, ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, shape.data(), 1, *device);
}

const char *Message()
{
    const char *text = aclGetRecentErrMsg();
    return text != nullptr ? text : "(none)";
}

struct Probe {
    aclTensor *self, *bias, *out;
    aclTensorList *others;
    aclScalarList *weights;
    aclBoolArray *use;
    aclFloatArray *gains;
    double epsilon;
    float ratio;
    char *layout;
    int8_t shift;
    int32_t repeat;
    uint64_t seed;
};

aclnnStatus Phase1(const Probe &p, uint64_t *size, aclOpExecutor **executor)
{
    return aclnnKindsProbeGetWorkspaceSize(p.self, p.others, p.bias, p.weights, p.use, p.gains, p.epsilon, p.ratio,
                                           p.layout, p.shift, p.repeat, p.seed, p.out, size, executor);
}

// phase 1 with one argument changed: its status and message
void Refused(const char *label, const Probe &p)
{
    uint64_t size = 0;
    aclOpExecutor *executor = nullptr;
    aclnnStatus status = Phase1(p, &size, &executor);
    printf("%s %d\n%s-message %s\n", label, status, label, Message());
}

void Run(const char *label, const Probe &p, aclrtStream stream, void *outDevice)
{
    uint64_t size = 0;
    aclOpExecutor *executor = nullptr;
    aclnnStatus status = Phase1(p, &size, &executor);
    if (status != 0) {
        printf("%s-failed %d %s\n", label, status, Message());
        return;
    }
    status = aclnnKindsProbe(nullptr, size, executor, stream);
    aclrtSynchronizeStream(stream);
    std::vector<float> got(kLength);
    aclrtMemcpy(got.data(), kLength * sizeof(float), outDevice, kLength * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    printf("%s %d", label, status);
    for (float v : got) {
        printf(" %.9g", v);
    }
    printf("\n");
}
}  // namespace

int main()
{
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);

    void *selfDevice, *biasDevice, *outDevice, *otherDevice[3];
    aclTensor *self = Vector({1.0f, 2.0f, 3.0f, 4.0f, 5.0f}, &selfDevice);
    aclTensor *bias = Vector({0.25f, -0.5f, 0.75f, -1.0f, 1.25f}, &biasDevice);
    aclTensor *out = Vector({0, 0, 0, 0, 0}, &outDevice);
    aclTensor *members[3] = {
        Vector({10.0f, 20.0f, 30.0f, 40.0f, 50.0f}, &otherDevice[0]),
        Vector({-1.0f, -2.0f, -3.0f, -4.0f, -5.0f}, &otherDevice[1]),
        Vector({0.5f, 0.25f, 0.125f, 0.0625f, 0.03125f}, &otherDevice[2]),
    };
    aclTensorList *others = aclCreateTensorList(members, 3);
    float weight0 = 2.0f;
    double weight1 = -3.0;
    int32_t weight2 = 4;
    aclScalar *scalars[3] = {aclCreateScalar(&weight0, ACL_FLOAT), aclCreateScalar(&weight1, ACL_DOUBLE),
                             aclCreateScalar(&weight2, ACL_INT32)};
    aclScalarList *weights = aclCreateScalarList(scalars, 3);
    bool useValues[3] = {true, false, true};
    aclBoolArray *use = aclCreateBoolArray(useValues, 3);
    float gainValues[3] = {0.5f, 2.0f, -1.25f};
    aclFloatArray *gains = aclCreateFloatArray(gainValues, 3);
    char layout[] = "REV";
    uint64_t sizes[4] = {0, 0, 0, 0};
    aclGetTensorListSize(others, &sizes[0]);
    aclGetScalarListSize(weights, &sizes[1]);
    aclGetBoolArraySize(use, &sizes[2]);
    aclGetFloatArraySize(gains, &sizes[3]);
    printf("sizes %llu %llu %llu %llu\n", (unsigned long long)sizes[0], (unsigned long long)sizes[1],
           (unsigned long long)sizes[2], (unsigned long long)sizes[3]);

    Probe probe = {self, bias, out, others, weights, use, gains, 0.125, 1.5f, layout, -3, 2, UINT64_MAX};
    Run("with-bias", probe, stream, outDevice);
    Probe noBias = probe;
    noBias.bias = nullptr;  // the optional tensor absent
    char nd[] = "ND";
    noBias.layout = nd;
    noBias.seed = 10;
    Run("without-bias", noBias, stream, outDevice);

    Probe bad = probe;
    bad.layout = nullptr;
    Refused("null-layout", bad);
    char bsh[] = "BSH";
    bad = probe;
    bad.layout = bsh;
    Refused("bad-layout", bad);
    bad = probe;
    bad.others = nullptr;
    Refused("null-list", bad);
    aclTensor *holed[2] = {members[0], nullptr};
    aclTensorList *withHole = aclCreateTensorList(holed, 2);
    bad = probe;
    bad.others = withHole;
    Refused("null-member", bad);
    bool twoValues[2] = {true, true};
    aclBoolArray *shortUse = aclCreateBoolArray(twoValues, 2);
    bad = probe;
    bad.use = shortUse;
    Refused("short-array", bad);
    bad = probe;
    bad.epsilon = -1.0;
    Refused("negative-epsilon", bad);
    bad = probe;
    bad.repeat = 0;
    Refused("zero-repeat", bad);

    printf("create-null-list %d\n", aclCreateTensorList(nullptr, 2) == nullptr);
    printf("create-null-list-message %s\n", Message());
    printf("create-null-array %d\n", aclCreateBoolArray(nullptr, 1) == nullptr);

    // a list owns its tensors: destroying it destroys them, and neither may be used again
    printf("destroy-list %d\n", aclDestroyTensorList(others));
    Refused("destroyed-list", probe);
    printf("destroy-member %d\n", aclDestroyTensor(members[0]));
    printf("destroy-member-message %s\n", Message());
    printf("destroy-scalar-list %d\n", aclDestroyScalarList(weights));
    printf("destroy-arrays %d %d\n", aclDestroyBoolArray(use), aclDestroyFloatArray(gains));
    aclDestroyBoolArray(shortUse);
    aclDestroyTensorList(withHole);
    aclDestroyTensor(self);
    aclDestroyTensor(bias);
    aclDestroyTensor(out);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
