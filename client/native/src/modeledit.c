/* aclmdlRI introspection and editing from C (spec-modelri 3), as the Python toolkit does it: aclmdlRITaskParams
 * read and written as the runtime does (GetParams zeroes the struct, then fills `type`'s union member), the launch
 * attributes of a kernel's cfg (id and the value's first 8 bytes), and the aclrtLaunchKernelAttrValue union of
 * aclmdlRIKernelTaskGetAttribute. A kernel task's `args` with isHostArgs travels as its bytes. */
#include <string.h>

#include "acl/acl.h"
#include "core.h"

static int null_out(const char *api, const void *p, const char *name, int code)
{
    return p ? 0 : vn_fail(code, api, "%s is NULL: it must point to where the result goes", name);
}

static int one_value(const char *api, aclmdlRITask task, const char *out, uint64_t *value)
{
    vn_req r;
    vn_req_begin(&r, api, 1, 0);
    mp_key(&r.b, "task"), mp_uint(&r.b, (uintptr_t)task);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    *value = mp_u64v(vn_out(&reply, out));
    vn_reply_free(&reply);
    return 0;
}

VN_EXPORT aclError aclmdlRITaskGetType(aclmdlRITask task, aclmdlRITaskType *type)
{
    const char *api = "aclmdlRITaskGetType";
    vn_enter(api);
    int code = null_out(api, type, "type", 107000);
    uint64_t v;
    if (!code) code = one_value(api, task, "type", &v);
    if (!code) *type = (aclmdlRITaskType)v;
    return code;
}

VN_EXPORT aclError aclmdlRITaskGetSeqId(aclmdlRITask task, uint32_t *id)
{
    const char *api = "aclmdlRITaskGetSeqId";
    vn_enter(api);
    int code = null_out(api, id, "id", 107000);
    uint64_t v;
    if (!code) code = one_value(api, task, "id", &v);
    if (!code) *id = (uint32_t)v;
    return code;
}

static void *ptr(const mp_obj *map, const char *key) { return vn_from_daemon(mp_u64v(mp_get(map, key))); }

VN_EXPORT aclError aclmdlRITaskGetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{
    const char *api = "aclmdlRITaskGetParams";
    vn_enter(api);
    int code = null_out(api, params, "params", 107000);
    if (code) return code;
    vn_req r;
    vn_req_begin(&r, api, 1, 0);
    mp_key(&r.b, "task"), mp_uint(&r.b, (uintptr_t)task);
    vn_reply reply;
    if ((code = vn_call(&r, &reply))) return code;
    const mp_obj *got = vn_out(&reply, "params");
    memset(params, 0, sizeof(*params));
    params->type = (aclmdlRITaskType)mp_i64(mp_get(got, "type"));
    params->taskGrp = ptr(got, "taskGrp");
    params->opInfoPtr = ptr(got, "opInfoPtr");
    params->opInfoSize = (size_t)mp_u64v(mp_get(got, "opInfoSize"));
    switch (params->type) {
    case ACL_MODEL_RI_TASK_KERNEL: {
        const mp_obj *k = mp_get(got, "kernelTaskParams");
        aclmdlRIKernelTaskParams *p = &params->kernelTaskParams;
        p->funcHandle = ptr(k, "funcHandle"), p->args = ptr(k, "args");
        p->isHostArgs = (uint32_t)mp_u64v(mp_get(k, "isHostArgs"));
        p->argsSize = (size_t)mp_u64v(mp_get(k, "argsSize"));
        p->numBlocks = (uint32_t)mp_u64v(mp_get(k, "numBlocks"));
        break;
    }
    case ACL_MODEL_RI_TASK_EVENT_RECORD: {
        const mp_obj *e = mp_get(got, "eventRecordTaskParams");
        params->eventRecordTaskParams.event = ptr(e, "event");
        params->eventRecordTaskParams.eventFlag = (uint32_t)mp_u64v(mp_get(e, "eventFlag"));
        params->eventRecordTaskParams.recordFlag = (uint32_t)mp_u64v(mp_get(e, "recordFlag"));
        break;
    }
    case ACL_MODEL_RI_TASK_EVENT_WAIT: {
        const mp_obj *e = mp_get(got, "eventWaitTaskParams");
        params->eventWaitTaskParams.event = ptr(e, "event");
        params->eventWaitTaskParams.eventFlag = (uint32_t)mp_u64v(mp_get(e, "eventFlag"));
        params->eventWaitTaskParams.waitFlag = (uint32_t)mp_u64v(mp_get(e, "waitFlag"));
        break;
    }
    case ACL_MODEL_RI_TASK_EVENT_RESET: {
        const mp_obj *e = mp_get(got, "eventResetTaskParams");
        params->eventResetTaskParams.event = ptr(e, "event");
        params->eventResetTaskParams.eventFlag = (uint32_t)mp_u64v(mp_get(e, "eventFlag"));
        params->eventResetTaskParams.resetFlag = (uint32_t)mp_u64v(mp_get(e, "resetFlag"));
        break;
    }
    case ACL_MODEL_RI_TASK_VALUE_WRITE: {
        const mp_obj *v = mp_get(got, "valueWriteTaskParams");
        params->valueWriteTaskParams.devAddr = ptr(v, "devAddr");
        params->valueWriteTaskParams.value = mp_u64v(mp_get(v, "value"));
        break;
    }
    case ACL_MODEL_RI_TASK_VALUE_WAIT: {
        const mp_obj *v = mp_get(got, "valueWaitTaskParams");
        params->valueWaitTaskParams.devAddr = ptr(v, "devAddr");
        params->valueWaitTaskParams.value = mp_u64v(mp_get(v, "value"));
        params->valueWaitTaskParams.flag = (uint32_t)mp_u64v(mp_get(v, "flag"));
        break;
    }
    default: break;
    }
    vn_reply_free(&reply);
    return 0;
}

