/* TDT from C: data items, datasets, queue attributes, routes, route lists and route queries are host objects of
 * the program (proto/tdt.py says what each holds and checks: the runtime's tensor_data_transfer.cpp and queue.cpp);
 * channels and queues are the daemon's, reached through the call table. An item keeps the program's data pointer,
 * never a copy, as acltdtCreateDataItem does; an item a receive created owns its bytes and goes with its dataset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "core.h"

#define MAX_DIM_COUNT 128
#define MAX_NAME_LEN 128
enum { T_ITEM = 1, T_DATASET, T_ATTR, T_ROUTE, T_LIST, T_INFO };
static const char *const TYPES[] = {"", "acltdtDataItem", "acltdtDataset", "acltdtQueueAttr", "acltdtQueueRoute",
                                    "acltdtQueueRouteList", "acltdtQueueRouteQueryInfo"};

typedef struct {
    int type;
} head;
struct acltdtDataItem {
    head h;
    int tensor_type, data_type;
    int64_t dims[MAX_DIM_COUNT];
    size_t ndims;
    void *data;
    size_t size;
    uint64_t slice_num, slice_id;
    int owned; /* created by a receive: its data is ours */
};
struct acltdtDataset {
    head h;
    char name[MAX_NAME_LEN];
    struct acltdtDataItem **items;
    size_t n;
    int owns_items;
};
struct acltdtQueueAttr {
    head h;
    char name[MAX_NAME_LEN];
    uint32_t depth;
};
struct acltdtQueueRoute {
    head h;
    uint32_t src, dst;
    int32_t status;
};
struct acltdtQueueRouteList {
    head h;
    struct acltdtQueueRoute *routes;
    size_t n;
};
struct acltdtQueueRouteQueryInfo {
    head h;
    int has_mode, has_src, has_dst;
    int32_t mode;
    uint32_t src, dst;
};

/* ---- live objects ------------------------------------------------------------------------------------------- */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void **live;
static size_t n_live, cap_live;
#define GONE 1024
static struct {
    const void *p;
    char why[64];
} gone[GONE];
static size_t gone_next;

static void *keep(void *obj)
{
    pthread_mutex_lock(&lock);
    if (n_live == cap_live) live = realloc(live, (cap_live = cap_live ? cap_live * 2 : 64) * sizeof(void *));
    live[n_live++] = obj;
    for (size_t i = 0; i < GONE; i++)
        if (gone[i].p == obj) gone[i].p = NULL;
    pthread_mutex_unlock(&lock);
    return obj;
}

static void forget(void *obj, const char *why)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_live; i++)
        if (live[i] == obj) {
            live[i] = live[--n_live];
            break;
        }
    gone[gone_next].p = obj;
    snprintf(gone[gone_next].why, sizeof(gone[0].why), "was destroyed (%s)", why);
    gone_next = (gone_next + 1) % GONE;
    pthread_mutex_unlock(&lock);
}

static void *get(const void *p, int type, const char *arg, const char *api, int *code)
{
    *code = 0;
    if (!p) return *code = vn_fail(100000, api, "%s is NULL", arg), NULL;
    void *found = NULL;
    char why[80] = "";
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_live && !found; i++)
        if (live[i] == p) found = live[i];
    if (!found)
        for (size_t i = 0; i < GONE; i++)
            if (gone[i].p == p) snprintf(why, sizeof(why), "%s", gone[i].why);
    pthread_mutex_unlock(&lock);
    if (!found) {
        *code = vn_fail(100000, api, "%s (%p) %s", arg, p, why[0] ? why : "is not an object this program created");
        return NULL;
    }
    if (((head *)found)->type != type) {
        *code = vn_fail(100000, api, "%s (%p) is an %s, not an %s", arg, p, TYPES[((head *)found)->type], TYPES[type]);
        return NULL;
    }
    return found;
}

