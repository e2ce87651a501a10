/* TDT's channels and queues: the daemon's, reached through the call table; the data items and datasets they send
 * and receive are host objects of the program (tdt.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "tdt.h"

/* ---- channels ------------------------------------------------------------------------------------------------ */
static acltdtChannelHandle *create_channel(const char *api, uint32_t deviceId, const char *name, int with_capacity,
                                           size_t capacity)
{
    vn_req r;
    vn_req_begin(&r, api, with_capacity ? 3 : 2, 0);
    mp_key(&r.b, "deviceId"), mp_uint(&r.b, deviceId);
    mp_key(&r.b, "name");
    if (name) mp_str(&r.b, name);
    else mp_nil(&r.b);
    if (with_capacity) mp_key(&r.b, "capacity"), mp_uint(&r.b, capacity);
    vn_reply reply;
    if (vn_call(&r, &reply)) return NULL;
    acltdtChannelHandle *handle = (acltdtChannelHandle *)(uintptr_t)mp_u64v(vn_out(&reply, "handle"));
    vn_reply_free(&reply);
    return handle;
}

VN_EXPORT acltdtChannelHandle *acltdtCreateChannel(uint32_t deviceId, const char *name)
{
    vn_enter("acltdtCreateChannel");
    return create_channel("acltdtCreateChannel", deviceId, name, 0, 0);
}

VN_EXPORT acltdtChannelHandle *acltdtCreateChannelWithCapacity(uint32_t deviceId, const char *name, size_t capacity)
{
    vn_enter("acltdtCreateChannelWithCapacity");
    return create_channel("acltdtCreateChannelWithCapacity", deviceId, name, 1, capacity);
}

static aclError channel_call(const char *api, const acltdtChannelHandle *handle)
{
    vn_enter(api);
    vn_req r;
    vn_req_begin(&r, api, 1, 0);
    mp_key(&r.b, "handle"), mp_uint(&r.b, (uintptr_t)handle);
    return vn_call(&r, NULL);
}
VN_EXPORT aclError acltdtStopChannel(acltdtChannelHandle *handle) { return channel_call("acltdtStopChannel", handle); }
VN_EXPORT aclError acltdtCleanChannel(acltdtChannelHandle *handle) { return channel_call("acltdtCleanChannel", handle); }
VN_EXPORT aclError acltdtDestroyChannel(acltdtChannelHandle *handle)
{
    return channel_call("acltdtDestroyChannel", handle);
}

VN_EXPORT aclError acltdtSendTensor(const acltdtChannelHandle *handle, const acltdtDataset *dataset, int32_t timeout)
{
    const char *api = "acltdtSendTensor";
    vn_enter(api);
    int code;
    struct acltdtDataset *ds = vn_tdt_get(dataset, T_DATASET, "dataset", api, &code);
    if (!ds) return code;
    for (size_t i = 0; i < ds->n; i++) {
        struct acltdtDataItem *item = ds->items[i];
        if (item->tensor_type == ACL_TENSOR_DATA_UNDEFINED)
            return vn_fail(100000, api, "item %zu has tensor type %d, which a channel cannot carry", i,
                           item->tensor_type);
        if (item->size && !item->data)
            return vn_fail(100000, api, "an item of %zu bytes has NULL data", item->size);
        if (item->size && !vn_readable(item->data, item->size))
            return vn_fail(100000, api, "item %zu's data does not hold its %zu bytes", i, item->size);
    }
    vn_req r;
    vn_req_begin(&r, api, 4, 0);
    mp_key(&r.b, "handle"), mp_uint(&r.b, (uintptr_t)handle);
    mp_key(&r.b, "name"), mp_str(&r.b, ds->name);
    mp_key(&r.b, "items"), mp_array(&r.b, (uint32_t)ds->n);
    for (size_t i = 0; i < ds->n; i++) {
        struct acltdtDataItem *item = ds->items[i];
        mp_map(&r.b, 6);
        mp_key(&r.b, "tensorType"), mp_int(&r.b, item->tensor_type);
        mp_key(&r.b, "dims"), mp_array(&r.b, (uint32_t)item->ndims);
        for (size_t d = 0; d < item->ndims; d++) mp_int(&r.b, item->dims[d]);
        mp_key(&r.b, "dataType"), mp_int(&r.b, item->data_type);
        mp_key(&r.b, "data"), mp_bin(&r.b, item->data, item->size);
        mp_key(&r.b, "sliceNum"), mp_uint(&r.b, item->slice_num);
        mp_key(&r.b, "sliceId"), mp_uint(&r.b, item->slice_id);
    }
    mp_key(&r.b, "timeout"), mp_int(&r.b, timeout);
    return vn_call(&r, NULL);
}

