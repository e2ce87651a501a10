// An Ascend C kernel source as the samples write them: device code vnpu never compiles, and host wrappers.
#include "kernel_operator.h"
#include "scale_kernel.h"

using namespace AscendC;

namespace {
class KernelScale {
public:
    __aicore__ inline KernelScale() {}
    __aicore__ inline void Process(__gm__ float* x, __gm__ float* y, float factor, uint32_t perBlock)
    {
        uint32_t start = GetBlockIdx() * perBlock;
        for (uint32_t i = 0; i < perBlock; ++i) {
            y[start + i] = factor * x[start + i];
        }
    }
};
}  // namespace

extern "C" __global__ __aicore__ void ScaleKernel(__gm__ float* x, __gm__ float* y, float factor, uint32_t perBlock)
{
    KernelScale op;
    op.Process(x, y, factor, perBlock);
}

uint32_t ScaleDo(uint32_t blockDim, void* stream, float* x, float* y, float factor, uint32_t perBlock)
{
    return ScaleKernel<<<blockDim, nullptr, stream>>>(x, y, factor, perBlock);
}

extern "C" __global__ __aicore__ void KernelPrint()
{
    AscendC::printf("Hello World\n");
}

void HelloDo(uint32_t blockDim, void* stream) { KernelPrint<<<blockDim, nullptr, stream>>>(); }