static int alive(const void *p, int type)
{
    int code;
    void *found = get(p, type, "", "", &code);
    if (!found) vn_take_message();
    return found != NULL;
}

/* ---- data items and datasets ------------------------------------------------------------------------------- */
VN_EXPORT acltdtDataItem *acltdtCreateDataItem(acltdtTensorType tdtType, const int64_t *dims, size_t dimNum,
                                               aclDataType dataType, void *data, size_t size)
{
    const char *api = "acltdtCreateDataItem";
    vn_enter(api);
    if (!dims && dimNum != 0)
        return vn_fail(100000, api, "dims is NULL but dimNum is %zu: with no dims, dimNum must be 0", dimNum), NULL;
    if (dims && dimNum == 0)
        return vn_fail(100000, api, "dims is not NULL but dimNum is 0: give dimNum > 0 or dims NULL"), NULL;
    if (dimNum > MAX_DIM_COUNT)
        return vn_fail(100000, api, "dimNum %zu is larger than %d, the most dims an item has", dimNum, MAX_DIM_COUNT),
               NULL;
    struct acltdtDataItem *item = calloc(1, sizeof(*item));
    item->h.type = T_ITEM, item->tensor_type = tdtType;
    if (tdtType != ACL_TENSOR_DATA_TENSOR) {
        if (dims) {
            free(item);
            return vn_fail(100000, api, "dims must be NULL for an item of tensor type %d (only a tensor has dims)",
                           tdtType),
                   NULL;
        }
        item->data_type = ACL_DT_UNDEFINED;
        return keep(item);
    }
    if (dims && !vn_readable(dims, dimNum * sizeof(int64_t))) {
        free(item);
        return vn_fail(100000, api, "dims does not hold dimNum (%zu) values", dimNum), NULL;
    }
    memcpy(item->dims, dims, dimNum * sizeof(int64_t));
    item->ndims = dimNum, item->data_type = dataType, item->data = data, item->size = size;
    return keep(item);
}

static void free_item(struct acltdtDataItem *item)
{
    if (item->owned) free(item->data);
    free(item);
}

VN_EXPORT aclError acltdtDestroyDataItem(acltdtDataItem *dataItem)
{
    const char *api = "acltdtDestroyDataItem";
    vn_enter(api);
    int code;
    struct acltdtDataItem *item = get(dataItem, T_ITEM, "dataItem", api, &code);
    if (!item) return code;
    forget(item, api);
    free_item(item);
    return 0;
}

VN_EXPORT acltdtDataset *acltdtCreateDataset(void)
{
    vn_enter("acltdtCreateDataset");
    struct acltdtDataset *ds = calloc(1, sizeof(*ds));
    ds->h.type = T_DATASET;
    return keep(ds);
}

static void drop_received(struct acltdtDataset *ds)
{
    if (ds->owns_items)
        for (size_t i = 0; i < ds->n; i++)
            if (alive(ds->items[i], T_ITEM)) forget(ds->items[i], "with its dataset"), free_item(ds->items[i]);
}

VN_EXPORT aclError acltdtDestroyDataset(acltdtDataset *dataset)
{
    const char *api = "acltdtDestroyDataset";
    vn_enter(api);
    int code;
    struct acltdtDataset *ds = get(dataset, T_DATASET, "dataset", api, &code);
    if (!ds) return code;
    drop_received(ds);
    forget(ds, api);
    free(ds->items);
    free(ds);
    return 0;
}

VN_EXPORT acltdtDataItem *acltdtGetDataItem(const acltdtDataset *dataset, size_t index)
{
    const char *api = "acltdtGetDataItem";
    vn_enter(api);
    int code;
    struct acltdtDataset *ds = get(dataset, T_DATASET, "dataset", api, &code);
    if (!ds) return NULL;
    if (index >= ds->n)
        return vn_fail(100000, api, "index %zu is not less than the dataset's size %zu", index, ds->n), NULL;
    return ds->items[index];
}

