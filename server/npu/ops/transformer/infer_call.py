"""One inference-attention launch (FusedInferAttentionScore V1-V5, IncreFlashAttention, PromptFlashAttention),
its arguments gathered under one set of names so the operators share a single driver (`infer_attention.run`).

`Names` maps each role to the C name the launching operator gives it, so an error names the argument as that
operator's header spells it (IncreFlashAttentionV4 calls the KV lengths `actualSeqLengths` and the block table
`blocktable`; FusedInferAttentionScoreV4 `actualSeqLengthsKvOptional` and `blockTableOptional`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from server.npu.ops.transformer.attention_quant import Dequant

INT_MAX = 2147483647


@dataclass(frozen=True)
class Names:
    """The C names of the roles, as the launching operator's header spells them (FIA V4's by default)."""

    query: str = "query"
    key: str = "key"
    value: str = "value"
    pse: str = "pseShiftOptional"
    mask: str = "attenMaskOptional"
    q_lengths: str = "actualSeqLengthsOptional"
    kv_lengths: str = "actualSeqLengthsKvOptional"
    block_table: str = "blockTableOptional"
    query_padding: str = "queryPaddingSizeOptional"
    kv_padding: str = "kvPaddingSizeOptional"
    quant_scale2: str = "quantScale2Optional"
    out: str = "attentionOut"
    lse: str = "softmaxLse"


@dataclass
class InferCall:
    """The arguments of one launch; None for an absent optional tensor or array."""

    op: str
    query: np.ndarray
    key: Sequence[np.ndarray]
    value: Sequence[np.ndarray]
    out: np.ndarray
    num_heads: int
    scale: float
    layout: str
    kv_heads: int = 0
    names: Names = field(default_factory=Names)
    pse: np.ndarray | None = None
    mask: np.ndarray | None = None
    q_lengths: Sequence[int] | None = None
    kv_lengths: Sequence[int] | None = None
    pre_tokens: int = INT_MAX
    next_tokens: int = INT_MAX
    sparse_mode: int = 0
    inner_precise: int = 0
    block_table: np.ndarray | None = None
    block_size: int = 0
    query_padding: np.ndarray | None = None
    kv_padding: np.ndarray | None = None
    key_prefix: np.ndarray | None = None
    value_prefix: np.ndarray | None = None
    prefix_length: Sequence[int] | None = None
    query_rope: np.ndarray | None = None
    key_rope: np.ndarray | None = None
    sink: np.ndarray | None = None
    pse_type: int = 0
    q_start: Sequence[int] | None = None
    kv_start: Sequence[int] | None = None
    lse_flag: bool = False
    lse: np.ndarray | None = None
    quant_scale2: np.ndarray | None = None
    quant_offset2: np.ndarray | None = None
    key_dequant: Dequant | None = None
    value_dequant: Dequant | None = None
    full_quant: tuple[str, ...] = ()  # the C names of full-quantization arguments given (not implemented)
