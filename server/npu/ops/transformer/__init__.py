"""Kernels of hicann/ops-transformer's operators: attention (FusedInferAttentionScore, IncreFlashAttention,
PromptFlashAttention, FlashAttentionScore), the paged KV cache write, positional embedding (RoPE), MoE routing
and grouped matmul.

Each module ends with FUNCTIONS (operator name without "aclnn" -> numpy kernel called by its C argument names);
FUNCTIONS here merges them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.npu.ops.transformer import (
    flash_attention_score,
    fused_infer_attention,
    grouped_matmul,
    incre_prompt_attention,
    kv_cache,
    moe,
    rope,
)

MODULES = (fused_infer_attention, incre_prompt_attention, flash_attention_score, kv_cache, rope, moe, grouped_matmul)
FUNCTIONS: dict[str, Callable[..., Any]] = {name: f for module in MODULES for name, f in module.FUNCTIONS.items()}
