"""The aclnn declaration catalog (proto/aclnn/catalog): counts, families, and exact prototypes.

The expected prototypes below were written from a reading of CANN's headers and OpDefs (hicann/ops-math
c419332, ops-nn e5c3fa9, ops-transformer bfbbec8, ops-cv 6ae8765), not from the generator's output, so
these tests fail when the generator regresses. A parameter is written as in C, then `>` for an output,
`<>` for a tensor written in place, `?` when it may be NULL.

Set VNPU_CANN_OPS to a directory holding ops-math/ ops-nn/ ops-transformer/ ops-cv/ checkouts to also run
the developer tests: the extractor must reproduce the checked-in table, and every operator an example
program of those repositories calls must be called with the catalog's number of arguments.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from proto.aclnn.catalog import (
    DIRECTIONS,
    KINDS,
    REPOS,
    STANDARD_LAUNCH,
    CParam,
    catalog,
    decode_ops,
)
from proto.aclnn.catalog.cheader import read_header
from proto.aclnn.catalog.encode import encode_op
from proto.aclnn.catalog.generated import camel_case, generate, snake_case
from proto.aclnn.catalog.opdef import OpDefAttr, read_opdefs

COUNTS = {
    ("math", "header"): 395,
    ("math", "opdef"): 76,
    ("nn", "header"): 351,
    ("nn", "opdef"): 188,
    ("transformer", "header"): 119,
    ("transformer", "opdef"): 32,
    ("cv", "header"): 44,
    ("cv", "opdef"): 8,
}
TENSOR = "const aclTensor *"
EXPECTED_TEXT = """
Add math aclnn_add.h: const aclTensor *self, const aclTensor *other, const aclScalar *alpha, aclTensor *out>
Adds math aclnn_add.h: const aclTensor *self, const aclScalar *other, const aclScalar *alpha, aclTensor *out>
InplaceAdd math aclnn_add.h: const aclTensor *selfRef<>, const aclTensor *other, const aclScalar *alpha
Matmul nn aclnn_matmul.h: const aclTensor *self, const aclTensor *mat2, aclTensor *out>, int8_t cubeMathType
RmsNorm nn aclnn_rms_norm.h: const aclTensor *x, const aclTensor *gamma, double epsilon, const aclTensor *yOut>,
    const aclTensor *rstdOut>
AddRmsNorm nn aclnn_add_rms_norm.h: const aclTensor *x1, const aclTensor *x2, const aclTensor *gamma, double epsilon,
    aclTensor *yOut>, aclTensor *rstdOut>, aclTensor *xOut>
SwiGlu nn aclnn_swi_glu.h: const aclTensor *x, int64_t dim, const aclTensor *out>
DequantSwigluQuantV2 nn aclnn_dequant_swiglu_quant_v2.h: const aclTensor *x, const aclTensor *weightScaleOptional?,
    const aclTensor *activationScaleOptional?, const aclTensor *biasOptional?, const aclTensor *quantScaleOptional?,
    const aclTensor *quantOffsetOptional?, const aclTensor *groupIndexOptional?, bool activateLeft,
    char *quantModeOptional?, int64_t dstType, char *roundModeOptional?, int64_t activateDim, int64_t swigluMode,
    double clampLimit, double gluAlpha, double gluBias, const aclTensor *yOut>, const aclTensor *scaleOut>
FusedInferAttentionScoreV4 transformer aclnn_fused_infer_attention_score_v4.h: const aclTensor *query,
    const aclTensorList *key, const aclTensorList *value, const aclTensor *pseShiftOptional?,
    const aclTensor *attenMaskOptional?, const aclIntArray *actualSeqLengthsOptional?,
    const aclIntArray *actualSeqLengthsKvOptional?, const aclTensor *deqScale1Optional?,
    const aclTensor *quantScale1Optional?, const aclTensor *deqScale2Optional?,
    const aclTensor *quantScale2Optional?, const aclTensor *quantOffset2Optional?,
    const aclTensor *antiquantScaleOptional?, const aclTensor *antiquantOffsetOptional?,
    const aclTensor *blockTableOptional?, const aclTensor *queryPaddingSizeOptional?,
    const aclTensor *kvPaddingSizeOptional?, const aclTensor *keyAntiquantScaleOptional?,
    const aclTensor *keyAntiquantOffsetOptional?, const aclTensor *valueAntiquantScaleOptional?,
    const aclTensor *valueAntiquantOffsetOptional?, const aclTensor *keySharedPrefixOptional?,
    const aclTensor *valueSharedPrefixOptional?, const aclIntArray *actualSharedPrefixLenOptional?,
    const aclTensor *queryRopeOptional?, const aclTensor *keyRopeOptional?,
    const aclTensor *keyRopeAntiquantScaleOptional?, const aclTensor *dequantScaleQueryOptional?,
    const aclTensor *learnableSinkOptional?, int64_t numHeads, double scaleValue, int64_t preTokens,
    int64_t nextTokens, char *inputLayout, int64_t numKeyValueHeads, int64_t sparseMode, int64_t innerPrecise,
    int64_t blockSize, int64_t antiquantMode, bool softmaxLseFlag, int64_t keyAntiquantMode,
    int64_t valueAntiquantMode, int64_t queryQuantMode, const aclTensor *attentionOut>, const aclTensor *softmaxLse>