/* An aclrtLaunchKernelCfg * as the call table takes it: nil for NULL, else its attributes (id, 8 value bytes). */
int vn_put_launch_cfg(mp_buf *b, const aclrtLaunchKernelCfg *cfg)
{
    if (!cfg) return mp_nil(b), 0;
    mp_map(b, 1);
    mp_key(b, "attrs");
    if (!cfg->attrs) return mp_nil(b), 0;
    if (cfg->numAttrs > 1024 || !vn_readable(cfg->attrs, cfg->numAttrs * sizeof(aclrtLaunchKernelAttr))) return -1;
    mp_array(b, (uint32_t)cfg->numAttrs);
    for (size_t i = 0; i < cfg->numAttrs; i++) {
        uint64_t value;
        memcpy(&value, &cfg->attrs[i].value, 8);
        mp_map(b, 2);
        mp_key(b, "id"), mp_int(b, cfg->attrs[i].id);
        mp_key(b, "value"), mp_uint(b, value);
    }
    return 0;
}

static void put_event(mp_buf *b, const char *member, aclrtEvent event, uint32_t flag, const char *name, uint32_t value)
{
    mp_key(b, member);
    mp_map(b, 3);
    mp_key(b, "event"), mp_uint(b, (uintptr_t)event);
    mp_key(b, "eventFlag"), mp_uint(b, flag);
    mp_key(b, name), mp_uint(b, value);
}

