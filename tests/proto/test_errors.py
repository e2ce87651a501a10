"""The ACL error codes keep their exact C names and values, and `AclError` carries them faithfully.

Every expected number is a literal from `shared/spec/cann-runtime.md` (section 6, both tables; section 5 for
the aclnn statuses), or from `acl_base_rt.h` / `rt_error_codes.h` of GitHub `hicann/runtime`.
"""

from __future__ import annotations

import pickle

import pytest

from proto import errors as e
from proto.errors import AclError, code_name

# Spec section 6, "ACL base".
ACL_BASE = {
    "ACL_SUCCESS": 0,
    "ACL_ERROR_INVALID_PARAM": 100000,
    "ACL_ERROR_UNINITIALIZE": 100001,
    "ACL_ERROR_REPEAT_INITIALIZE": 100002,
    "ACL_ERROR_BAD_ALLOC": 200000,
    "ACL_ERROR_API_NOT_SUPPORT": 200001,
    "ACL_ERROR_INVALID_DEVICE": 200002,
    "ACL_ERROR_FEATURE_UNSUPPORTED": 200006,
    "ACL_ERROR_INTERNAL_ERROR": 500000,
    "ACL_ERROR_FAILURE": 500001,
    "ACL_ERROR_RT_FAILURE": 500003,
}

# Spec section 6, the table of runtime codes.
RUNTIME = {
    "ACL_ERROR_RT_PARAM_INVALID": 107000,
    "ACL_ERROR_RT_STREAM_MODEL": 107005,
    "ACL_ERROR_RT_CAPTURE_DEPENDENCY": 107024,
    "ACL_ERROR_RT_STREAM_UNJOINED": 107025,
    "ACL_ERROR_RT_MODEL_CAPTURED": 107026,
    "ACL_ERROR_RT_STREAM_CAPTURED": 107027,
    "ACL_ERROR_RT_EVENT_CAPTURED": 107028,
    "ACL_ERROR_RT_STREAM_NOT_CAPTURED": 107029,
    "ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT": 107030,
    "ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT": 107031,
    "ACL_ERROR_STREAM_CAPTURE_CONFLICT": 107032,
    "ACL_ERROR_STREAM_TASK_GROUP_STATUS": 107033,
    "ACL_ERROR_STREAM_TASK_GROUP_INTR": 107034,
    "ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED": 107036,
    "ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD": 107038,
    "ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC": 107041,
    "ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING": 107045,
    "ACL_ERROR_RT_FEATURE_NOT_SUPPORT": 207000,
    "ACL_ERROR_RT_RESOURCE_ALLOC_FAIL": 207005,
    "ACL_ERROR_RT_NO_EVENT_RESOURCE": 207007,
    "ACL_ERROR_RT_NO_STREAM_RESOURCE": 207008,
    "ACL_ERROR_RT_INTERNAL_ERROR": 507000,
    "ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT": 507009,
    "ACL_ERROR_RT_MODEL_EXECUTE": 507011,
    "ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED": 507903,
}

# Named elsewhere in the spec (sections 3.1 and 4) and in rt_error_codes.h.
RUNTIME_MORE = {
    "ACL_RT_SUCCESS": 0,
    "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT": 507046,
    "ACL_ERROR_RT_EVENT_SYNC_TIMEOUT": 507047,
    "ACL_ERROR_RT_SYMBOL_NOT_FOUND": 107042,
    "ACL_ERROR_NONE": 0,
    "ACL_ERROR_INVALID_EXCEPTION_INFO": -1,
}

# Spec section 5, aclnnStatus.
ACLNN = {
    "ACLNN_SUCCESS": 0,
    "ACLNN_ERR_PARAM_NULLPTR": 161001,
    "ACLNN_ERR_PARAM_INVALID": 161002,
    "ACLNN_ERR_RUNTIME_ERROR": 361001,
    "ACLNN_ERR_INNER": 561000,
    "ACLNN_ERR_INNER_INFERSHAPE": 561001,
    "ACLNN_ERR_INNER_TILING": 561002,
    "ACLNN_ERR_INNER_FIND_KERNEL": 561003,
    "ACLNN_ERR_INNER_CREATE_EXECUTOR": 561101,
    "ACLNN_ERR_INNER_NULLPTR": 561103,
}

ALL_CODES = {**ACL_BASE, **RUNTIME, **RUNTIME_MORE, **ACLNN}


@pytest.mark.parametrize(("name", "value"), sorted(ALL_CODES.items()))
def test_code_has_the_spec_value(name: str, value: int) -> None:
    code = getattr(e, name)
    assert type(code) is int
    assert code == value