IncreFlashAttentionV4 transformer aclnn_incre_flash_attention_v4.h: const aclTensor *query, const aclTensorList *key,
    const aclTensorList *value, const aclTensor *pseShift, const aclTensor *attenMask,
    const aclIntArray *actualSeqLengths, const aclTensor *dequantScale1, const aclTensor *quantScale1,
    const aclTensor *dequantScale2, const aclTensor *quantScale2, const aclTensor *quantOffset2,
    const aclTensor *antiquantScale, const aclTensor *antiquantOffset, const aclTensor *blocktable,
    const aclTensor *kvPaddingSize, int64_t numHeads, double scaleValue, char *inputLayout, int64_t numKeyValueHeads,
    int64_t blockSize, int64_t innerPrecise, const aclTensor *attentionOut>
PromptFlashAttentionV3 transformer aclnn_prompt_flash_attention_v3.h: const aclTensor *query, const aclTensor *key,
    const aclTensor *value, const aclTensor *pseShift, const aclTensor *attenMask,
    const aclIntArray *actualSeqLengths, const aclIntArray *actualSeqLengthsKv, const aclTensor *deqScale1,
    const aclTensor *quantScale1, const aclTensor *deqScale2, const aclTensor *quantScale2,
    const aclTensor *quantOffset2, int64_t numHeads, double scaleValue, int64_t preTokens, int64_t nextTokens,
    char *inputLayout, int64_t numKeyValueHeads, int64_t sparseMode, int64_t innerPrecise,
    const aclTensor *attentionOut>
FlashAttentionScore transformer aclnn_flash_attention_score.h: const aclTensor *query, const aclTensor *key,
    const aclTensor *value, const aclTensor *realShiftOptional?, const aclTensor *dropMaskOptional?,
    const aclTensor *paddingMaskOptional?, const aclTensor *attenMaskOptional?, const aclIntArray *prefixOptional?,
    double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens, int64_t headNum, char *inputLayout,
    int64_t innerPrecise, int64_t sparseMode, const aclTensor *softmaxMaxOut>, const aclTensor *softmaxSumOut>,
    const aclTensor *softmaxOutOut>, const aclTensor *attentionOutOut>
ScatterPaKvCache transformer aclnn_scatter_pa_kv_cache.h: const aclTensor *key, aclTensor *keyCacheRef<>,
    const aclTensor *slotMapping, const aclTensor *value, aclTensor *valueCacheRef<>,
    const aclTensor *compressLensOptional?, const aclTensor *compressSeqOffsetOptional?,
    const aclTensor *seqLensOptional?, char *cacheModeOptional?, char *scatterModeOptional?,
    const aclIntArray *stridesOptional?, const aclIntArray *offsetsOptional?
RotaryPositionEmbedding transformer aclnn_rotary_position_embedding.h: const aclTensor *x, const aclTensor *cos,
    const aclTensor *sin, int64_t mode, aclTensor *out>
ApplyRotaryPosEmb transformer aclnn_apply_rotary_pos_emb.h: aclTensor *queryRef<>, aclTensor *keyRef<>,
    const aclTensor *cos, const aclTensor *sin, int64_t layout
QuantMatmulV4 nn aclnn_quant_matmul_v4.h: const aclTensor *x1, const aclTensor *x2, const aclTensor *scale,
    const aclTensor *offset, const aclTensor *pertokenScaleOptional?, const aclTensor *bias, bool transposeX1,
    bool transposeX2, const aclTensor *out>
