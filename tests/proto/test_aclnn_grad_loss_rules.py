"""The phase-1 rules of the activation gradients and losses (proto/aclnn/rules/grad.py, loss.py): each refusal is
161002 (161001 for a NULL) naming the argument at fault and what it must be."""

from __future__ import annotations

from aclnn_kit import refused, scalar, tensor

import proto.aclnn as nn
from proto.constants import aclDataType
from proto.errors import ACLNN_ERR_PARAM_NULLPTR

DT = aclDataType
F32, F16, BF16, F64 = DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE
S32, S64, U8, BOOL = DT.ACL_INT32, DT.ACL_INT64, DT.ACL_UINT8, DT.ACL_BOOL
HALF = "ACL_BF16, ACL_FLOAT, ACL_FLOAT16"


def t(*shape: int, dtype: aclDataType = F32) -> nn.aclTensor:
    return tensor(list(shape), dtype)


def test_gradients_accept_documented_arguments() -> None:
    assert nn.aclnnTanhBackwardGetWorkspaceSize(t(2, 3, dtype=F64), t(3, dtype=F64), t(2, 3, dtype=F64))[0] == 0
    assert nn.aclnnGeluBackwardGetWorkspaceSize(t(4, 2, dtype=S32), t(4, 2), t(4, 2))[0] == 0
    assert nn.aclnnSwishBackwardGetWorkspaceSize(t(2, 3), t(2, 3), None, t(2, 3))[0] == 0
    assert nn.aclnnThresholdBackwardGetWorkspaceSize(t(2, dtype=U8), t(2, dtype=U8), scalar(1), t(2, dtype=U8))[0] == 0
    assert nn.aclnnAddReluGetWorkspaceSize(t(2, 3, dtype=S32), t(3, dtype=S32), scalar(2, S32), t(2, 3))[0] == 0


def test_gradients_refuse_dtypes_shapes_and_attributes() -> None:
    refused(
        lambda: nn.aclnnSiluBackwardGetWorkspaceSize(t(2, dtype=F64), t(2), t(2)),
        f"gradOutput has dtype ACL_DOUBLE; supported: {HALF}",
    )
    refused(
        lambda: nn.aclnnSiluBackwardGetWorkspaceSize(t(2, dtype=F16), t(2), t(2)),
        "self has dtype ACL_FLOAT; it must have gradOutput's dtype ACL_FLOAT16",
    )
    refused(
        lambda: nn.aclnnHardswishBackwardGetWorkspaceSize(t(2, 3), t(3), t(2, 3)),
        "self has shape [3]; it must be [2, 3] (gradOutput's shape)",
    )
    refused(
        lambda: nn.aclnnMishBackwardGetWorkspaceSize(t(2, 3), t(4), t(2, 3)),
        "self has shape [4], which does not broadcast with [2, 3]",
    )
    refused(
        lambda: nn.aclnnSigmoidBackwardGetWorkspaceSize(t(2, 1), t(3), t(2, 1)),
        "gradInput has shape [2, 1], but the result has shape [2, 3]",
    )
    refused(
        lambda: nn.aclnnGeluBackwardGetWorkspaceSize(t(2, dtype=S32), t(2, dtype=S32), t(2)),
        f"gradOutput (ACL_INT32) and self (ACL_INT32) promote to ACL_INT32; supported: {HALF}",
    )
    refused(
        lambda: nn.aclnnGeluBackwardV2GetWorkspaceSize(t(2), t(2), "erf", t(2)),
        "approximate is 'erf'; it must be one of 'none', 'tanh'",
    )
    refused(
        lambda: nn.aclnnSoftshrinkBackwardGetWorkspaceSize(t(2), t(2), scalar(-0.5), t(2)),
        "lambda is -0.5; it must be >= 0",
    )
    refused(
        lambda: nn.aclnnEluBackwardGetWorkspaceSize(t(2), scalar(-1.0), scalar(1.0), scalar(1.0), True, t(2), t(2)),
        "alpha is -1.0; it must be >= 0 when isResult is true",
    )
    refused(
        lambda: nn.aclnnLogSoftmaxBackwardGetWorkspaceSize(t(2, 3), t(2, 3), 2, t(2, 3)),
        "dim 2 is out of range for a 2-D self (expected -2 to 1)",
    )
    refused(
        lambda: nn.aclnnHardtanhBackwardGetWorkspaceSize(t(2), t(2), scalar(True, BOOL), scalar(1.0), t(2)),
        "min is ACL_BOOL; it must be a number",
    )
    refused(
        lambda: nn.aclnnAddReluGetWorkspaceSize(t(2, dtype=F64), t(2, dtype=F64), scalar(1.0), t(2, dtype=F64)),
        "self has dtype ACL_DOUBLE; supported: ACL_BF16, ACL_FLOAT, ACL_FLOAT16, ACL_INT16, ACL_INT32, "
        "ACL_INT64, ACL_INT8, ACL_UINT8",
    )
    refused(lambda: nn.aclnnSigmoidBackwardGetWorkspaceSize(t(2), None, t(2)),
            "output is a null pointer", ACLNN_ERR_PARAM_NULLPTR)  # fmt: skip