VN_EXPORT aclError acltdtAddDataItem(acltdtDataset *dataset, acltdtDataItem *dataItem)
{
    const char *api = "acltdtAddDataItem";
    vn_enter(api);
    int code;
    struct acltdtDataset *ds = get(dataset, T_DATASET, "dataset", api, &code);
    if (!ds) return code;
    struct acltdtDataItem *item = get(dataItem, T_ITEM, "dataItem", api, &code);
    if (!item) return code;
    if (ds->owns_items)
        return vn_fail(200006, api, "the dataset holds the items a receive created: no item can be added to it");
    ds->items = realloc(ds->items, (ds->n + 1) * sizeof(*ds->items));
    ds->items[ds->n++] = item;
    return 0;
}

VN_EXPORT size_t acltdtGetDatasetSize(const acltdtDataset *dataset)
{
    vn_enter("acltdtGetDatasetSize");
    int code;
    struct acltdtDataset *ds = dataset ? get(dataset, T_DATASET, "dataset", "acltdtGetDatasetSize", &code) : NULL;
    return ds ? ds->n : 0;
}

VN_EXPORT const char *acltdtGetDatasetName(const acltdtDataset *dataset)
{
    vn_enter("acltdtGetDatasetName");
    int code;
    struct acltdtDataset *ds = dataset ? get(dataset, T_DATASET, "dataset", "acltdtGetDatasetName", &code) : NULL;
    return ds ? ds->name : NULL;
}

static struct acltdtDataItem *item_of(const acltdtDataItem *p, const char *api)
{
    int code;
    return p ? get(p, T_ITEM, "dataItem", api, &code) : NULL;
}

VN_EXPORT acltdtTensorType acltdtGetTensorTypeFromItem(const acltdtDataItem *dataItem)
{
    vn_enter("acltdtGetTensorTypeFromItem");
    struct acltdtDataItem *i = item_of(dataItem, "acltdtGetTensorTypeFromItem");
    return i ? (acltdtTensorType)i->tensor_type : ACL_TENSOR_DATA_UNDEFINED;
}
VN_EXPORT aclDataType acltdtGetDataTypeFromItem(const acltdtDataItem *dataItem)
{
    vn_enter("acltdtGetDataTypeFromItem");
    struct acltdtDataItem *i = item_of(dataItem, "acltdtGetDataTypeFromItem");
    return i ? (aclDataType)i->data_type : (aclDataType)-1;
}
VN_EXPORT void *acltdtGetDataAddrFromItem(const acltdtDataItem *dataItem)
{
    vn_enter("acltdtGetDataAddrFromItem");
    struct acltdtDataItem *i = item_of(dataItem, "acltdtGetDataAddrFromItem");
    return i ? i->data : NULL;
}
VN_EXPORT size_t acltdtGetDataSizeFromItem(const acltdtDataItem *dataItem)
{
    vn_enter("acltdtGetDataSizeFromItem");
    struct acltdtDataItem *i = item_of(dataItem, "acltdtGetDataSizeFromItem");
    return i ? i->size : 0;
}
VN_EXPORT size_t acltdtGetDimNumFromItem(const acltdtDataItem *dataItem)
{
    vn_enter("acltdtGetDimNumFromItem");
    struct acltdtDataItem *i = item_of(dataItem, "acltdtGetDimNumFromItem");
    return i ? i->ndims : 0;
}

VN_EXPORT aclError acltdtGetSliceInfoFromItem(const acltdtDataItem *dataItem, size_t *sliceNum, size_t *sliceId)
{
    const char *api = "acltdtGetSliceInfoFromItem";
    vn_enter(api);
    int code;
    struct acltdtDataItem *i = get(dataItem, T_ITEM, "dataItem", api, &code);
    if (!i) return code;
    if (!sliceNum) return vn_null_out(api, "sliceNum");
    if (!sliceId) return vn_null_out(api, "sliceId");
    *sliceNum = i->slice_num, *sliceId = i->slice_id;
    return 0;
}