WeightQuantBatchMatmulV2 nn aclnn_weight_quant_batch_matmul_v2.h: const aclTensor *x, const aclTensor *weight,
    const aclTensor *antiquantScale, const aclTensor *antiquantOffsetOptional?, const aclTensor *quantScaleOptional?,
    const aclTensor *quantOffsetOptional?, const aclTensor *biasOptional?, int antiquantGroupSize,
    const aclTensor *y>
GroupedMatmulV4 transformer aclnn_grouped_matmul_v4.h: const aclTensorList *x, const aclTensorList *weight,
    const aclTensorList *biasOptional?, const aclTensorList *scaleOptional?, const aclTensorList *offsetOptional?,
    const aclTensorList *antiquantScaleOptional?, const aclTensorList *antiquantOffsetOptional?,
    const aclTensorList *perTokenScaleOptional?, const aclTensor *groupListOptional?,
    const aclTensorList *activationInputOptional?, const aclTensorList *activationQuantScaleOptional?,
    const aclTensorList *activationQuantOffsetOptional?, int64_t splitItem, int64_t groupType, int64_t groupListType,
    int64_t actType, aclTensorList *out>, aclTensorList *activationFeatureOutOptional>?,
    aclTensorList *dynQuantScaleOutOptional>?
MoeGatingTopKSoftmax transformer aclnn_moe_gating_top_k_softmax.h: const aclTensor *x,
    const aclTensor *finishedOptional?, int64_t k, const aclTensor *yOut>, const aclTensor *expertIdxOut>,
    const aclTensor *rowIdxOut>
Embedding nn aclnn_embedding.h: const aclTensor *weight, const aclTensor *indices, const aclTensor *out>
Cat math aclnn_cat.h: const aclTensorList *tensors, int64_t dim, aclTensor *out>
Topk nn aclnn_topk.h: const aclTensor *self, int64_t k, int64_t dim, bool largest, bool sorted,
    aclTensor *valuesOut>, aclTensor *indicesOut>
Sort math aclnn_sort.h: const aclTensor *self, bool stable, int64_t dim, bool descending, aclTensor *valuesOut>,
    aclTensor *indicesOut>
ArgMax math aclnn_argmax.h: const aclTensor *self, int64_t dim, bool keepdim, aclTensor *out>
Cumsum math aclnn_cumsum.h: const aclTensor *self, int64_t dim, aclDataType dtype, aclTensor *out>
SyncBatchNormGatherStats nn aclnn_sync_batch_norm_gather_stats.h: const aclTensor *totalSum,
    const aclTensor *totalSquareSum, const aclTensor *sampleCount, aclTensor *mean<>, aclTensor *variance<>,
    float momentum, float eps, aclTensor *batchMean>, aclTensor *batchInvstd>
BatchNorm nn aclnn_batch_norm.h: const aclTensor *input, const aclTensor *weight, const aclTensor *bias,
    aclTensor *runningMean<>, aclTensor *runningVar<>, bool training, double momentum, double eps, aclTensor *output>,
    aclTensor *saveMean>, aclTensor *saveInvstd>
