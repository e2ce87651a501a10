"""Kernels of hicann/ops-math's operators: comparisons, pointwise math, reductions, sorting, shapes, fills, random.

Each module ends with FUNCTIONS (operator name without "aclnn" -> numpy kernel called by its C argument names).
"""
