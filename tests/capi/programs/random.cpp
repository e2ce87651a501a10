// Random numbers from C in the shape of CANN's built_in_task/1_random_num_task sample: one 16-byte counter,
// zeroed once, then normal fp32, truncated normal bf16, uniform fp16 and int32, and a dropout mask (its ratio set
// through one member of the union and its size through another, as the sample does). For each launch: the
// dataType the call left in the struct, and whether the values are in range; then the counter reset reproduces
// the first launch, a struct launched again without refilling dataType, a NULL task and a reserve.
// Prints "name code [message]" lines for calls, "name value" lines for what the program checked.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "acl/acl.h"

static void Report(const char *name, aclError code)
{
    const char *message = code == ACL_SUCCESS ? nullptr : aclGetRecentErrMsg();
    std::printf("%s %d%s%s\n", name, code, message ? " " : "", message ? message : "");
}

static void Value(aclrtRandomParaInfo &para, const void *value, uint8_t size)
{
    std::memcpy(para.valueOrAddr, value, size);
    para.size = size;
    para.isAddr = 0;
}

// seed 0, `num` values: what every helper of the sample fills the same way
static void Common(aclrtRandomNumTaskInfo &info, uint64_t num, void *counter, void *out)
{
    uint64_t seed = 0;
    info.randomParaAddr = nullptr;
    info.randomCounterAddr = counter;
    info.randomResultAddr = out;
    Value(info.randomSeed, &seed, sizeof(seed));
    Value(info.randomNum, &num, sizeof(num));
}

static aclrtRandomNumTaskInfo Normal(aclDataType type, bool truncated, const void *mean, const void *stddev,
                                     uint8_t size, uint64_t num, void *counter, void *out)
{
    aclrtRandomNumTaskInfo info = {};
    info.dataType = type;
    info.randomNumFuncParaInfo.funcType =
        truncated ? ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS : ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS;
    Value(info.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean, mean, size);
    Value(info.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev, stddev, size);
    Common(info, num, counter, out);
    return info;
}

static aclrtRandomNumTaskInfo Uniform(aclDataType type, const void *low, const void *high, uint8_t size,
                                      uint64_t num, void *counter, void *out)
{
    aclrtRandomNumTaskInfo info;  // not zeroed, as in the sample: every field the runtime reads is set
    std::memset(info.rsv, 0x5A, sizeof(info.rsv));
    info.dataType = type;
    info.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS;
    Value(info.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, low, size);
    Value(info.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, high, size);
    Common(info, num, counter, out);
    return info;
}

static float Bf16(uint16_t bits)
{
    uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &wide, sizeof(value));
    return value;
}

static uint64_t CounterLow(void *counter)
{
    uint64_t words[2] = {0, 0};
    aclrtMemcpy(words, sizeof(words), counter, sizeof(words), ACL_MEMCPY_DEVICE_TO_HOST);
    return words[0];
}

static const uint64_t kNum = 128;

// launch, synchronize, copy back: the codes, and the dataType the call left in the struct
static void Run(const char *name, aclrtRandomNumTaskInfo &info, aclrtStream stream, void *out, void *host)
{
    char label[64];
    std::snprintf(label, sizeof(label), "%s-launch", name);
    Report(label, aclrtRandomNumAsync(&info, stream, nullptr));
    std::snprintf(label, sizeof(label), "%s-sync", name);
    Report(label, aclrtSynchronizeStream(stream));
    std::snprintf(label, sizeof(label), "%s-d2h", name);
    Report(label, aclrtMemcpy(host, kNum * 8, out, kNum * 8, ACL_MEMCPY_DEVICE_TO_HOST));
    std::printf("%s-type %d\n", name, static_cast<int>(info.dataType));
}