"""
"""One operator per entry: `Name repo header: params`, continued on indented lines."""


KIND_OF_TYPE = {  # the closed vocabulary, written out again here as the test's own reading
    "aclTensor *": "tensor",
    "aclTensorList *": "tensor_list",
    "aclScalar *": "scalar",
    "aclScalarList *": "scalar_list",
    "aclIntArray *": "int_array",
    "aclBoolArray *": "bool_array",
    "aclFloatArray *": "float_array",
    "int64_t": "int64",
    "int32_t": "int32",
    "int": "int32",
    "int8_t": "int8",
    "uint64_t": "uint64",
    "double": "double",
    "float": "float",
    "bool": "bool",
    "char *": "string",
    "aclDataType": "dtype",
}


def expected_prototypes() -> dict[str, tuple[str, str, str]]:
    """EXPECTED_TEXT as {name: (repo, header, params)}."""
    entries = re.sub(r"\n\s+", " ", EXPECTED_TEXT.strip()).splitlines()
    found = {}
    for entry in entries:
        head, params = entry.split(": ", 1)
        name, repo, header = head.split()
        found[name] = (repo, header, params)
    return found


EXPECTED = expected_prototypes()


def parse_expected(text: str) -> list[tuple[str, str, str, bool]]:
    """(name, ctype, direction, optional) of each parameter of an EXPECTED string."""
    params = []
    for item in text.split(", "):
        optional, item = item.endswith("?"), item.rstrip("?")
        direction = "inplace" if item.endswith("<>") else "out" if item.endswith(">") else "in"
        declaration = item.rstrip("<>")
        match = re.fullmatch(r"(.*?)\s*(\**)(\w+)", declaration)
        assert match is not None, item
        ctype = f"{match.group(1)} {match.group(2)}".strip() if match.group(2) else match.group(1)
        params.append((match.group(3), ctype, direction, optional))
    return params


def test_counts_per_repository_and_source() -> None:
    ops = catalog().ops
    assert Counter((op.repo, op.source) for op in ops.values()) == COUNTS
    assert len(ops) == sum(COUNTS.values()) == 1213
    assert {repo: len(members) for repo, members in catalog().by_repo.items()} == {
        "cv": 52,
        "math": 471,
        "nn": 539,
        "transformer": 151,
    }


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_prototypes_a_decode_step_needs(name: str) -> None:
    repo, header, text = EXPECTED[name]
    op = catalog().ops[name]
    assert (op.repo, op.header) == (repo, header)
    assert [(p.name, p.ctype, p.direction, p.optional) for p in op.params] == parse_expected(text)
    assert all(p.kind == KIND_OF_TYPE[p.ctype.removeprefix("const ")] for p in op.params)
    assert op.launch == STANDARD_LAUNCH or [p.ctype for p in op.launch][-1] == "const aclrtStream"


def test_opdef_operators_carry_dtypes_formats_and_defaults() -> None:
    ops = catalog().ops
    rms = {p.name: p for p in ops["RmsNorm"].params}
    assert ops["RmsNorm"].source == "opdef" and ops["RmsNorm"].op_type == "RmsNorm"
    assert rms["x"].dtypes == ("FLOAT16", "BF16", "FLOAT16", "FLOAT", "BF16")
    assert rms["gamma"].dtypes == ("FLOAT", "FLOAT", "FLOAT16", "FLOAT", "BF16")
    assert rms["rstdOut"].dtypes == ("FLOAT",) * 5 and rms["x"].formats == ("ND",) * 5
    assert rms["epsilon"].default == 1e-6
    assert {p.name: p.default for p in ops["SwiGlu"].params}["dim"] == -1
    scatter = {p.name: p.default for p in ops["ScatterPaKvCache"].params}
    assert (scatter["cacheModeOptional"], scatter["scatterModeOptional"]) == ("Norm", "None")
    assert (scatter["stridesOptional"], scatter["offsetsOptional"]) == ([1, 1], [0, 0])
    v2 = ops["DequantSwigluQuantV2"]  # .Version(2) attributes: only in the V2 function, in its own header
    assert (v2.op_type, ops["DequantSwigluQuant"].header) == ("DequantSwigluQuant", "aclnn_dequant_swiglu_quant.h")
    version_two = {"dstType", "roundModeOptional", "activateDim", "swigluMode", "clampLimit", "gluAlpha", "gluBias"}
    assert [p.name for p in ops["DequantSwigluQuant"].params] == [
        p.name for p in v2.params if p.name not in version_two
    ]


def test_names_are_unique_across_the_four_repositories() -> None:
    ops = catalog().ops
    assert len({op.c_name for op in ops.values()}) == len(ops)
    assert all(name == op.name for name, op in ops.items())
    assert {op.prefix for op in ops.values()} == {"aclnn", "acl"}
    assert sorted(op.c_name for op in ops.values() if op.prefix == "acl") == ["aclRfft1D", "aclStft"]


def test_every_parameter_has_a_kind_of_the_closed_vocabulary() -> None:
    for op in catalog().ops.values():
        for param in op.params:
            assert param.kind in KINDS and param.direction in DIRECTIONS, (op.name, param)
            assert param.kind == KIND_OF_TYPE.get(re.sub(r"\bconst\s+", "", param.ctype), "other"), (op.name, param)
            assert param.direction == "in" or param.kind in ("tensor", "tensor_list"), (op.name, param)
    kinds = Counter(p.kind for op in catalog().ops.values() for p in op.params)
    assert kinds["other"] == 5  # MoeFusedTopk's five uint32_t


def test_family_headers_hold_their_variants() -> None:
    by_header = catalog().by_header
    families = {
        "aclnn_add.h": "Add Adds InplaceAdd InplaceAdds",
        "aclnn_mul.h": "InplaceMul InplaceMuls Mul Muls",
        "aclnn_sub.h": "InplaceSub InplaceSubs Sub Subs",
        "aclnn_div.h": "Div DivMod DivMods Divs InplaceDiv InplaceDivMod InplaceDivMods InplaceDivs",
        "aclnn_exp.h": "Exp InplaceExp",
        "aclnn_matmul.h": "Matmul MatmulWeightNz",
        "aclnn_cumsum.h": "Cumsum CumsumV2",
        "aclnn_copy.h": "InplaceCopy",
        "aclnn_softmax.h": "Softmax",
        "aclnn_rms_norm.h": "RmsNorm",
        "aclnn_dequant_swiglu_quant.h": "DequantSwigluQuant",
        "aclnn_dequant_swiglu_quant_v2.h": "DequantSwigluQuantV2",
    }
    assert {header: " ".join(op.name for op in by_header[header]) for header in families} == families
    assert len(by_header) == 1017 and sum(len(ops) > 1 for ops in by_header.values()) == 138
    for header, ops in by_header.items():
        assert len({(op.repo, op.directory) for op in ops}) == 1, header  # one installed file, one operator directory
        assert all(op.source == "header" for op in ops) or len(ops) == 1, header  # a generated header holds one op


def test_launch_exceptions_are_recorded() -> None:
    ops = catalog().ops
    blur = ops["GaussianBlur"].launch  # the one phase 2 that takes the operator's arguments again
    assert [p.ctype for p in blur][:3] == ["void *", "uint64_t", "aclOpExecutor *"] and len(blur) == 10
    assert ops["Convolution"].launch[1] == CParam("workspaceSize", "const uint64_t")
    assert ops["Embedding"].launch[3] == CParam("stream", "const aclrtStream")

    def abi(params: tuple[CParam, ...]) -> list[str]:
        return [p.ctype.removeprefix("const ") if not p.ctype.endswith("*") else p.ctype for p in params]

    odd = sorted(op.name for op in ops.values() if abi(op.launch) != abi(STANDARD_LAUNCH))
    assert odd == ["GaussianBlur"]


def test_functions_that_are_not_operators() -> None:
    functions = {f.name: f for f in catalog().functions}
    assert " ".join(sorted(functions)).replace("aclnn", "") == (
        "CalculateConvolutionWeightSize CalculateMatmulWeightSize CalculateMatmulWeightSizeV2 GetPytorchRandom"
        " NpuFormatCastCalculateSizeAndFormat SetPytorchRandom TransQuantParam TransSparse4to2Para"
    )
    assert functions["aclnnGetPytorchRandom"].declaration == "int32_t aclnnGetPytorchRandom(void)"
    assert catalog().functions_in("aclnn_trans_matmul_weight.h")[0].repo == "math"


def test_the_data_format_round_trips() -> None:
    for repo in REPOS:
        ops = [op for op in catalog().ops.values() if op.repo == repo]
        assert decode_ops(repo, {op.name: encode_op(op) for op in ops}) == {op.name: op for op in ops}


def test_the_generated_header_convention() -> None:
    assert snake_case("MoeGatingTopKSoftmax") == "moe_gating_top_k_softmax"
    assert snake_case("MoeInitRoutingV2Grad") == "moe_init_routing_v2_grad" and snake_case("SwiGlu") == "swi_glu"
    assert camel_case("compress_seq_offset") == "compressSeqOffset" and camel_case("x1") == "x1"
    opdef = read_opdefs(
        "class Toy : public OpDef { public: explicit Toy(const char* name) : OpDef(name) {"
        ' this->Input("cache").ParamType(REQUIRED).DataType({ge::DT_INT8}).Format({ge::FORMAT_ND});'
        ' this->Input("bias").ParamType(OPTIONAL); this->Input("xs").ParamType(DYNAMIC);'
        ' this->Input("shape").ParamType(REQUIRED).DataType({ge::DT_INT64}).ValueDepend(OPTIONAL);'
        ' this->Output("cache").ParamType(REQUIRED); this->Output("y").ParamType(REQUIRED);'
        ' this->Attr("mode").AttrType(OPTIONAL).String("a"); this->Attr("eps").AttrType(OPTIONAL).Float(1e-5);'
        ' this->Attr("dst_type").AttrType(OPTIONAL).Version(2).Int(ge::DT_INT8); } }; OP_ADD(Toy);'
    )[0]
    base, v2 = generate(opdef)
    assert (base.name, base.header, v2.name, v2.header) == ("Toy", "aclnn_toy.h", "ToyV2", "aclnn_toy_v2.h")
    expected = (
        "aclTensor *cacheRef<>, const aclTensor *biasOptional?, const aclTensorList *xs, const aclIntArray *shape,"
    )
    expected += " char *modeOptional?, double eps, const aclTensor *out>"
    assert [(p.name, p.ctype) for p in base.params] == [(name, ctype) for name, ctype, *_ in parse_expected(expected)]
    dst_type = v2.params[-2]
    assert [p.name for p in v2.params][-2:] == ["dstType", "out"]
    assert isinstance(dst_type.source, OpDefAttr) and dst_type.source.default == 2  # ge::DT_INT8


def test_the_header_reader() -> None:
    text = """/* licence */
