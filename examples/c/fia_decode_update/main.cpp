// Decode attention updated in place, as vllm-ascend drives it: aclnnFusedInferAttentionScoreV4 over a paged KV cache
// is captured once in a task group, and every decode step re-issues it with that step's sequence lengths.
//
//   capture (stream):  query_h -> query_d (pinned host buffer, read at each replay)
//                      wait EXTERNAL event, reset it
//                      task group { FusedInferAttentionScoreV4(query_d, [keyCache], [valueCache], blockTable,
//                                   actualSeqLengthsKv = step 0's lengths, layout BSH, GQA 4 -> 2 heads) }
//                      out_d -> out_h
//   each step:         new query in query_h, lengths + 1 (batch 0) and + 2 (batch 1)
//                      update stream: aclmdlRICaptureTaskUpdateBegin, the operator with this step's lengths,
//                                     aclmdlRICaptureTaskUpdateEnd, record the event
//                      aclmdlRIExecuteAsync(model, stream), synchronize, check out_h
//
// The cache (fp16, BnBsH: blockNum x blockSize x numKeyValueHeads*headDim) is filled once with pseudo-random keys
// and values; its blocks are handed to the two sequences in a shuffled order through the block table. Each step's
// output is checked against attention computed here in double precision from the same fp16 inputs.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_fused_infer_attention_score_v4.h"

#define ACL_LOG(fmt, args...) fprintf(stdout, "[INFO] " fmt "\n", ##args)
#define ACL_ERR(fmt, args...) fprintf(stderr, "[ERROR] " fmt "\n", ##args)

// Every return code is checked: the failing call, its code and the runtime's message, then exit.
#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        auto ret_ = (call);                                                                              \
        if (ret_ != 0) {                                                                                 \
            const char *msg_ = aclGetRecentErrMsg();                                                     \
            ACL_ERR("%s failed (%s:%d): error %d: %s", #call, __FILE__, __LINE__, static_cast<int>(ret_), \
                    msg_ != nullptr ? msg_ : "(no message)");                                            \
            exit(EXIT_FAILURE);                                                                          \
        }                                                                                                \
    } while (0)
#define CHECK_NOT_NULL(expr)                                                                \
    do {                                                                                    \
        if ((expr) == nullptr) {                                                            \
            const char *msg_ = aclGetRecentErrMsg();                                        \
            ACL_ERR("%s returned NULL (%s:%d): %s", #expr, __FILE__, __LINE__,              \
                    msg_ != nullptr ? msg_ : "(no message)");                               \
            exit(EXIT_FAILURE);                                                             \
        }                                                                                   \
    } while (0)

namespace {
constexpr int64_t kBatch = 2;
constexpr int64_t kHeads = 4;     // query heads
constexpr int64_t kKvHeads = 2;   // key/value heads (GQA: 2 query heads share one)
constexpr int64_t kHeadDim = 32;
constexpr int64_t kBlockSize = 16;
constexpr int64_t kBlocksPerSeq = 4;  // room for 64 tokens a sequence
constexpr int64_t kBlockNum = kBatch * kBlocksPerSeq;
constexpr int kSteps = 10;
constexpr int64_t kFirstLength[kBatch] = {20, 33};
constexpr int64_t kGrowth[kBatch] = {1, 2};   // tokens a sequence gains each step
constexpr double kRtol = 2e-3;                // an fp16 result (2 ulp near 1.5) against a double reference
constexpr double kAtol = 1e-4;

struct Device {
    void *data = nullptr;
    aclTensor *tensor = nullptr;
};

Device MakeTensor(const std::vector<int64_t> &shape, aclDataType dataType, size_t itemSize)
{
    Device made;
    int64_t count = 1;
    for (auto d : shape) {
        count *= d;
    }
    CHECK(aclrtMalloc(&made.data, count * itemSize, ACL_MEM_MALLOC_HUGE_FIRST));
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
        strides[i] = shape[i + 1] * strides[i + 1];
    }
    made.tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0, ACL_FORMAT_ND,
                                  shape.data(), shape.size(), made.data);
    CHECK_NOT_NULL(made.tensor);
    return made;
}