int main()
{
    Report("init", aclInit(nullptr));
    Report("set", aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    Report("stream", aclrtCreateStream(&stream));
    void *out = nullptr, *counter = nullptr;
    Report("malloc-out", aclrtMalloc(&out, kNum * 8, ACL_MEM_MALLOC_HUGE_FIRST));
    Report("malloc-counter", aclrtMalloc(&counter, 16, ACL_MEM_MALLOC_HUGE_FIRST));
    Report("zero-counter", aclrtMemset(counter, 16, 0, 16));
    static unsigned char host[kNum * 8], first[kNum * 4];

    float mean = 3.0f, stddev = 2.0f;
    aclrtRandomNumTaskInfo normal = Normal(ACL_FLOAT, false, &mean, &stddev, sizeof(float), kNum, counter, out);
    Run("normal", normal, stream, out, host);
    const float *f32 = reinterpret_cast<const float *>(host);
    double sum = 0;
    bool finite = true;
    for (uint64_t i = 0; i < kNum; ++i) {
        sum += f32[i];
        finite = finite && std::isfinite(f32[i]);
    }
    std::memcpy(first, host, sizeof(first));
    std::printf("normal-values %s\n", finite && sum / kNum > 2.2 && sum / kNum < 3.8 ? "ok" : "WRONG");
    uint64_t after = CounterLow(counter);
    std::printf("counter-after-normal %llu\n", static_cast<unsigned long long>(after));

    uint16_t meanBf16 = 0x3F80, stddevBf16 = 0x4000;  // bf16 1.0 and 2.0, as the sample writes them
    aclrtRandomNumTaskInfo truncated = Normal(ACL_BF16, true, &meanBf16, &stddevBf16, 2, kNum, counter, out);
    Run("truncated", truncated, stream, out, host);
    const uint16_t *u16 = reinterpret_cast<const uint16_t *>(host);
    bool inside = true;
    for (uint64_t i = 0; i < kNum; ++i) {
        inside = inside && Bf16(u16[i]) >= -3.0f && Bf16(u16[i]) <= 5.0f;  // 1 +- 2 x 2
    }
    std::printf("truncated-values %s\n", inside ? "ok" : "WRONG");

    uint16_t lowFp16 = 0x3C00, highFp16 = 0x4000;  // fp16 1.0 and 2.0
    aclrtRandomNumTaskInfo half = Uniform(ACL_FLOAT16, &lowFp16, &highFp16, 2, kNum, counter, out);
    Run("uniform-fp16", half, stream, out, host);
    bool ranged = true;
    for (uint64_t i = 0; i < kNum; ++i) {
        float v = aclFloat16ToFloat(u16[i]);
        ranged = ranged && v >= 1.0f && v <= 2.0f;  // rounding to fp16 may reach max itself
    }
    std::printf("uniform-fp16-values %s\n", ranged ? "ok" : "WRONG");

    int32_t lowInt = 1, highInt = 100;
    aclrtRandomNumTaskInfo ints = Uniform(ACL_INT32, &lowInt, &highInt, sizeof(int32_t), kNum, counter, out);
    Run("uniform-int32", ints, stream, out, host);
    const int32_t *i32 = reinterpret_cast<const int32_t *>(host);
    bool integral = true;
    for (uint64_t i = 0; i < kNum; ++i) {
        integral = integral && i32[i] >= 1 && i32[i] < 100;
    }
    std::printf("uniform-int32-values %s\n", integral ? "ok" : "WRONG");

    Report("fill-out", aclrtMemset(out, kNum * 8, 0xA5, kNum * 8));
    aclrtRandomNumTaskInfo mask = {};
    float ratio = 0.4f;
    mask.dataType = ACL_FLOAT;
    mask.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK;
    std::memcpy(mask.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation.valueOrAddr, &ratio,
                sizeof(ratio));
    mask.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean.size = sizeof(float);  // the same memory
    mask.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean.isAddr = 0;
    Common(mask, kNum, counter, out);
    Run("dropout", mask, stream, out, host);
    int kept = 0;
    for (uint64_t i = 0; i < kNum / 8; ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            kept += (host[i] >> bit) & 1;
        }
    }
    bool untouched = host[kNum / 8] == 0xA5 && host[kNum * 8 - 1] == 0xA5;  // 128 bits: 16 bytes written
    std::printf("dropout-values %s\n", kept > 50 && kept < 105 && untouched ? "ok" : "WRONG");
    uint64_t last = CounterLow(counter);
    std::printf("counter-advances %d\n", last > after && after > 0);

    // the counter zeroed again and the struct refilled: the first launch's numbers again
    Report("rezero-counter", aclrtMemset(counter, 16, 0, 16));
    normal = Normal(ACL_FLOAT, false, &mean, &stddev, sizeof(float), kNum, counter, out);
    Run("repeat", normal, stream, out, host);
    std::printf("repeat-same %d\n", std::memcmp(first, host, sizeof(first)) == 0);

    // launched again as it is: dataType now holds the runtime's FP32 (6), which is ACL_INT16 to the ACL layer
    Report("reuse-launch", aclrtRandomNumAsync(&normal, stream, nullptr));
    Report("reuse-sync", aclrtSynchronizeStream(stream));
    std::printf("reuse-type %d\n", static_cast<int>(normal.dataType));
    Report("null-launch", aclrtRandomNumAsync(nullptr, stream, nullptr));
    Report("null-sync", aclrtSynchronizeStream(stream));
    int token = 0;
    aclrtRandomNumTaskInfo reserved = Normal(ACL_FLOAT, false, &mean, &stddev, sizeof(float), kNum, counter, out);
    Report("reserve-launch", aclrtRandomNumAsync(&reserved, stream, &token));
    Report("reserve-sync", aclrtSynchronizeStream(stream));
    std::printf("reserve-type %d\n", static_cast<int>(reserved.dataType));  // written before the runtime refused

    Report("free-out", aclrtFree(out));
    Report("free-counter", aclrtFree(counter));
    Report("destroy", aclrtDestroyStream(stream));
    Report("reset", aclrtResetDeviceForce(0));
    Report("finalize", aclFinalize());
    return 0;
}
