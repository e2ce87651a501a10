"""The kernel tables of the area packages: disjoint names, the calling convention, and the C argument order of
the attention operators (their headers are long; a wrong order would read the wrong arguments)."""

from __future__ import annotations

import inspect

from server.npu.ops import math, nn, transformer
from server.npu.ops.transformer import fused_infer_attention

PACKAGES = {"math": math.FUNCTIONS, "nn": nn.FUNCTIONS, "transformer": transformer.FUNCTIONS}

FIA_V4 = [
    "query",
    "key",
    "value",
    "pseShiftOptional",
    "attenMaskOptional",
    "actualSeqLengthsOptional",
    "actualSeqLengthsKvOptional",
    "deqScale1Optional",
    "quantScale1Optional",
    "deqScale2Optional",
    "quantScale2Optional",
    "quantOffset2Optional",
    "antiquantScaleOptional",
    "antiquantOffsetOptional",
    "blockTableOptional",
    "queryPaddingSizeOptional",
    "kvPaddingSizeOptional",
    "keyAntiquantScaleOptional",
    "keyAntiquantOffsetOptional",
    "valueAntiquantScaleOptional",
    "valueAntiquantOffsetOptional",
    "keySharedPrefixOptional",
    "valueSharedPrefixOptional",
    "actualSharedPrefixLenOptional",
    "queryRopeOptional",
    "keyRopeOptional",
    "keyRopeAntiquantScaleOptional",
    "dequantScaleQueryOptional",
    "learnableSinkOptional",
    "numHeads",
    "scaleValue",
    "preTokens",
    "nextTokens",
    "inputLayout",
    "numKeyValueHeads",
    "sparseMode",
    "innerPrecise",
    "blockSize",
    "antiquantMode",
    "softmaxLseFlag",
    "keyAntiquantMode",
    "valueAntiquantMode",
    "queryQuantMode",
    "attentionOut",
    "softmaxLse",
]
FIA_V5 = [
    *FIA_V4[:29], "qStartIdxOptional", "kvStartIdxOptional", *FIA_V4[29:43], "pseType", *FIA_V4[43:]
]  # fmt: skip
IFA_V4 = [
    "query",
    "key",
    "value",
    "pseShift",
    "attenMask",
    "actualSeqLengths",
    "dequantScale1",
    "quantScale1",
    "dequantScale2",
    "quantScale2",
    "quantOffset2",
    "antiquantScale",
    "antiquantOffset",
    "blocktable",
    "kvPaddingSize",
    "numHeads",
    "scaleValue",
    "inputLayout",
    "numKeyValueHeads",
    "blockSize",
    "innerPrecise",
    "attentionOut",
]
PFA_V3 = [
    "query",
    "key",
    "value",
    "pseShift",
    "attenMask",
    "actualSeqLengths",
    "actualSeqLengthsKv",
    "deqScale1",
    "quantScale1",
    "deqScale2",
    "quantScale2",
    "quantOffset2",
    "numHeads",
    "scaleValue",
    "preTokens",
    "nextTokens",
    "inputLayout",
    "numKeyValueHeads",
    "sparseMode",
    "innerPrecise",
    "attentionOut",
]
FAS = [
    "query",
    "key",
    "value",
    "realShiftOptional",
    "dropMaskOptional",
    "paddingMaskOptional",
    "attenMaskOptional",
    "prefixOptional",
    "scaleValue",
    "keepProb",
    "preTokens",
    "nextTokens",
    "headNum",
    "inputLayout",
    "innerPrecise",
    "sparseMode",
    "softmaxMaxOut",
    "softmaxSumOut",
    "softmaxOutOut",
    "attentionOutOut",
]


def parameters(name: str) -> list[str]:
    (kernel,) = [table[name] for table in PACKAGES.values() if name in table]
    return list(inspect.signature(kernel).parameters)


def test_names_are_disjoint_and_every_kernel_follows_the_convention() -> None:
    seen: dict[str, str] = {}
    for package, table in PACKAGES.items():
        for name, kernel in table.items():
            assert name not in seen, f"{name} is in both {seen[name]} and {package}"
            seen[name] = package
            assert name[:1].isupper() and not name.startswith("aclnn")
            names = list(inspect.signature(kernel).parameters)
            assert names[-1] == "workspace", name
            assert len(set(names)) == len(names), name
            assert (kernel.__doc__ or "").strip(), f"{name} has no docstring"
    assert len(seen) >= 70


def test_attention_argument_order_matches_the_headers() -> None:
    assert parameters("FusedInferAttentionScoreV4")[:-1] == FIA_V4
    v5 = inspect.signature(fused_infer_attention.fused_infer_attention_score_v5).parameters  # not in the catalog yet
    assert list(v5)[:-1] == FIA_V5
    assert parameters("IncreFlashAttentionV4")[:-1] == IFA_V4
    assert parameters("PromptFlashAttentionV3")[:-1] == PFA_V3
    assert parameters("FlashAttentionScore")[:-1] == FAS