def test_losses_accept_documented_arguments() -> None:
    assert nn.aclnnL1LossGetWorkspaceSize(t(2, 2), t(2, 2), 1, t())[0] == 0
    assert nn.aclnnSmoothL1LossGetWorkspaceSize(t(2, 2), t(2), 2, 1.0, t(1))[0] == 0
    assert nn.aclnnMseLossBackwardGetWorkspaceSize(t(), t(2, 2), t(2, 2), 1, t(2, 2))[0] == 0
    assert nn.aclnnNLLLossGetWorkspaceSize(t(2, 3), t(2, dtype=S32), t(3), 0, -100, t(2), t(1))[0] == 0
    assert nn.aclnnNLLLossBackwardGetWorkspaceSize(t(1), t(3), t(dtype=S64), t(3), 1, -100, t(1), t(3))[0] == 0
    assert nn.aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(t(4, 2), t(4, 2), None, t(2), 1, t(1))[0] == 0


def test_losses_refuse_reductions_shapes_and_dtypes() -> None:
    refused(lambda: nn.aclnnMseLossGetWorkspaceSize(t(2), t(2), 3, t()), "reduction is 3; it must be one of 0, 1, 2")
    refused(
        lambda: nn.aclnnL1LossGetWorkspaceSize(t(2), t(2), 2, t(2)), "out has shape [2], but the result has shape []"
    )
    refused(
        lambda: nn.aclnnL1LossGetWorkspaceSize(t(2, dtype=S64), t(2, dtype=S64), 1, t(dtype=S64)),
        "self and target are both ACL_INT64; a mean needs one of them to be a float",
    )
    refused(lambda: nn.aclnnSmoothL1LossGetWorkspaceSize(t(2), t(2), 0, -1.0, t(2)), "beta is -1.0; it must be >= 0")
    refused(
        lambda: nn.aclnnSoftMarginLossBackwardGetWorkspaceSize(t(2), t(2), t(3), 1, t(2)),
        "target has shape [3], which does not broadcast with [2]",
    )
    refused(
        lambda: nn.aclnnMseLossBackwardGetWorkspaceSize(t(2, dtype=F16), t(2), t(2), 1, t(2)),
        "gradOutput has dtype ACL_FLOAT16; it must have self's dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(t(4, 2), t(2), None, None, 0, t(4, 2)),
        "target has shape [2]; it must be [4, 2] (self's shape)",
    )
    refused(
        lambda: nn.aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
            t(4, 2), t(4, 2), t(4, 2), t(3), None, 0, t(4, 2)
        ),
        "weightOptional has shape [3]; it must broadcast to self's",
    )
    refused(
        lambda: nn.aclnnKlDivBackwardGetWorkspaceSize(t(2, 2), t(2, 2), t(2, 2), 4, False, t(2, 2)),
        "reduction is 4; it must be one of 0, 1, 2, 3",
    )
    refused(
        lambda: nn.aclnnKlDivBackwardGetWorkspaceSize(t(2, 2), t(2, 2), t(2, 2), 0, False, t(2, 2, dtype=F16)),
        "out has dtype ACL_FLOAT16, but the result has dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnNLLLossGetWorkspaceSize(t(2, 3), t(3, dtype=S64), t(3), 0, -100, t(2), t(1)),
        "target has shape [3]; it must be [2] (self's batch)",
    )
    refused(
        lambda: nn.aclnnNLLLossGetWorkspaceSize(t(2, 3), t(2, dtype=F32), t(3), 0, -100, t(2), t(1)),
        "target has dtype ACL_FLOAT; supported: ACL_INT32, ACL_INT64, ACL_UINT8",
    )
    refused(
        lambda: nn.aclnnNLLLossGetWorkspaceSize(t(2, 3), t(2, dtype=S64), t(2), 0, -100, t(2), t(1)),
        "weight has shape [2]; it must be [3] (self's classes)",
    )
    refused(
        lambda: nn.aclnnNLLLossBackwardGetWorkspaceSize(t(2), t(2, 3), t(2, dtype=S64), t(3), 1, -100, t(1), t(2, 3)),
        "gradOutput has shape [2]; it must hold one value",
    )
    refused(
        lambda: nn.aclnnNLLLoss2dBackwardGetWorkspaceSize(
            t(1), t(2, 3, 4), t(2, 4, dtype=S64), t(3), 1, -100, t(1), t(2, 3, 4)
        ),
        "self has 3 dims ([2, 3, 4]); it must have 4",
    )
    refused(
        lambda: nn.aclnnNLLLoss2dBackwardGetWorkspaceSize(
            t(2, 2, 2), t(2, 3, 2, 2), t(2, 2, 2, dtype=S64), t(3), 0, -100, t(2), t(2, 3, 2, 2)
        ),
        "totalWeight has shape [2]; it must hold one value",
    )


