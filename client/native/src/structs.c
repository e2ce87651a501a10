/* Calls that take a C struct whose fields become the call's argument: aclrtRandomNumAsync (its task info, the
 * union read through its two slots; the data type the ACL layer writes over the caller's `dataType` written back,
 * as the runtime does, also when the launch then fails), aclmdlRIAddCondTask (its params by value; the sub-models
 * written into the caller's modelRIArray), aclmdlRICaptureEnd with a NULL modelRI (a sub-model's capture ends:
 * vnpuCaptureEndNoModel). */
#include <string.h>

#include "acl/acl.h"
#include "core.h"

int vn_rt_random_data_type(int dtype); /* generated from proto.randomnum: -1 for a type the ACL layer keeps */

static void put_para(mp_buf *b, const aclrtRandomParaInfo *p)
{
    mp_map(b, 3);
    mp_key(b, "isAddr"), mp_uint(b, p->isAddr);
    mp_key(b, "valueOrAddr"), mp_array(b, 8);
    for (int i = 0; i < 8; i++) mp_uint(b, p->valueOrAddr[i]);
    mp_key(b, "size"), mp_uint(b, p->size);
}

VN_EXPORT aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo *taskInfo, aclrtStream stream, void *reserve)
{
    const char *api = "aclrtRandomNumAsync";
    vn_enter(api);
    vn_req r;
    vn_req_begin(&r, api, 3, 1);
    mp_key(&r.b, "taskInfo");
    if (!taskInfo) mp_nil(&r.b);
    else {
        const aclrtRandomNumTaskInfo *t = taskInfo;
        mp_map(&r.b, 7);
        mp_key(&r.b, "dataType"), mp_int(&r.b, t->dataType);
        mp_key(&r.b, "randomNumFuncParaInfo"), mp_map(&r.b, 2);
        mp_key(&r.b, "funcType"), mp_int(&r.b, t->randomNumFuncParaInfo.funcType);
        mp_key(&r.b, "paramInfo"), mp_array(&r.b, 2);
        put_para(&r.b, &t->randomNumFuncParaInfo.paramInfo.uniformDisInfo.min);
        put_para(&r.b, &t->randomNumFuncParaInfo.paramInfo.uniformDisInfo.max);
        mp_key(&r.b, "randomParaAddr"), mp_uint(&r.b, vn_to_daemon(t->randomParaAddr));
        mp_key(&r.b, "randomResultAddr"), mp_uint(&r.b, vn_to_daemon(t->randomResultAddr));
        mp_key(&r.b, "randomCounterAddr"), mp_uint(&r.b, vn_to_daemon(t->randomCounterAddr));
        mp_key(&r.b, "randomSeed"), put_para(&r.b, &t->randomSeed);
        mp_key(&r.b, "randomNum"), put_para(&r.b, &t->randomNum);
    }
    mp_key(&r.b, "stream"), mp_uint(&r.b, (uintptr_t)stream);
    mp_key(&r.b, "reserve"), mp_uint(&r.b, (uintptr_t)reserve);
    r.has_stream = 1, r.stream = (uintptr_t)stream;
    int mapped = taskInfo ? vn_rt_random_data_type(taskInfo->dataType) : -1;
    int code = vn_call(&r, NULL);
    if (mapped >= 0) ((aclrtRandomNumTaskInfo *)taskInfo)->dataType = (aclDataType)mapped; /* C memory, as the runtime */
    return code;
}