VN_EXPORT aclError acltdtGetDimsFromItem(const acltdtDataItem *dataItem, int64_t *dims, size_t dimNum)
{
    const char *api = "acltdtGetDimsFromItem";
    vn_enter(api);
    int code;
    struct acltdtDataItem *i = get(dataItem, T_ITEM, "dataItem", api, &code);
    if (!i) return code;
    if (!dims && dimNum != 0)
        return vn_fail(100000, api, "dims is NULL but dimNum is %zu: with no dims, dimNum must be 0", dimNum);
    if (dims && dimNum == 0) return vn_fail(100000, api, "dims is not NULL but dimNum is 0");
    if (dimNum < i->ndims) return vn_fail(100000, api, "dimNum %zu is less than the item's %zu dims", dimNum, i->ndims);
    if (i->ndims) memcpy(dims, i->dims, i->ndims * sizeof(int64_t));
    return 0;
}

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
    struct acltdtDataset *ds = get(dataset, T_DATASET, "dataset", api, &code);
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
    struct acltdtDataset *ds = get(dataset, T_DATASET, "dataset", api, &code);
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
    drop_received(ds);
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
        ds->items[i] = keep(item);
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
    struct acltdtQueueAttr *a = get(attr, T_ATTR, "attr", api, &code);
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
    struct acltdtQueueRouteList *l = get(qRouteList, T_LIST, "qRouteList", api, &code);
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
    struct acltdtQueueRouteQueryInfo *q = get(queryInfo, T_INFO, "queryInfo", api, &code);
    if (!q) return code;
    struct acltdtQueueRouteList *l = get(qRouteList, T_LIST, "qRouteList", api, &code);
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

/* ---- attributes, routes, route lists, queries (host objects) ----------------------------------------------- */
VN_EXPORT acltdtQueueAttr *acltdtCreateQueueAttr(void)
{
    vn_enter("acltdtCreateQueueAttr");
    struct acltdtQueueAttr *a = calloc(1, sizeof(*a));
    a->h.type = T_ATTR, a->depth = 2; /* the runtime's default depth */
    return keep(a);
}

VN_EXPORT acltdtQueueRoute *acltdtCreateQueueRoute(uint32_t srcId, uint32_t dstId)
{
    vn_enter("acltdtCreateQueueRoute");
    struct acltdtQueueRoute *r = calloc(1, sizeof(*r));
    r->h.type = T_ROUTE, r->src = srcId, r->dst = dstId, r->status = ACL_TDT_QUEUE_ROUTE_UNBIND;
    return keep(r);
}

VN_EXPORT acltdtQueueRouteList *acltdtCreateQueueRouteList(void)
{
    vn_enter("acltdtCreateQueueRouteList");
    struct acltdtQueueRouteList *l = calloc(1, sizeof(*l));
    l->h.type = T_LIST;
    return keep(l);
}

VN_EXPORT acltdtQueueRouteQueryInfo *acltdtCreateQueueRouteQueryInfo(void)
{
    vn_enter("acltdtCreateQueueRouteQueryInfo");
    struct acltdtQueueRouteQueryInfo *q = calloc(1, sizeof(*q));
    q->h.type = T_INFO;
    return keep(q);
}