VN_EXPORT aclError acltdtReceiveTensor(const acltdtChannelHandle *handle, acltdtDataset *dataset, int32_t timeout)
{
    const char *api = "acltdtReceiveTensor";
    vn_enter(api);
    int code;
    struct acltdtDataset *ds = vn_tdt_get(dataset, T_DATASET, "dataset", api, &code);
    if (!ds) return code;
    if (ds->n && !ds->owns_items)
        return vn_fail(100000, api, "the dataset holds %zu items of the program's: a receive needs an empty dataset "
                                    "(or one a receive filled)", ds->n);
    vn_req r;
    vn_req_begin(&r, api, 2, 0);
    mp_key(&r.b, "handle"), mp_uint(&r.b, (uintptr_t)handle);
    mp_key(&r.b, "timeout"), mp_int(&r.b, timeout);
    vn_reply reply;
    if ((code = vn_call(&r, &reply))) return code;
    vn_tdt_drop_received(ds);
    const mp_obj *name = vn_out(&reply, "name"), *items = vn_out(&reply, "items");
    snprintf(ds->name, sizeof(ds->name), "%.*s", name && name->type == MP_STR ? (int)name->n : 0,
             name && name->type == MP_STR ? name->v.s : "");
    size_t n = items && items->type == MP_ARRAY ? items->n : 0;
    ds->items = realloc(ds->items, (n ? n : 1) * sizeof(*ds->items));
    ds->n = n, ds->owns_items = 1;
    for (size_t i = 0; i < n; i++) {
        const mp_obj *it = &items->v.items[i];
        struct acltdtDataItem *item = calloc(1, sizeof(*item));
        item->h.type = T_ITEM, item->owned = 1;
        item->tensor_type = (int)mp_i64(mp_get(it, "tensorType"));
        item->data_type = (int)mp_i64(mp_get(it, "dataType"));
        item->slice_num = mp_u64v(mp_get(it, "sliceNum")), item->slice_id = mp_u64v(mp_get(it, "sliceId"));
        const mp_obj *dims = mp_get(it, "dims"), *data = mp_get(it, "data");
        for (uint32_t d = 0; dims && dims->type == MP_ARRAY && d < dims->n && d < MAX_DIM_COUNT; d++)
            item->dims[item->ndims++] = mp_i64(&dims->v.items[d]);
        item->size = data && (data->type == MP_BIN || data->type == MP_STR) ? data->n : 0;
        item->data = malloc(item->size ? item->size : 1);
        if (item->size) memcpy(item->data, data->v.s, item->size);
        ds->items[i] = vn_tdt_keep(item);
    }
    vn_reply_free(&reply);
    return 0;
}

VN_EXPORT aclError acltdtQueryChannelSize(const acltdtChannelHandle *handle, size_t *size)
{
    const char *api = "acltdtQueryChannelSize";
    vn_enter(api);
    if (!size) return vn_null_out(api, "size");
    vn_req r;
    vn_req_begin(&r, api, 1, 0);
    mp_key(&r.b, "handle"), mp_uint(&r.b, (uintptr_t)handle);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    *size = (size_t)mp_u64v(vn_out(&reply, "size"));
    vn_reply_free(&reply);
    return 0;
}

/* ---- queues -------------------------------------------------------------------------------------------------- */
VN_EXPORT aclError acltdtCreateQueue(const acltdtQueueAttr *attr, uint32_t *qid)
{
    const char *api = "acltdtCreateQueue";
    vn_enter(api);
    int code;
    struct acltdtQueueAttr *a = vn_tdt_get(attr, T_ATTR, "attr", api, &code);
    if (!a) return code;
    if (!qid) return vn_null_out(api, "qid");
    vn_req r;
    vn_req_begin(&r, api, 2, 0);
    mp_key(&r.b, "name"), mp_str(&r.b, a->name);
    mp_key(&r.b, "depth"), mp_uint(&r.b, a->depth);
    vn_reply reply;
    if ((code = vn_call(&r, &reply))) return code;
    *qid = (uint32_t)mp_u64v(vn_out(&reply, "qid"));
    vn_reply_free(&reply);
    return 0;
}