VN_EXPORT aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream, uint32_t flags)
{
    const char *api = "aclmdlRIAddCondTask";
    vn_enter(api);
    vn_req r;
    vn_req_begin(&r, api, 3, 0);
    mp_key(&r.b, "params"), mp_map(&r.b, 4);
    mp_key(&r.b, "handle"), mp_uint(&r.b, (uintptr_t)params.handle);
    mp_key(&r.b, "type"), mp_int(&r.b, params.type);
    mp_key(&r.b, "size"), mp_uint(&r.b, params.size);
    mp_key(&r.b, "modelRIArray"), mp_uint(&r.b, (uintptr_t)params.modelRIArray);
    mp_key(&r.b, "stream"), mp_uint(&r.b, (uintptr_t)stream);
    mp_key(&r.b, "flags"), mp_uint(&r.b, flags);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    const mp_obj *models = vn_out(&reply, "modelRIArray");
    if (params.modelRIArray && models && models->type == MP_ARRAY &&
        vn_readable(params.modelRIArray, models->n * sizeof(aclmdlRI)))
        for (uint32_t i = 0; i < models->n; i++) params.modelRIArray[i] = (aclmdlRI)(uintptr_t)mp_u64v(&models->v.items[i]);
    vn_reply_free(&reply);
    return 0;
}

VN_EXPORT aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)
{
    const char *api = "aclmdlRICaptureEnd";
    vn_enter(api);
    vn_req r;
    vn_req_begin(&r, modelRI ? api : "vnpuCaptureEndNoModel", 1, 0);
    mp_key(&r.b, "stream"), mp_uint(&r.b, (uintptr_t)stream);
    r.has_stream = 1, r.stream = (uintptr_t)stream;
    vn_reply reply;
    int code = vn_call(&r, modelRI ? &reply : NULL);
    if (code || !modelRI) return code;
    *modelRI = (aclmdlRI)(uintptr_t)mp_u64v(vn_out(&reply, "modelRI"));
    vn_reply_free(&reply);
    return 0;
}

/* Shareable handles of the V2 calls: the bytes C finds behind shareableHandle (the DEFAULT type: the 8-byte
 * handle; a FABRIC one is 128 bytes, of which vnpu's handle is the first 8). */
#define SHARE_FABRIC 2
VN_EXPORT aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle, uint64_t flags,
                                                     aclrtMemSharedHandleType shareType, void *shareableHandle)
{
    const char *api = "aclrtMemExportToShareableHandleV2";
    vn_enter(api);
    if (!shareableHandle) return vn_null_out(api, "shareableHandle");
    vn_req r;
    vn_req_begin(&r, api, 3, 0);
    mp_key(&r.b, "handle"), mp_uint(&r.b, (uintptr_t)handle);
    mp_key(&r.b, "flags"), mp_uint(&r.b, flags);
    mp_key(&r.b, "shareType"), mp_int(&r.b, shareType);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    const mp_obj *data = vn_out(&reply, "shareableHandle");
    size_t room = (int)shareType == SHARE_FABRIC ? 128 : 8;
    if (data && (data->type == MP_BIN || data->type == MP_STR)) memcpy(shareableHandle, data->v.s, data->n < room ? data->n : room);
    vn_reply_free(&reply);
    return 0;
}

VN_EXPORT aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle, aclrtMemSharedHandleType shareType,
                                                       uint64_t flags, aclrtDrvMemHandle *handle)
{
    const char *api = "aclrtMemImportFromShareableHandleV2";
    vn_enter(api);
    if (!handle) return vn_null_out(api, "handle");
    size_t size = (int)shareType == SHARE_FABRIC ? 128 : 8;
    if (shareableHandle && !vn_readable(shareableHandle, size))
        return vn_fail(100000, api, "shareableHandle does not hold its %zu bytes", size);
    vn_req r;
    vn_req_begin(&r, api, 3, 0);
    mp_key(&r.b, "shareableHandle");
    if (shareableHandle) mp_bin(&r.b, shareableHandle, 8);
    else mp_nil(&r.b);
    mp_key(&r.b, "shareType"), mp_int(&r.b, shareType);
    mp_key(&r.b, "flags"), mp_uint(&r.b, flags);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    *handle = (aclrtDrvMemHandle)(uintptr_t)mp_u64v(vn_out(&reply, "handle"));
    vn_reply_free(&reply);
    return 0;
}