static aclError destroy(const void *p, int type, const char *arg, const char *api)
{
    vn_enter(api);
    int code;
    void *obj = get(p, type, arg, api, &code);
    if (!obj) return code;
    forget(obj, api);
    if (type == T_LIST) free(((struct acltdtQueueRouteList *)obj)->routes);
    free(obj);
    return 0;
}
VN_EXPORT aclError acltdtDestroyQueueAttr(const acltdtQueueAttr *attr)
{
    return destroy(attr, T_ATTR, "attr", "acltdtDestroyQueueAttr");
}
VN_EXPORT aclError acltdtDestroyQueueRoute(const acltdtQueueRoute *route)
{
    return destroy(route, T_ROUTE, "route", "acltdtDestroyQueueRoute");
}
VN_EXPORT aclError acltdtDestroyQueueRouteList(const acltdtQueueRouteList *routeList)
{
    return destroy(routeList, T_LIST, "routeList", "acltdtDestroyQueueRouteList");
}
VN_EXPORT aclError acltdtDestroyQueueRouteQueryInfo(const acltdtQueueRouteQueryInfo *info)
{
    return destroy(info, T_INFO, "info", "acltdtDestroyQueueRouteQueryInfo");
}

static int read_uint(const char *api, const void *p, size_t len, const char *arg, uint32_t *out)
{
    if (!p) return vn_fail(100000, api, "%s is NULL: it must point to where the result goes", arg);
    if (len > 4) return vn_fail(100000, api, "len %zu is larger than the 4 bytes of the value", len);
    uint32_t v = 0;
    memcpy(&v, p, len);
    *out = v;
    return 0;
}

static int write_value(const char *api, const void *value, size_t size, void *param, size_t len, size_t *ret)
{
    if (!ret) return vn_null_out(api, "paramRetSize");
    if (!param) return vn_null_out(api, "param");
    if (len < size) return vn_fail(100000, api, "len %zu is smaller than the %zu bytes of the value", len, size);
    memcpy(param, value, size);
    *ret = size;
    return 0;
}

VN_EXPORT aclError acltdtSetQueueAttr(acltdtQueueAttr *attr, acltdtQueueAttrType type, size_t len, const void *param)
{
    const char *api = "acltdtSetQueueAttr";
    vn_enter(api);
    int code;
    struct acltdtQueueAttr *a = get(attr, T_ATTR, "attr", api, &code);
    if (!a) return code;
    if (type == ACL_TDT_QUEUE_NAME_PTR) {
        if (!param) return vn_null_out(api, "param");
        if (len != sizeof(void *))
            return vn_fail(100000, api, "len %zu: the name is given as a char* (%zu)", len, sizeof(void *));
        const char *name = *(const char *const *)param;
        if (!name) return vn_fail(100000, api, "the queue name the param points to is NULL");
        size_t n = strnlen(name, MAX_NAME_LEN);
        if (n + 1 > MAX_NAME_LEN)
            return vn_fail(100000, api, "the queue name '%.*s' is more than %d bytes with its NUL", MAX_NAME_LEN, name,
                           MAX_NAME_LEN);
        memcpy(a->name, name, n + 1);
        return 0;
    }
    uint32_t value;
    if ((code = read_uint(api, param, len, "param", &value))) return code;
    if (type == ACL_TDT_QUEUE_DEPTH_UINT32) return a->depth = value, 0;
    return vn_fail(100000, api, "type %d is not an acltdtQueueAttrType (ACL_TDT_QUEUE_NAME_PTR or "
                                "ACL_TDT_QUEUE_DEPTH_UINT32)", type);
}

VN_EXPORT aclError acltdtGetQueueAttr(const acltdtQueueAttr *attr, acltdtQueueAttrType type, size_t len,
                                      size_t *paramRetSize, void *param)
{
    const char *api = "acltdtGetQueueAttr";
    vn_enter(api);
    int code;
    struct acltdtQueueAttr *a = get(attr, T_ATTR, "attr", api, &code);
    if (!a) return code;
    if (type == ACL_TDT_QUEUE_NAME_PTR) {
        const char *name = a->name;
        return write_value(api, &name, sizeof(name), param, len, paramRetSize);
    }
    if (type == ACL_TDT_QUEUE_DEPTH_UINT32) return write_value(api, &a->depth, 4, param, len, paramRetSize);
    return vn_fail(100000, api, "type %d is not an acltdtQueueAttrType (ACL_TDT_QUEUE_NAME_PTR or "
                                "ACL_TDT_QUEUE_DEPTH_UINT32)", type);
}