#ifndef X_H
#define X_H
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif
// one line comment with aclnnNotThis(
namespace helpers { inline int f(int a) { return a; } }
__attribute__((deprecated("use aclnnNewGetWorkspaceSize"))) ACLNN_API aclnnStatus aclnnOldGetWorkspaceSize(
    const aclTensor* self, /* inline */ aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnOld(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                               const aclrtStream stream);
#ifdef __cplusplus
}
#endif
#endif
"""
    old, launch = read_header(text)
    assert (old.name, old.deprecated, launch.deprecated) == ("aclnnOldGetWorkspaceSize", True, False)
    assert [(p.ctype, p.name) for p in old.params][:2] == [(TENSOR, "self"), ("aclTensor *", "out")]
    assert launch.params[-1] == CParam("stream", "const aclrtStream")


CANN_OPS = os.environ.get("VNPU_CANN_OPS")
needs_checkouts = pytest.mark.skipif(
    not CANN_OPS,
    reason="developer test: set VNPU_CANN_OPS to a directory with ops-math/ ops-nn/ ops-transformer/ ops-cv/",
)


@needs_checkouts
@pytest.mark.timeout(600)
def test_the_extractor_reproduces_the_checked_in_table() -> None:
    from proto.aclnn.catalog import DATA_DIR
    from proto.aclnn.catalog.extract import extract, render

    resolution, commits = extract({repo: Path(str(CANN_OPS)) / f"ops-{repo}" for repo in REPOS})
    for name, text in render(resolution, commits).items():
        checked_in = (DATA_DIR / name).read_text(encoding="utf-8")
        assert text.splitlines()[3:] == checked_in.splitlines()[3:], f"{name} differs from a fresh extraction"
        assert text.splitlines()[2] == checked_in.splitlines()[2], f"{name}: extracted from another commit"


@needs_checkouts
@pytest.mark.timeout(300)
def test_example_programs_call_each_operator_with_the_catalog_arity() -> None:
    from proto.aclnn.catalog.cheader import strip_comments

    called: dict[str, set[int]] = {}
    for repo in REPOS:
        for path in sorted((Path(str(CANN_OPS)) / f"ops-{repo}").rglob("examples/**/*.cpp")):
            text = strip_comments(path.read_text(errors="replace"))
            for match in re.finditer(r"\b(acl\w+)GetWorkspaceSize\s*\(", text):
                arguments = _arguments(text, match.end())
                if arguments and arguments[-1].startswith("&"):
                    called.setdefault(match.group(1), set()).add(len(arguments))
    checked = [op for op in catalog().ops.values() if op.c_name in called]
    wrong = {
        op.name: (sorted(called[op.c_name]), len(op.params) + 2)
        for op in checked
        if len(op.params) + 2 not in called[op.c_name]
    }
    assert wrong == {}
    assert len(checked) >= 1000


def _arguments(text: str, start: int) -> list[str]:
    depth, current, items = 1, "", []
    for char in text[start:]:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            break
        if char == "," and depth == 1:
            items.append(current.strip())
            current = ""
        else:
            current += char
    return [*items, current.strip()] if current.strip() else items