def test_the_second_batch_refuses_what_its_documentation_forbids() -> None:
    refused(
        lambda: nn.aclnnGluBackwardGetWorkspaceSize(t(2, 1), t(2, 3), 1, t(2, 3)),
        "self has 3 elements along dim 1; it must be even",
    )
    refused(
        lambda: nn.aclnnSwiGluGradGetWorkspaceSize(t(2, 4), t(4, 4), 1, t(4, 4)),
        "yGrad has shape [2, 4]; it must be [4, 2] (x's shape with dim 1 halved)",
    )
    refused(
        lambda: nn.aclnnLeakyReluBackwardGetWorkspaceSize(t(2), t(2), scalar(-0.5), True, t(2)),
        "negativeSlope is -0.5; it must be >= 0 when selfIsResult",
    )
    refused(
        lambda: nn.aclnnLogSigmoidBackwardGetWorkspaceSize(t(2, 3), t(2, 3), t(3), t(2, 3)),
        "buffer has shape [3]; it must be [2, 3] (self's shape)",
    )
    refused(
        lambda: nn.aclnnSoftmaxBackwardGetWorkspaceSize(t(2, 3), t(2, 3), -3, t(2, 3)),
        "dim -3 is out of range for a 2-D self (expected -2 to 1)",
    )
    refused(
        lambda: nn.aclnnBinaryCrossEntropyGetWorkspaceSize(t(2, 3), t(2, 3), t(4), 0, t(2, 3)),
        "weight has shape [4]; it must broadcast to self's",
    )
    refused(
        lambda: nn.aclnnKlDivTargetBackwardGetWorkspaceSize(t(2), t(2), t(2), 0, True, t(2, dtype=F16)),
        "gradTarget has dtype ACL_FLOAT16, but the result has dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnSmoothL1LossBackwardGetWorkspaceSize(t(2), t(2), t(2), 1, -0.5, t(2)),
        "beta is -0.5; it must be >= 0",
    )
    assert nn.aclnnBinaryCrossEntropyGetWorkspaceSize(t(2, 3), t(2, 3), None, 1, t(1))[0] == 0
    assert nn.aclnnHardshrinkBackwardGetWorkspaceSize(t(2, 3), t(3), scalar(-1.0), t(2, 3))[0] == 0


def test_prelu_and_geglu_backward_refusals() -> None:
    refused(
        lambda: nn.aclnnPreluBackwardGetWorkspaceSize(t(2, 3, 4), t(2, 3, 4), t(2), t(2, 3, 4), t(2)),
        "weight has shape [2]; it must hold 1 or 3 (self's channels)",
    )
    refused(
        lambda: nn.aclnnPreluBackwardGetWorkspaceSize(t(2, 3), t(2, 3), t(3), t(2, 3), t(1)),
        "gradWeight has shape [1], but the result has shape [3]",
    )
    refused(
        lambda: nn.aclnnGeGluBackwardGetWorkspaceSize(t(2, 2), t(2, 4), t(2, 2), -1, 2, t(2, 4)),
        "approximate is 2; it must be one of 0, 1",
    )
    refused(
        lambda: nn.aclnnGeGluV3BackwardGetWorkspaceSize(t(2, 2), t(2, 4), t(2, 4), 1, 0, True, t(2, 4)),
        "gelu has shape [2, 4]; it must be [2, 2] (self's shape with dim 1 halved)",
    )


def test_cross_entropy_refusals() -> None:
    ce = nn.aclnnCrossEntropyLossGetWorkspaceSize
    refused(
        lambda: ce(t(3, 5), t(4, dtype=S64), None, "mean", -100, 0.0, 0.0, False, t(1), t(3, 5), t(1), t(3)),
        "target has shape [4]; it must be [3] (input's N)",
    )
    refused(
        lambda: ce(t(3, 5), t(3, dtype=S64), None, "avg", -100, 0.0, 0.0, False, t(1), t(3, 5), t(1), t(3)),
        "reductionOptional is 'avg'; it must be one of 'mean', 'sum', 'none'",
    )
    refused(
        lambda: ce(t(3, 5), t(3, dtype=S64), None, "none", -100, 1.5, 0.0, False, t(3), t(3, 5), t(3), t(3)),
        "labelSmoothing is 1.5; it must be >= 0.0 and <= 1.0",
    )
    assert ce(t(3, 5), t(3, dtype=S32), t(5), None, -100, 0.1, 0.0, False, t(1), t(3, 5), t(1), t(3))[0] == 0
    refused(
        lambda: nn.aclnnCrossEntropyLossGradGetWorkspaceSize(
            t(3), t(3, 5), t(3, dtype=S64), None, None, None, "sum", -100, 0.0, 0.0, t(3, 5)
        ),
        "gradLoss has shape [3]; it must hold one value",
    )


def test_bce_target_backward_and_logit_grad_refusals() -> None:
    refused(
        lambda: nn.aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
            t(3), t(2, 3), t(2, 3), t(2), None, 0, t(2, 3)
        ),
        "weightOptional has shape [2]; it must broadcast to self's",
    )
    refused(
        lambda: nn.aclnnLogitGradGetWorkspaceSize(t(2, 3), t(2, 3, dtype=F16), -1.0, t(2, 3)),
        "dy has dtype ACL_FLOAT16; it must have x's dtype ACL_FLOAT",
    )