VN_EXPORT aclError acltdtGetQueueRouteParam(const acltdtQueueRoute *route, acltdtQueueRouteParamType type, size_t len,
                                            size_t *paramRetSize, void *param)
{
    const char *api = "acltdtGetQueueRouteParam";
    vn_enter(api);
    int code;
    struct acltdtQueueRoute *r = get(route, T_ROUTE, "route", api, &code);
    if (!r) return code;
    if (type == ACL_TDT_QUEUE_ROUTE_SRC_UINT32) return write_value(api, &r->src, 4, param, len, paramRetSize);
    if (type == ACL_TDT_QUEUE_ROUTE_DST_UINT32) return write_value(api, &r->dst, 4, param, len, paramRetSize);
    if (type == ACL_TDT_QUEUE_ROUTE_STATUS_INT32) return write_value(api, &r->status, 4, param, len, paramRetSize);
    return vn_fail(100000, api, "type %d is not an acltdtQueueRouteParamType", type);
}

VN_EXPORT aclError acltdtAddQueueRoute(acltdtQueueRouteList *routeList, const acltdtQueueRoute *route)
{
    const char *api = "acltdtAddQueueRoute";
    vn_enter(api);
    int code;
    struct acltdtQueueRouteList *l = get(routeList, T_LIST, "routeList", api, &code);
    if (!l) return code;
    struct acltdtQueueRoute *r = get(route, T_ROUTE, "route", api, &code);
    if (!r) return code;
    l->routes = realloc(l->routes, (l->n + 1) * sizeof(*l->routes));
    l->routes[l->n++] = *r;
    return 0;
}

VN_EXPORT aclError acltdtGetQueueRoute(const acltdtQueueRouteList *routeList, size_t index, acltdtQueueRoute *route)
{
    const char *api = "acltdtGetQueueRoute";
    vn_enter(api);
    int code;
    struct acltdtQueueRouteList *l = get(routeList, T_LIST, "routeList", api, &code);
    if (!l) return code;
    struct acltdtQueueRoute *into = get(route, T_ROUTE, "route", api, &code);
    if (!into) return code;
    if (index >= l->n)
        return vn_fail(100000, api, "index %zu must be less than the list's %zu routes", index, l->n);
    into->src = l->routes[index].src, into->dst = l->routes[index].dst, into->status = l->routes[index].status;
    return 0;
}

VN_EXPORT size_t acltdtGetQueueRouteNum(const acltdtQueueRouteList *routeList)
{
    vn_enter("acltdtGetQueueRouteNum");
    int code;
    struct acltdtQueueRouteList *l = routeList ? get(routeList, T_LIST, "routeList", "acltdtGetQueueRouteNum", &code)
                                               : NULL;
    return l ? l->n : 0;
}

VN_EXPORT aclError acltdtSetQueueRouteQueryInfo(acltdtQueueRouteQueryInfo *param,
                                                acltdtQueueRouteQueryInfoParamType type, size_t len,
                                                const void *value)
{
    const char *api = "acltdtSetQueueRouteQueryInfo";
    vn_enter(api);
    int code;
    struct acltdtQueueRouteQueryInfo *q = get(param, T_INFO, "param", api, &code);
    if (!q) return code;
    if (type != ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM && type != ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32 &&
        type != ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32)
        return vn_fail(100000, api, "type %d is not an acltdtQueueRouteQueryInfoParamType", type);
    uint32_t v;
    if ((code = read_uint(api, value, len, "value", &v))) return code;
    if (type == ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM) q->has_mode = 1, q->mode = (int32_t)v;
    else if (type == ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32) q->has_src = 1, q->src = v;
    else q->has_dst = 1, q->dst = v;
    return 0;
}
