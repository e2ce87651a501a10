"""Kernels of hicann/ops-nn's operators: index reads and writes, norms, activations, quantization, matmuls.

Each module ends with FUNCTIONS (operator name without "aclnn" -> numpy kernel called by its C argument names).
"""