VN_EXPORT aclError acltdtDequeueData(uint32_t qid, void *data, size_t dataSize, size_t *retDataSize, void *userData,
                                     size_t userDataSize, int32_t timeout)
{
    const char *api = "acltdtDequeueData";
    vn_enter(api);
    if (!data) return vn_fail(100000, api, "data is NULL: it must hold dataSize bytes");
    if (!retDataSize) return vn_null_out(api, "retDataSize");
    vn_req r;
    vn_req_begin(&r, api, 4, 0);
    mp_key(&r.b, "qid"), mp_uint(&r.b, qid);
    mp_key(&r.b, "dataSize"), mp_uint(&r.b, dataSize);
    mp_key(&r.b, "userDataSize"), mp_uint(&r.b, userData ? userDataSize : 0);
    mp_key(&r.b, "timeout"), mp_int(&r.b, timeout);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    const mp_obj *got = vn_out(&reply, "data"), *extra = vn_out(&reply, "userData");
    if (got && got->n <= dataSize) memcpy(data, got->v.s, got->n);
    if (extra && userData && extra->n && extra->n <= userDataSize) memcpy(userData, extra->v.s, extra->n);
    *retDataSize = (size_t)mp_u64v(vn_out(&reply, "retDataSize"));
    vn_reply_free(&reply);
    return 0;
}

static aclError route_call(const char *api, acltdtQueueRouteList *qRouteList)
{
    vn_enter(api);
    int code;
    struct acltdtQueueRouteList *l = vn_tdt_get(qRouteList, T_LIST, "qRouteList", api, &code);
    if (!l) return code;
    vn_req r;
    vn_req_begin(&r, api, 1, 0);
    mp_key(&r.b, "routes"), mp_array(&r.b, (uint32_t)l->n);
    for (size_t i = 0; i < l->n; i++) mp_array(&r.b, 2), mp_uint(&r.b, l->routes[i].src), mp_uint(&r.b, l->routes[i].dst);
    vn_reply reply;
    if ((code = vn_call(&r, &reply))) return code;
    const mp_obj *status = vn_out(&reply, "status");
    for (size_t i = 0; status && status->type == MP_ARRAY && i < status->n && i < l->n; i++)
        l->routes[i].status = (int32_t)mp_i64(&status->v.items[i]);
    vn_reply_free(&reply);
    return 0;
}
VN_EXPORT aclError acltdtBindQueueRoutes(acltdtQueueRouteList *qRouteList)
{
    return route_call("acltdtBindQueueRoutes", qRouteList);
}
VN_EXPORT aclError acltdtUnbindQueueRoutes(acltdtQueueRouteList *qRouteList)
{
    return route_call("acltdtUnbindQueueRoutes", qRouteList);
}

VN_EXPORT aclError acltdtQueryQueueRoutes(const acltdtQueueRouteQueryInfo *queryInfo, acltdtQueueRouteList *qRouteList)
{
    const char *api = "acltdtQueryQueueRoutes";
    vn_enter(api);
    int code;
    struct acltdtQueueRouteQueryInfo *q = vn_tdt_get(queryInfo, T_INFO, "queryInfo", api, &code);
    if (!q) return code;
    struct acltdtQueueRouteList *l = vn_tdt_get(qRouteList, T_LIST, "qRouteList", api, &code);
    if (!l) return code;
    if (!q->has_mode)
        return vn_fail(100000, api, "the query has no mode: set ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM with "
                                    "acltdtSetQueueRouteQueryInfo");
    int m = q->mode;
    if (m != 0 && m != 1 && m != 2 && m != 100)
        return vn_fail(100000, api, "query mode %d is not an acltdtQueueRouteQueryMode", m);
    if ((m == 0 || m == 2) && !q->has_src)
        return vn_fail(100000, api, "query mode %d needs the source queue id: set it first", m);
    if ((m == 1 || m == 2) && !q->has_dst)
        return vn_fail(100000, api, "query mode %d needs the destination queue id: set it first", m);
    vn_req r;
    vn_req_begin(&r, api, 3, 0);
    mp_key(&r.b, "mode"), mp_int(&r.b, m);
    mp_key(&r.b, "srcId");
    if (q->has_src) mp_uint(&r.b, q->src);
    else mp_nil(&r.b);
    mp_key(&r.b, "dstId");
    if (q->has_dst) mp_uint(&r.b, q->dst);
    else mp_nil(&r.b);
    vn_reply reply;
    if ((code = vn_call(&r, &reply))) return code;
    const mp_obj *routes = vn_out(&reply, "routes");
    size_t n = routes && routes->type == MP_ARRAY ? routes->n : 0;
    l->routes = realloc(l->routes, (n ? n : 1) * sizeof(*l->routes));
    l->n = n;
    for (size_t i = 0; i < n; i++) {
        const mp_obj *route = &routes->v.items[i];
        l->routes[i].h.type = T_ROUTE;
        l->routes[i].src = (uint32_t)mp_u64v(&route->v.items[0]);
        l->routes[i].dst = (uint32_t)mp_u64v(&route->v.items[1]);
        l->routes[i].status = (int32_t)mp_i64(&route->v.items[2]);
    }
    vn_reply_free(&reply);
    return 0;
}
