"""Every ACL error code under its C macro name, and `AclError`, the one error class of vnpu.

Sources: `acl_base_rt.h` (ACL base codes), `error_codes/rt_error_codes.h` (runtime codes) and
`error_codes/ge_error_codes.h` (graph engine codes) of GitHub `hicann/runtime`, and the aclnn status codes of
the CANN operator docs.
`ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING` (107045) comes from the spec (`shared/spec/cann-runtime.md`
section 6): the header version read lacked it, though `src/runtime/core/src/common/errcode_manage.cc` maps
`RT_ERROR_STREAM_SUB_ACLGRAPH_IS_CAPTURING` to that name.

Which family a check uses follows the real runtime's layering: argument checks of the ACL layer (a NULL
pointer, a NULL output) give `ACL_ERROR_INVALID_PARAM` (100000); values the runtime rejects give
`ACL_ERROR_RT_*` (1070xx, 2070xx, 5070xx); phase 1 and phase 2 of aclnn give `ACLNN_*` statuses (161001,
161002, 561xxx).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

# --- ACL base (acl_base_rt.h)
ACL_ERROR_NONE: Final = 0  # deprecated alias of ACL_SUCCESS
ACL_SUCCESS: Final = 0  # success
ACL_ERROR_INVALID_EXCEPTION_INFO: Final = -1  # invalid exception info
ACL_ERROR_INVALID_PARAM: Final = 100000  # parameter check failed
ACL_ERROR_UNINITIALIZE: Final = 100001  # not initialized (call aclInit first)
ACL_ERROR_REPEAT_INITIALIZE: Final = 100002  # repeated initialization
ACL_ERROR_INVALID_FILE: Final = 100003  # invalid file
ACL_ERROR_WRITE_FILE: Final = 100004  # write file failed
ACL_ERROR_INVALID_FILE_SIZE: Final = 100005  # invalid file size
ACL_ERROR_PARSE_FILE: Final = 100006  # parse file failed
ACL_ERROR_FILE_MISSING_ATTR: Final = 100007  # file missing attribute
ACL_ERROR_FILE_ATTR_INVALID: Final = 100008  # file attribute invalid
ACL_ERROR_INVALID_DUMP_CONFIG: Final = 100009  # invalid dump config
ACL_ERROR_INVALID_PROFILING_CONFIG: Final = 100010  # invalid profiling config
ACL_ERROR_INVALID_MODEL_ID: Final = 100011  # invalid model id
ACL_ERROR_DESERIALIZE_MODEL: Final = 100012  # deserialize model failed
ACL_ERROR_PARSE_MODEL: Final = 100013  # parse model failed
ACL_ERROR_READ_MODEL_FAILURE: Final = 100014  # read model failed
ACL_ERROR_MODEL_SIZE_INVALID: Final = 100015  # model size invalid
ACL_ERROR_MODEL_MISSING_ATTR: Final = 100016  # model missing attribute
ACL_ERROR_MODEL_INPUT_NOT_MATCH: Final = 100017  # model input not match
ACL_ERROR_MODEL_OUTPUT_NOT_MATCH: Final = 100018  # model output not match
ACL_ERROR_MODEL_NOT_DYNAMIC: Final = 100019  # model is not dynamic
ACL_ERROR_OP_TYPE_NOT_MATCH: Final = 100020  # op type not match
ACL_ERROR_OP_INPUT_NOT_MATCH: Final = 100021  # op input not match
ACL_ERROR_OP_OUTPUT_NOT_MATCH: Final = 100022  # op output not match
ACL_ERROR_OP_ATTR_NOT_MATCH: Final = 100023  # op attribute not match
ACL_ERROR_OP_NOT_FOUND: Final = 100024  # op not found
ACL_ERROR_OP_LOAD_FAILED: Final = 100025  # op load failed
ACL_ERROR_UNSUPPORTED_DATA_TYPE: Final = 100026  # unsupported data type
ACL_ERROR_FORMAT_NOT_MATCH: Final = 100027  # format not match
ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED: Final = 100028  # binary selector not registered
ACL_ERROR_KERNEL_NOT_FOUND: Final = 100029  # kernel not found
ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED: Final = 100030  # binary selector already registered
ACL_ERROR_KERNEL_ALREADY_REGISTERED: Final = 100031  # kernel already registered
ACL_ERROR_INVALID_QUEUE_ID: Final = 100032  # invalid queue id
ACL_ERROR_REPEAT_SUBSCRIBE: Final = 100033  # repeated subscribe
ACL_ERROR_STREAM_NOT_SUBSCRIBE: Final = 100034  # stream not subscribed
ACL_ERROR_THREAD_NOT_SUBSCRIBE: Final = 100035  # thread not subscribed
ACL_ERROR_WAIT_CALLBACK_TIMEOUT: Final = 100036  # wait callback timeout
ACL_ERROR_REPEAT_FINALIZE: Final = 100037  # repeated finalization
ACL_ERROR_NOT_STATIC_AIPP: Final = 100038  # not static aipp
ACL_ERROR_COMPILING_STUB_MODE: Final = 100039  # compiling stub mode
ACL_ERROR_GROUP_NOT_SET: Final = 100040  # group not set
ACL_ERROR_GROUP_NOT_CREATE: Final = 100041  # group not created
ACL_ERROR_PROF_ALREADY_RUN: Final = 100042  # profiling already running
ACL_ERROR_PROF_NOT_RUN: Final = 100043  # profiling not running
ACL_ERROR_DUMP_ALREADY_RUN: Final = 100044  # dump already running
ACL_ERROR_DUMP_NOT_RUN: Final = 100045  # dump not running
ACL_ERROR_PROF_REPEAT_SUBSCRIBE: Final = 148046  # profiling repeated subscribe
ACL_ERROR_PROF_API_CONFLICT: Final = 148047  # profiling api conflict
ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG: Final = 148048  # invalid max op queue num config
ACL_ERROR_INVALID_OPP_PATH: Final = 148049  # invalid opp path
ACL_ERROR_OP_UNSUPPORTED_DYNAMIC: Final = 148050  # op does not support dynamic shape
ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED: Final = 148051  # relative resource not cleared
ACL_ERROR_UNSUPPORTED_JPEG: Final = 148052  # unsupported jpeg
ACL_ERROR_INVALID_BUNDLE_MODEL_ID: Final = 148053  # invalid bundle model id
ACL_ERROR_BAD_ALLOC: Final = 200000  # memory allocation failed
ACL_ERROR_API_NOT_SUPPORT: Final = 200001  # api not supported
ACL_ERROR_INVALID_DEVICE: Final = 200002  # invalid device
ACL_ERROR_MEMORY_ADDRESS_UNALIGNED: Final = 200003  # memory address unaligned
ACL_ERROR_RESOURCE_NOT_MATCH: Final = 200004  # resource not match
ACL_ERROR_INVALID_RESOURCE_HANDLE: Final = 200005  # invalid resource handle
ACL_ERROR_FEATURE_UNSUPPORTED: Final = 200006  # feature unsupported
ACL_ERROR_PROF_MODULES_UNSUPPORTED: Final = 200007  # profiling modules unsupported
ACL_ERROR_STORAGE_OVER_LIMIT: Final = 300000  # storage over limit
ACL_ERROR_INTERNAL_ERROR: Final = 500000  # internal error
ACL_ERROR_FAILURE: Final = 500001  # failure
ACL_ERROR_GE_FAILURE: Final = 500002  # GE failure
ACL_ERROR_RT_FAILURE: Final = 500003  # runtime failure
ACL_ERROR_DRV_FAILURE: Final = 500004  # driver failure
ACL_ERROR_PROFILING_FAILURE: Final = 500005  # profiling failure

# --- runtime (rt_error_codes.h)
ACL_RT_SUCCESS: Final = 0  # success
ACL_ERROR_RT_PARAM_INVALID: Final = 107000  # param invalid
ACL_ERROR_RT_INVALID_DEVICEID: Final = 107001  # invalid device id
ACL_ERROR_RT_CONTEXT_NULL: Final = 107002  # current context null
ACL_ERROR_RT_STREAM_CONTEXT: Final = 107003  # stream not in current context
ACL_ERROR_RT_MODEL_CONTEXT: Final = 107004  # model not in current context
ACL_ERROR_RT_STREAM_MODEL: Final = 107005  # stream not in model
ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID: Final = 107006  # event timestamp invalid
ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL: Final = 107007  # event timestamp reversal
ACL_ERROR_RT_ADDR_UNALIGNED: Final = 107008  # memory address unaligned
ACL_ERROR_RT_FILE_OPEN: Final = 107009  # open file failed
ACL_ERROR_RT_FILE_WRITE: Final = 107010  # write file failed
ACL_ERROR_RT_STREAM_SUBSCRIBE: Final = 107011  # error subscribe stream
ACL_ERROR_RT_THREAD_SUBSCRIBE: Final = 107012  # error subscribe thread
ACL_ERROR_RT_GROUP_NOT_SET: Final = 107013  # group not set
ACL_ERROR_RT_GROUP_NOT_CREATE: Final = 107014  # group not create
ACL_ERROR_RT_STREAM_NO_CB_REG: Final = 107015  # callback not register to stream
ACL_ERROR_RT_INVALID_MEMORY_TYPE: Final = 107016  # invalid memory type
ACL_ERROR_RT_INVALID_HANDLE: Final = 107017  # invalid handle
ACL_ERROR_RT_INVALID_MALLOC_TYPE: Final = 107018  # invalid malloc type
ACL_ERROR_RT_WAIT_TIMEOUT: Final = 107019  # wait timeout
ACL_ERROR_RT_TASK_TIMEOUT: Final = 107020  # task timeout
ACL_ERROR_RT_SYSPARAMOPT_NOT_SET: Final = 107021  # not set sysparamopt
ACL_ERROR_RT_DEVICE_TASK_ABORT: Final = 107022  # device task aborting
ACL_ERROR_RT_STREAM_ABORT: Final = 107023  # stream aborting
ACL_ERROR_RT_CAPTURE_DEPENDENCY: Final = 107024  # capture dependency failure
ACL_ERROR_RT_STREAM_UNJOINED: Final = 107025  # invalid capture model
ACL_ERROR_RT_MODEL_CAPTURED: Final = 107026  # model is captured
ACL_ERROR_RT_STREAM_CAPTURED: Final = 107027  # stream is captured
ACL_ERROR_RT_EVENT_CAPTURED: Final = 107028  # event is captured
ACL_ERROR_RT_STREAM_NOT_CAPTURED: Final = 107029  # stream is not in capture status
ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT: Final = 107030  # stream is captured, not support current oper
ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT: Final = 107031  # a disallowed implicit dependency from default stream
ACL_ERROR_STREAM_CAPTURE_CONFLICT: Final = 107032  # interdependent stream cannot begin capture together
ACL_ERROR_STREAM_TASK_GROUP_STATUS: Final = 107033  # task group status error
ACL_ERROR_STREAM_TASK_GROUP_INTR: Final = 107034  # task group interrupted
ACL_ERROR_RT_TASK_ABORT_STOP: Final = 107035  # device task aborting stop before post process
ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED: Final = 107036  # the capture was not initiated in this stream
ACL_ERROR_RT_MODEL_RUNNING: Final = 107037  # the model is still running
ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD: Final = 107038  # end capture on another thread than begin
ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY: Final = 107039  # input array capacity insufficient
ACL_ERROR_RT_MODEL_UPDATE_FAILED: Final = 107040  # the model update failed
ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC: Final = 107041  # async op turned sync, denied while capturing
ACL_ERROR_RT_SYMBOL_NOT_FOUND: Final = 107042  # symbol not found
ACL_ERROR_RT_INVALID_SYMBOL: Final = 107043  # invalid device symbol
ACL_ERROR_RT_INVALID_DEVICE_FUNCTION: Final = 107044  # invalid device function
ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING: Final = 107045  # a conditional sub-graph is still capturing
ACL_ERROR_RT_FEATURE_NOT_SUPPORT: Final = 207000  # feature not support
ACL_ERROR_RT_MEMORY_ALLOCATION: Final = 207001  # memory allocation error, only used by out of memory
ACL_ERROR_RT_MEMORY_FREE: Final = 207002  # memory free error
ACL_ERROR_RT_AICORE_OVER_FLOW: Final = 207003  # aicore over flow
ACL_ERROR_RT_NO_DEVICE: Final = 207004  # no device
ACL_ERROR_RT_RESOURCE_ALLOC_FAIL: Final = 207005  # resource alloc fail
ACL_ERROR_RT_NO_PERMISSION: Final = 207006  # no permission
ACL_ERROR_RT_NO_EVENT_RESOURCE: Final = 207007  # no event resource
ACL_ERROR_RT_NO_STREAM_RESOURCE: Final = 207008  # no stream resource
ACL_ERROR_RT_NO_NOTIFY_RESOURCE: Final = 207009  # no notify resource
ACL_ERROR_RT_NO_MODEL_RESOURCE: Final = 207010  # no model resource
ACL_ERROR_RT_NO_CDQ_RESOURCE: Final = 207011  # no cdq resource
ACL_ERROR_RT_OVER_LIMIT: Final = 207012  # over limit
ACL_ERROR_RT_QUEUE_EMPTY: Final = 207013  # queue is empty
ACL_ERROR_RT_QUEUE_FULL: Final = 207014  # queue is full
ACL_ERROR_RT_REPEATED_INIT: Final = 207015  # repeated init
ACL_ERROR_RT_AIVEC_OVER_FLOW: Final = 207016  # aivec over flow
ACL_ERROR_RT_OVER_FLOW: Final = 207017  # common over flow
ACL_ERROR_RT_DEVICE_OOM: Final = 207018  # device oom
ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP: Final = 207019  # not support to update this op
ACL_ERROR_RT_TIMEOUT: Final = 207020  # driver timeout
ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED: Final = 207021  # link type not supported
ACL_ERROR_RT_INTERNAL_ERROR: Final = 507000  # runtime internal error
ACL_ERROR_RT_TS_ERROR: Final = 507001  # ts internal error
ACL_ERROR_RT_STREAM_TASK_FULL: Final = 507002  # task full in stream
ACL_ERROR_RT_STREAM_TASK_EMPTY: Final = 507003  # task empty in stream
ACL_ERROR_RT_STREAM_NOT_COMPLETE: Final = 507004  # stream not complete
ACL_ERROR_RT_END_OF_SEQUENCE: Final = 507005  # end of sequence
ACL_ERROR_RT_EVENT_NOT_COMPLETE: Final = 507006  # event not complete
ACL_ERROR_RT_CONTEXT_RELEASE_ERROR: Final = 507007  # context release error
ACL_ERROR_RT_SOC_VERSION: Final = 507008  # soc version error
ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT: Final = 507009  # task type not support
ACL_ERROR_RT_LOST_HEARTBEAT: Final = 507010  # ts lost heartbeat
ACL_ERROR_RT_MODEL_EXECUTE: Final = 507011  # model execute failed
ACL_ERROR_RT_REPORT_TIMEOUT: Final = 507012  # report timeout
ACL_ERROR_RT_SYS_DMA: Final = 507013  # sys dma error
ACL_ERROR_RT_AICORE_TIMEOUT: Final = 507014  # aicore timeout
ACL_ERROR_RT_AICORE_EXCEPTION: Final = 507015  # aicore exception
ACL_ERROR_RT_AICORE_TRAP_EXCEPTION: Final = 507016  # aicore trap exception
ACL_ERROR_RT_AICPU_TIMEOUT: Final = 507017  # aicpu timeout
ACL_ERROR_RT_AICPU_EXCEPTION: Final = 507018  # aicpu exception
ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR: Final = 507019  # aicpu datadump response error
ACL_ERROR_RT_AICPU_MODEL_RSP_ERR: Final = 507020  # aicpu model operate response error
ACL_ERROR_RT_PROFILING_ERROR: Final = 507021  # profiling error
ACL_ERROR_RT_IPC_ERROR: Final = 507022  # ipc error
ACL_ERROR_RT_MODEL_ABORT_NORMAL: Final = 507023  # model abort normal
ACL_ERROR_RT_KERNEL_UNREGISTERING: Final = 507024  # kernel unregistering
ACL_ERROR_RT_RINGBUFFER_NOT_INIT: Final = 507025  # ringbuffer not init
ACL_ERROR_RT_RINGBUFFER_NO_DATA: Final = 507026  # ringbuffer no data
ACL_ERROR_RT_KERNEL_LOOKUP: Final = 507027  # kernel lookup error
ACL_ERROR_RT_KERNEL_DUPLICATE: Final = 507028  # kernel register duplicate
ACL_ERROR_RT_DEBUG_REGISTER_FAIL: Final = 507029  # debug register failed
ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL: Final = 507030  # debug unregister failed
ACL_ERROR_RT_LABEL_CONTEXT: Final = 507031  # label not in current context
ACL_ERROR_RT_PROGRAM_USE_OUT: Final = 507032  # program register num use out
ACL_ERROR_RT_DEV_SETUP_ERROR: Final = 507033  # device setup error
ACL_ERROR_RT_VECTOR_CORE_TIMEOUT: Final = 507034  # vector core timeout
ACL_ERROR_RT_VECTOR_CORE_EXCEPTION: Final = 507035  # vector core exception
ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION: Final = 507036  # vector core trap exception
ACL_ERROR_RT_CDQ_BATCH_ABNORMAL: Final = 507037  # cdq alloc batch abnormal
ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR: Final = 507038  # can not change die mode
ACL_ERROR_RT_DIE_SET_ERROR: Final = 507039  # single die mode can not set die
ACL_ERROR_RT_INVALID_DIEID: Final = 507040  # invalid die id
ACL_ERROR_RT_DIE_MODE_NOT_SET: Final = 507041  # die mode not set
ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW: Final = 507042  # aic trap read overflow
ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW: Final = 507043  # aic trap write overflow
ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW: Final = 507044  # aiv trap read overflow
ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW: Final = 507045  # aiv trap write overflow
ACL_ERROR_RT_STREAM_SYNC_TIMEOUT: Final = 507046  # stream sync time out
ACL_ERROR_RT_EVENT_SYNC_TIMEOUT: Final = 507047  # event sync time out
ACL_ERROR_RT_FFTS_PLUS_TIMEOUT: Final = 507048  # ffts+ timeout
ACL_ERROR_RT_FFTS_PLUS_EXCEPTION: Final = 507049  # ffts+ exception
ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION: Final = 507050  # ffts+ trap exception
ACL_ERROR_RT_SEND_MSG: Final = 507051  # hdc send msg fail
ACL_ERROR_RT_COPY_DATA: Final = 507052  # copy data fail
ACL_ERROR_RT_DEVICE_MEM_ERROR: Final = 507053  # device MEM ERROR
ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR: Final = 507054  # hbm Multi-bit ECC error
ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR: Final = 507055  # suspect device MEM ERROR
ACL_ERROR_RT_LINK_ERROR: Final = 507056  # link ERROR
ACL_ERROR_RT_SUSPECT_REMOTE_ERROR: Final = 507057  # suspect remote ERROR
ACL_ERROR_RT_DRV_INTERNAL_ERROR: Final = 507899  # drv internal error
ACL_ERROR_RT_AICPU_INTERNAL_ERROR: Final = 507900  # aicpu internal error
ACL_ERROR_RT_SOCKET_CLOSE: Final = 507901  # hdc disconnect
ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR: Final = 507902  # aicpu info load response error
ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED: Final = 507903  # capture status is invalidated
ACL_ERROR_RT_COMM_OP_RETRY_FAIL: Final = 507904  # hccl operation retry failed
ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT: Final = 507905  # snapshot lock timeout
ACL_ERROR_SNAPSHOT_LOCK_FAILED: Final = 507906  # snapshot lock failed
ACL_ERROR_SNAPSHOT_UNLOCK_FAILED: Final = 507907  # snapshot unlock failed
ACL_ERROR_SNAPSHOT_BACKUP_FAILED: Final = 507908  # snapshot backup failed
ACL_ERROR_SNAPSHOT_RESTORE_FAILED: Final = 507909  # snapshot restore failed
ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED: Final = 507910  # host memory range already registered
ACL_ERROR_HOST_MEMORY_NOT_REGISTERED: Final = 507911  # host memory has not been registered
ACL_ERROR_SNAPSHOT_CALLBACK_FAILED: Final = 507912  # snapshot callback function execution failed
ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED: Final = 507913  # register snapshot callback function failed
ACL_ERROR_RT_L3_PORT_ERROR: Final = 507914  # ub mem error
ACL_ERROR_RT_CCU_TIMEOUT: Final = 507915  # ccu timeout
ACL_ERROR_RT_CCU_EXCEPTION: Final = 507916  # ccu exception

# --- graph engine (ge_error_codes.h)
ACL_ERROR_GE_PARAM_INVALID: Final = 145000  # param invalid
ACL_ERROR_GE_EXEC_NOT_INIT: Final = 145001  # exec not init
ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID: Final = 145002  # exec model path invalid
ACL_ERROR_GE_EXEC_MODEL_ID_INVALID: Final = 145003  # exec model id invalid
ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID: Final = 145006  # exec model data size invalid
ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID: Final = 145007  # exec model addr invalid
ACL_ERROR_GE_EXEC_MODEL_QUEUE_ID_INVALID: Final = 145008  # exec model queue id invalid
ACL_ERROR_GE_EXEC_LOAD_MODEL_REPEATED: Final = 145009  # exec load model repeated
ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID: Final = 145011  # dynamic input addr invalid
ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID: Final = 145012  # dynamic input length invalid
ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID: Final = 145013  # dynamic batch size invalid
ACL_ERROR_GE_AIPP_BATCH_EMPTY: Final = 145014  # aipp batch empty
ACL_ERROR_GE_AIPP_NOT_EXIST: Final = 145015  # aipp not exist
ACL_ERROR_GE_AIPP_MODE_INVALID: Final = 145016  # aipp mode invalid
ACL_ERROR_GE_OP_TASK_TYPE_INVALID: Final = 145017  # op task type invalid
ACL_ERROR_GE_OP_KERNEL_TYPE_INVALID: Final = 145018  # op kernel type invalid
ACL_ERROR_GE_PLGMGR_PATH_INVALID: Final = 145019  # plgmgr path invalid
ACL_ERROR_GE_FORMAT_INVALID: Final = 145020  # format invalid
ACL_ERROR_GE_SHAPE_INVALID: Final = 145021  # shape invalid
ACL_ERROR_GE_DATATYPE_INVALID: Final = 145022  # datatype invalid
ACL_ERROR_GE_MEMORY_ALLOCATION: Final = 245000  # memory allocation
ACL_ERROR_GE_MEMORY_OPERATE_FAILED: Final = 245001  # memory operate failed
ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED: Final = 245002  # device memory operate failed
ACL_ERROR_GE_SUBHEALTHY: Final = 345102  # subhealthy
ACL_ERROR_GE_USER_RAISE_EXCEPTION: Final = 345103  # user raise exception
ACL_ERROR_GE_DATA_NOT_ALIGNED: Final = 345104  # data not aligned
ACL_ERROR_GE_INTERNAL_ERROR: Final = 545000  # internal error
ACL_ERROR_GE_LOAD_MODEL: Final = 545001  # load model
ACL_ERROR_GE_EXEC_LOAD_MODEL_PARTITION_FAILED: Final = 545002  # exec load model partition failed
ACL_ERROR_GE_EXEC_LOAD_WEIGHT_PARTITION_FAILED: Final = 545003  # exec load weight partition failed
ACL_ERROR_GE_EXEC_LOAD_TASK_PARTITION_FAILED: Final = 545004  # exec load task partition failed
ACL_ERROR_GE_EXEC_LOAD_KERNEL_PARTITION_FAILED: Final = 545005  # exec load kernel partition failed
ACL_ERROR_GE_EXEC_RELEASE_MODEL_DATA: Final = 545006  # exec release model data
ACL_ERROR_GE_COMMAND_HANDLE: Final = 545007  # command handle
ACL_ERROR_GE_GET_TENSOR_INFO: Final = 545008  # get tensor info
ACL_ERROR_GE_UNLOAD_MODEL: Final = 545009  # unload model
ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT: Final = 545601  # model execute timeout
ACL_ERROR_GE_REDEPLOYING: Final = 545602  # redeploying

# --- aclnn status (aclnnStatus)
ACLNN_SUCCESS: Final = 0  # success
ACLNN_ERR_PARAM_NULLPTR: Final = 161001  # a required argument is a null pointer
ACLNN_ERR_PARAM_INVALID: Final = 161002  # an argument is invalid (dtype, shape, format, value)
ACLNN_ERR_RUNTIME_ERROR: Final = 361001  # runtime call failed inside the operator
ACLNN_ERR_INNER: Final = 561000  # operator internal error
ACLNN_ERR_INNER_INFERSHAPE: Final = 561001  # shape inference failed
ACLNN_ERR_INNER_TILING: Final = 561002  # tiling failed
ACLNN_ERR_INNER_FIND_KERNEL: Final = 561003  # kernel not found
ACLNN_ERR_INNER_CREATE_EXECUTOR: Final = 561101  # executor creation failed
ACLNN_ERR_INNER_NULLPTR: Final = 561103  # internal null pointer


def _name_table() -> dict[int, str]:
    """Map each code to one C name: the first one declared, except that 0 is `ACL_SUCCESS`."""
    table: dict[int, str] = {}
    for name, value in globals().items():
        if name.startswith(("ACL_", "ACLNN_")) and isinstance(value, int) and value not in table:
            table[value] = name
    table[ACL_SUCCESS] = "ACL_SUCCESS"
    return table


ERROR_NAMES: Final[dict[int, str]] = _name_table()


def code_name(code: int) -> str:
    """The C macro name of `code`, or a readable placeholder for a code no header declares."""
    return ERROR_NAMES.get(code, f"UNKNOWN_ERROR_{code}")


class AclError(Exception):
    """An ACL call failed with `code` (the exact C value); `api` is the C name of the failing call.

    The message says what was wrong and with which argument. One class serves the device, the daemon and the
    client: the client rebuilds it from the error body that the daemon sends. `task`, when a synchronize reports
    a failed task, is that task's exception information: taskId, streamId, threadId, deviceId, errorCode.
    `pipelined`, on the error a waiting call raises for an earlier pipelined call of its thread, holds the errors of
    the thread's later pipelined calls that failed too (the first ones; the message counts them all).
    """

    def __init__(self, code: int, message: str, api: str = "", task: Mapping[str, int] | None = None) -> None:
        super().__init__(code, message, api)
        self.code = int(code)
        self.message = message
        self.api = api
        self.task = dict(task) if task is not None else None
        self.pipelined: list[Exception] = []  # the client's: later pipelined calls of the thread that failed too

    @property
    def name(self) -> str:
        return code_name(self.code)

    def __str__(self) -> str:
        where = f"{self.api}: " if self.api else ""
        return f"{where}{self.name} ({self.code}): {self.message}"

    def __repr__(self) -> str:
        return f"AclError({self.code}, {self.message!r}, api={self.api!r})"

    def to_dict(self) -> dict[str, object]:
        body: dict[str, object] = {"code": self.code, "name": self.name, "message": self.message, "api": self.api}
        if self.task is not None:
            body["task"] = self.task
        return body

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> AclError:
        """Rebuild the error from `to_dict()`'s output; `name` is derived from the code, so it is not read."""
        code = data["code"]
        if isinstance(code, bool) or not isinstance(code, int):
            raise TypeError(f"AclError code must be an int, got {code!r}")
        task = data.get("task")
        failed = {str(k): int(v) for k, v in task.items()} if isinstance(task, Mapping) else None
        return cls(code, str(data.get("message", "")), str(data.get("api", "")), failed)


def require(condition: bool, message: str, code: int = ACL_ERROR_INVALID_PARAM) -> None:
    """Raise AclError(`code`, `message`) unless `condition` holds: an argument check, as the runtime's."""
    if not condition:
        raise AclError(code, message)