@pytest.mark.parametrize(
    ("name", "value"),
    # 0 has several names (ACL_SUCCESS, ACL_RT_SUCCESS, ACLNN_SUCCESS...): see test_canonical_names.
    sorted((n, v) for n, v in {**ACL_BASE, **RUNTIME, **ACLNN}.items() if v != 0),
)
def test_code_name_of_a_nonzero_code_is_its_macro(name: str, value: int) -> None:
    assert code_name(value) == name


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (0, "ACL_SUCCESS"),
        (107000, "ACL_ERROR_RT_PARAM_INVALID"),
        (161001, "ACLNN_ERR_PARAM_NULLPTR"),
        (100000, "ACL_ERROR_INVALID_PARAM"),
        (507903, "ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED"),
        (-1, "ACL_ERROR_INVALID_EXCEPTION_INFO"),
    ],
)
def test_canonical_names(code: int, name: str) -> None:
    assert code_name(code) == name
    assert e.ERROR_NAMES[code] == name


def test_code_name_of_an_unknown_code() -> None:
    name = code_name(123456)
    assert "123456" in name
    assert name not in ALL_CODES
    assert 123456 not in e.ERROR_NAMES


def test_every_declared_code_has_a_name_and_round_trips() -> None:
    for name, value in vars(e).items():
        if name.startswith(("ACL_", "ACLNN_")) and isinstance(value, int):
            assert getattr(e, code_name(value)) == value, name


def test_no_name_is_declared_twice_with_different_values() -> None:
    # A module namespace cannot hold a name twice, so check that the name table is consistent with it instead.
    for code, name in e.ERROR_NAMES.items():
        assert getattr(e, name) == code


def test_acl_error_attributes() -> None:
    err = AclError(107027, "stream is capturing", "aclrtSynchronizeStream")
    assert err.code == 107027
    assert err.name == "ACL_ERROR_RT_STREAM_CAPTURED"
    assert err.api == "aclrtSynchronizeStream"
    assert err.message == "stream is capturing"
    assert isinstance(err, Exception)


def test_acl_error_str_names_api_macro_code_and_message() -> None:
    text = str(AclError(107030, "aclrtMemcpy denied by the capture mode", "aclrtMemcpy"))
    parts = ("aclrtMemcpy", "ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT", "107030", "denied by the capture mode")
    for part in parts:
        assert part in text


def test_acl_error_without_api() -> None:
    err = AclError(100000, "stream is NULL")
    assert err.api == ""
    text = str(err)
    assert "ACL_ERROR_INVALID_PARAM" in text
    assert "100000" in text
    assert "stream is NULL" in text


def test_acl_error_of_an_unknown_code() -> None:
    err = AclError(999999, "odd", "aclrtFoo")
    assert err.code == 999999
    assert "999999" in err.name
    assert "999999" in str(err)


def test_acl_error_can_be_raised_and_caught() -> None:
    with pytest.raises(AclError) as info:
        raise AclError(507011, "model is not ready", "aclmdlRIExecuteAsync")
    assert info.value.code == 507011
    assert info.value.name == "ACL_ERROR_RT_MODEL_EXECUTE"


def test_to_dict() -> None:
    d = AclError(561103, "internal null", "aclnnAdd").to_dict()
    assert d == {
        "code": 561103,
        "name": "ACLNN_ERR_INNER_NULLPTR",
        "message": "internal null",
        "api": "aclnnAdd",
    }


@pytest.mark.parametrize("code", [0, -1, 100000, 107045, 161002, 207008, 507903, 424242])
def test_to_dict_from_dict_round_trip(code: int) -> None:
    err = AclError(code, "what went wrong", "aclmdlRICaptureEnd")
    back = AclError.from_dict(err.to_dict())
    assert (back.code, back.name, back.message, back.api) == (err.code, err.name, err.message, err.api)
    assert str(back) == str(err)
    assert back.to_dict() == err.to_dict()


def test_from_dict_defaults_missing_message_and_api() -> None:
    back = AclError.from_dict({"code": 107029})
    assert back.code == 107029
    assert back.name == "ACL_ERROR_RT_STREAM_NOT_CAPTURED"
    assert back.message == ""
    assert back.api == ""


def test_from_dict_derives_the_name_from_the_code() -> None:
    back = AclError.from_dict({"code": 107000, "name": "SOMETHING_ELSE", "message": "m", "api": "a"})
    assert back.name == "ACL_ERROR_RT_PARAM_INVALID"


@pytest.mark.parametrize("bad", ["107000", 107000.0, None, True])
def test_from_dict_rejects_a_non_int_code(bad: object) -> None:
    with pytest.raises(TypeError):
        AclError.from_dict({"code": bad, "message": "m"})


def test_from_dict_requires_a_code() -> None:
    with pytest.raises(KeyError):
        AclError.from_dict({"message": "m"})


def test_acl_error_pickles() -> None:
    err = AclError(207000, "not on an EXTERNAL event", "aclrtSynchronizeEvent")
    back = pickle.loads(pickle.dumps(err))
    assert (back.code, back.message, back.api) == (err.code, err.message, err.api)