// Deterministic pseudo-random values in [-1, 1) (xorshift32).
float NextRandom(uint32_t &state)
{
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
}

// scale * r + offset for r in [-1, 1): keys in [-1, 1), queries in [-3, 3) (sharper attention), values in [0.5, 2.5)
// (outputs near 1.5, so that the relative check means something)
void FillHalf(std::vector<aclFloat16> &half, std::vector<double> &exact, uint32_t &state, float scale, float offset)
{
    for (size_t i = 0; i < half.size(); i++) {
        half[i] = aclFloatToFloat16(scale * NextRandom(state) + offset);
        exact[i] = static_cast<double>(aclFloat16ToFloat(half[i]));
    }
}

// out[b][h][d] = sum_j softmax_j(scale * q[b][h] . k[b][g][j]) v[b][g][j][d], g = h / (heads / kvHeads),
// j over the sequence's first `length[b]` tokens, token j of sequence b in cache block table[b][j / blockSize].
std::vector<double> Reference(const std::vector<double> &query, const std::vector<double> &key,
                              const std::vector<double> &value, const std::vector<int32_t> &table,
                              const int64_t *length, double scale)
{
    const int64_t hidden = kKvHeads * kHeadDim;
    std::vector<double> out(kBatch * kHeads * kHeadDim, 0.0);
    for (int64_t b = 0; b < kBatch; b++) {
        for (int64_t h = 0; h < kHeads; h++) {
            const int64_t g = h / (kHeads / kKvHeads);
            const double *q = &query[(b * kHeads + h) * kHeadDim];
            std::vector<double> score(length[b]);
            double top = -INFINITY;
            for (int64_t j = 0; j < length[b]; j++) {
                int64_t slot = table[b * kBlocksPerSeq + j / kBlockSize] * kBlockSize + j % kBlockSize;
                const double *k = &key[slot * hidden + g * kHeadDim];
                double dot = 0.0;
                for (int64_t d = 0; d < kHeadDim; d++) {
                    dot += q[d] * k[d];
                }
                score[j] = dot * scale;
                top = std::fmax(top, score[j]);
            }
            double total = 0.0;
            for (auto &s : score) {
                s = std::exp(s - top);
                total += s;
            }
            double *o = &out[(b * kHeads + h) * kHeadDim];
            for (int64_t j = 0; j < length[b]; j++) {
                int64_t slot = table[b * kBlocksPerSeq + j / kBlockSize] * kBlockSize + j % kBlockSize;
                const double *v = &value[slot * hidden + g * kHeadDim];
                for (int64_t d = 0; d < kHeadDim; d++) {
                    o[d] += score[j] / total * v[d];
                }
            }
        }
    }
    return out;
}

struct Attention {
    Device query, key, value, table, out;
    aclTensorList *keys = nullptr;
    aclTensorList *values = nullptr;
    double scale = 1.0 / std::sqrt(static_cast<double>(kHeadDim));
    char layout[4] = "BSH";
};

// Phase 1 of aclnnFusedInferAttentionScoreV4 for these sequence lengths: a new executor (consumed by its launch).
aclOpExecutor *Prepare(Attention &a, const int64_t *length, uint64_t *workspaceSize)
{
    aclIntArray *lengthsKv = aclCreateIntArray(length, kBatch);
    CHECK_NOT_NULL(lengthsKv);
    aclOpExecutor *executor = nullptr;
    CHECK(aclnnFusedInferAttentionScoreV4GetWorkspaceSize(
        a.query.tensor, a.keys, a.values,
        nullptr, nullptr,                   // pseShift, attenMask
        nullptr, lengthsKv,                 // actualSeqLengths (one query token each), actualSeqLengthsKv
        nullptr, nullptr, nullptr, nullptr, nullptr,  // deqScale1, quantScale1, deqScale2, quantScale2, quantOffset2
        nullptr, nullptr,                   // antiquantScale, antiquantOffset
        a.table.tensor,                     // blockTable
        nullptr, nullptr,                   // queryPaddingSize, kvPaddingSize
        nullptr, nullptr, nullptr, nullptr,  // key/value antiquant scales and offsets
        nullptr, nullptr, nullptr,          // keySharedPrefix, valueSharedPrefix, actualSharedPrefixLen
        nullptr, nullptr, nullptr,          // queryRope, keyRope, keyRopeAntiquantScale
        nullptr, nullptr,                   // dequantScaleQuery, learnableSink
        kHeads, a.scale, 2147483647, 2147483647, a.layout, kKvHeads,
        0,          // sparseMode: no mask
        1,          // innerPrecise: high precision
        kBlockSize,
        0, false, 0, 0, 0,  // antiquantMode, softmaxLseFlag, keyAntiquantMode, valueAntiquantMode, queryQuantMode
        a.out.tensor, nullptr,  // attentionOut, softmaxLse (not asked for)
        workspaceSize, &executor));
    CHECK(aclDestroyIntArray(lengthsKv));
    return executor;
}