VN_EXPORT aclError aclmdlRITaskSetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{
    const char *api = "aclmdlRITaskSetParams";
    vn_enter(api);
    vn_req r;
    vn_req_begin(&r, api, 2, 0);
    mp_key(&r.b, "task"), mp_uint(&r.b, (uintptr_t)task);
    mp_key(&r.b, "params");
    if (!params) {
        mp_nil(&r.b);
        return vn_call(&r, NULL);
    }
    int kind = params->type, has = kind >= ACL_MODEL_RI_TASK_KERNEL && kind <= ACL_MODEL_RI_TASK_VALUE_WAIT;
    mp_map(&r.b, 4 + has);
    mp_key(&r.b, "type"), mp_int(&r.b, kind);
    mp_key(&r.b, "taskGrp"), mp_uint(&r.b, (uintptr_t)params->taskGrp);
    mp_key(&r.b, "opInfoPtr"), mp_uint(&r.b, vn_to_daemon(params->opInfoPtr));
    mp_key(&r.b, "opInfoSize"), mp_uint(&r.b, params->opInfoSize);
    switch (kind) {
    case ACL_MODEL_RI_TASK_KERNEL: {
        const aclmdlRIKernelTaskParams *k = &params->kernelTaskParams;
        mp_key(&r.b, "kernelTaskParams");
        mp_map(&r.b, 6);
        mp_key(&r.b, "funcHandle"), mp_uint(&r.b, (uintptr_t)k->funcHandle);
        mp_key(&r.b, "cfg");
        if (vn_put_launch_cfg(&r.b, k->cfg)) {
            mp_free(&r.b);
            return vn_fail(107000, api, "cfg->attrs does not hold numAttrs attributes");
        }
        mp_key(&r.b, "args");
        if (k->isHostArgs && k->args) {
            if (!vn_readable(k->args, k->argsSize)) {
                mp_free(&r.b);
                return vn_fail(107000, api, "args does not hold argsSize (%zu) bytes", k->argsSize);
            }
            mp_bin(&r.b, k->args, k->argsSize);
        } else mp_uint(&r.b, vn_to_daemon(k->args));
        mp_key(&r.b, "isHostArgs"), mp_uint(&r.b, k->isHostArgs);
        mp_key(&r.b, "argsSize"), mp_uint(&r.b, k->argsSize);
        mp_key(&r.b, "numBlocks"), mp_uint(&r.b, k->numBlocks);
        break;
    }
    case ACL_MODEL_RI_TASK_EVENT_RECORD: {
        const aclmdlRIEventRecordTaskParams *e = &params->eventRecordTaskParams;
        put_event(&r.b, "eventRecordTaskParams", e->event, e->eventFlag, "recordFlag", e->recordFlag);
        break;
    }
    case ACL_MODEL_RI_TASK_EVENT_WAIT: {
        const aclmdlRIEventWaitTaskParams *e = &params->eventWaitTaskParams;
        put_event(&r.b, "eventWaitTaskParams", e->event, e->eventFlag, "waitFlag", e->waitFlag);
        break;
    }
    case ACL_MODEL_RI_TASK_EVENT_RESET: {
        const aclmdlRIEventResetTaskParams *e = &params->eventResetTaskParams;
        put_event(&r.b, "eventResetTaskParams", e->event, e->eventFlag, "resetFlag", e->resetFlag);
        break;
    }
    case ACL_MODEL_RI_TASK_VALUE_WRITE:
        mp_key(&r.b, "valueWriteTaskParams");
        mp_map(&r.b, 2);
        mp_key(&r.b, "devAddr"), mp_uint(&r.b, vn_to_daemon(params->valueWriteTaskParams.devAddr));
        mp_key(&r.b, "value"), mp_uint(&r.b, params->valueWriteTaskParams.value);
        break;
    case ACL_MODEL_RI_TASK_VALUE_WAIT:
        mp_key(&r.b, "valueWaitTaskParams");
        mp_map(&r.b, 3);
        mp_key(&r.b, "devAddr"), mp_uint(&r.b, vn_to_daemon(params->valueWaitTaskParams.devAddr));
        mp_key(&r.b, "value"), mp_uint(&r.b, params->valueWaitTaskParams.value);
        mp_key(&r.b, "flag"), mp_uint(&r.b, params->valueWaitTaskParams.flag);
        break;
    default: break;
    }
    return vn_call(&r, NULL);
}

VN_EXPORT aclError aclmdlRIKernelTaskGetAttribute(aclmdlRITask task, aclrtLaunchKernelAttrId attrId,
                                                  aclrtLaunchKernelAttrValue *attrValue)
{
    const char *api = "aclmdlRIKernelTaskGetAttribute";
    vn_enter(api);
    int code = null_out(api, attrValue, "attrValue", 100000);
    if (code) return code;
    vn_req r;
    vn_req_begin(&r, api, 2, 0);
    mp_key(&r.b, "task"), mp_uint(&r.b, (uintptr_t)task);
    mp_key(&r.b, "attrId"), mp_int(&r.b, attrId);
    vn_reply reply;
    if ((code = vn_call(&r, &reply))) return code;
    uint64_t got = mp_u64v(vn_out(&reply, "attrValue"));
    vn_reply_free(&reply);
    switch ((int)attrId) {
    case ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE: attrValue->schemMode = (uint8_t)got; break;
    case ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE: attrValue->dynUBufSize = (uint32_t)got; break;
    case ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP: attrValue->isDataDump = (uint8_t)got; break;
    case ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT: attrValue->timeout = (uint16_t)got; break;
    default:
        attrValue->timeoutUs.timeoutLow = (uint32_t)got;
        attrValue->timeoutUs.timeoutHigh = (uint32_t)(got >> 32);
    }
    return 0;
}
