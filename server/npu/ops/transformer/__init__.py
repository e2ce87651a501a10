"""Kernels of hicann/ops-transformer's operators: attention (FusedInferAttentionScore, IncreFlashAttention,
PromptFlashAttention, FlashAttentionScore), positional embedding (RoPE), MoE.

Each module ends with FUNCTIONS (operator name without "aclnn" -> numpy kernel called by its C argument names).
"""
