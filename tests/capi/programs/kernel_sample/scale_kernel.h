#ifndef VNPU_SCALE_KERNEL_H_
#define VNPU_SCALE_KERNEL_H_
#include <cstdint>
uint32_t ScaleDo(uint32_t blockDim, void* stream, float* x, float* y, float factor, uint32_t perBlock);
void HelloDo(uint32_t blockDim, void* stream);
#endif