void *Workspace(uint64_t size, std::vector<void *> &keep)
{
    if (size == 0) {
        return nullptr;
    }
    void *memory = nullptr;
    CHECK(aclrtMalloc(&memory, size, ACL_MEM_MALLOC_HUGE_FIRST));
    keep.push_back(memory);
    return memory;
}
}  // namespace

int main()
{
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    aclrtStream updateStream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    CHECK(aclrtCreateStream(&updateStream));

    const int64_t queryCount = kBatch * kHeads * kHeadDim;
    const int64_t cacheCount = kBlockNum * kBlockSize * kKvHeads * kHeadDim;
    Attention a;
    a.query = MakeTensor({kBatch, 1, kHeads * kHeadDim}, ACL_FLOAT16, sizeof(aclFloat16));
    a.out = MakeTensor({kBatch, 1, kHeads * kHeadDim}, ACL_FLOAT16, sizeof(aclFloat16));
    a.key = MakeTensor({kBlockNum, kBlockSize, kKvHeads * kHeadDim}, ACL_FLOAT16, sizeof(aclFloat16));
    a.value = MakeTensor({kBlockNum, kBlockSize, kKvHeads * kHeadDim}, ACL_FLOAT16, sizeof(aclFloat16));
    a.table = MakeTensor({kBatch, kBlocksPerSeq}, ACL_INT32, sizeof(int32_t));
    a.keys = aclCreateTensorList(&a.key.tensor, 1);
    a.values = aclCreateTensorList(&a.value.tensor, 1);
    CHECK_NOT_NULL(a.keys);
    CHECK_NOT_NULL(a.values);

    // the cache and the block table, once (shuffled blocks: sequence 0 owns 5, 2, 7, 0; sequence 1 owns 3, 6, 1, 4)
    uint32_t rng = 20260801u;
    std::vector<aclFloat16> keyHalf(cacheCount), valueHalf(cacheCount);
    std::vector<double> key(cacheCount), value(cacheCount);
    FillHalf(keyHalf, key, rng, 1.0f, 0.0f);
    FillHalf(valueHalf, value, rng, 1.0f, 1.5f);
    const std::vector<int32_t> table = {5, 2, 7, 0, 3, 6, 1, 4};
    CHECK(aclrtMemcpy(a.key.data, cacheCount * 2, keyHalf.data(), cacheCount * 2, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(a.value.data, cacheCount * 2, valueHalf.data(), cacheCount * 2, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(a.table.data, table.size() * 4, table.data(), table.size() * 4, ACL_MEMCPY_HOST_TO_DEVICE));

    // pinned buffers the captured copies read and write at each replay
    aclFloat16 *queryHost = nullptr;
    aclFloat16 *outHost = nullptr;
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&queryHost), queryCount * sizeof(aclFloat16)));
    CHECK(aclrtMallocHost(reinterpret_cast<void **>(&outHost), queryCount * sizeof(aclFloat16)));
    std::vector<aclFloat16> queryHalf(queryCount);
    std::vector<double> query(queryCount);

    int64_t length[kBatch] = {kFirstLength[0], kFirstLength[1]};
    std::vector<void *> workspaces;
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = Prepare(a, length, &workspaceSize);
    void *workspace = Workspace(workspaceSize, workspaces);

    aclrtEvent event = nullptr;
    CHECK(aclrtCreateEventWithFlag(&event, ACL_EVENT_EXTERNAL));
    CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    CHECK(aclrtMemcpyAsync(a.query.data, queryCount * 2, queryHost, queryCount * 2, ACL_MEMCPY_HOST_TO_DEVICE,
                           stream));
    CHECK(aclrtStreamWaitEvent(stream, event));  // the update of this step comes first
    CHECK(aclrtResetEvent(event, stream));
    CHECK(aclmdlRICaptureTaskGrpBegin(stream));
    CHECK(aclnnFusedInferAttentionScoreV4(workspace, workspaceSize, executor, stream));
    aclrtTaskGrp group = nullptr;
    CHECK(aclmdlRICaptureTaskGrpEnd(stream, &group));
    CHECK(aclrtMemcpyAsync(outHost, queryCount * 2, a.out.data, queryCount * 2, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    aclmdlRI model = nullptr;
    CHECK(aclmdlRICaptureEnd(stream, &model));
    ACL_LOG("captured: attention in a task group, behind an EXTERNAL event");

    int failures = 0;
    for (int step = 0; step < kSteps; step++) {
        for (int64_t b = 0; b < kBatch; b++) {
            length[b] = kFirstLength[b] + kGrowth[b] * step;
        }
        FillHalf(queryHalf, query, rng, 3.0f, 0.0f);
        for (int64_t i = 0; i < queryCount; i++) {
            queryHost[i] = queryHalf[i];
        }
        // the update: this step's lengths (a new phase 1, as vllm-ascend's update_graph_params does)
        uint64_t stepWorkspaceSize = 0;
        aclOpExecutor *stepExecutor = Prepare(a, length, &stepWorkspaceSize);
        void *stepWorkspace = Workspace(stepWorkspaceSize, workspaces);
        CHECK(aclmdlRICaptureTaskUpdateBegin(updateStream, group));
        CHECK(aclnnFusedInferAttentionScoreV4(stepWorkspace, stepWorkspaceSize, stepExecutor, updateStream));
        CHECK(aclmdlRICaptureTaskUpdateEnd(updateStream));
        CHECK(aclrtRecordEvent(event, updateStream));
        CHECK(aclmdlRIExecuteAsync(model, stream));
        CHECK(aclrtSynchronizeStream(stream));

        std::vector<double> want = Reference(query, key, value, table, length, a.scale);
        int wrong = 0;
        double worst = 0.0;
        for (int64_t i = 0; i < queryCount; i++) {
            double got = static_cast<double>(aclFloat16ToFloat(outHost[i]));
            double error = std::fabs(got - want[i]);
            worst = std::fmax(worst, error);
            if (error > kAtol + kRtol * std::fabs(want[i])) {
                if (wrong++ < 3) {
                    ACL_ERR("step %d: out[%ld] = %.6f, expected %.6f", step, static_cast<long>(i), got, want[i]);
                }
            }
        }
        if (wrong == 0) {
            ACL_LOG("step %d: lengths %ld %ld, out[0] %.5f, matches double precision (largest error %.1e)", step,
                    static_cast<long>(length[0]), static_cast<long>(length[1]),
                    static_cast<double>(aclFloat16ToFloat(outHost[0])), worst);
        } else {
            failures++;
        }
    }

    CHECK(aclrtSynchronizeStream(updateStream));
    CHECK(aclmdlRIDestroy(model));
    CHECK(aclrtDestroyEvent(event));
    CHECK(aclDestroyTensorList(a.keys));  // destroys the key and value cache tensors with them, as in CANN
    CHECK(aclDestroyTensorList(a.values));
    for (Device *d : {&a.query, &a.out, &a.table}) {
        CHECK(aclDestroyTensor(d->tensor));
    }
    for (Device *d : {&a.query, &a.out, &a.key, &a.value, &a.table}) {
        CHECK(aclrtFree(d->data));
    }
    for (void *w : workspaces) {
        CHECK(aclrtFree(w));
    }
    CHECK(aclrtFreeHost(queryHost));
    CHECK(aclrtFreeHost(outHost));
    CHECK(aclrtDestroyStream(updateStream));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    if (failures != 0) {
        ACL_ERR("%d of %d steps differ from the reference", failures, kSteps);
        return EXIT_FAILURE;
    }
    ACL_LOG("fia_decode_update passed");
    return 0;
}
