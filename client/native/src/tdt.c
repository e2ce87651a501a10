/* TDT from C: data items, datasets, queue attributes, routes, route lists and route queries are host objects of
 * the program (proto/tdt.py says what each holds and checks: the runtime's tensor_data_transfer.cpp and queue.cpp);
 * channels and queues are the daemon's, reached through the call table. An item keeps the program's data pointer,
 * never a copy, as acltdtCreateDataItem does; an item a receive created owns its bytes and goes with its dataset.
 * Here: the table of live objects, data items and datasets; channels and queues in tdtchannel.c, queue
 * attributes and routes in tdtroute.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "tdt.h"

static const char *const TYPES[] = {"", "acltdtDataItem", "acltdtDataset", "acltdtQueueAttr", "acltdtQueueRoute",
                                    "acltdtQueueRouteList", "acltdtQueueRouteQueryInfo"};

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

void *vn_tdt_keep(void *obj)
{
    pthread_mutex_lock(&lock);
    if (n_live == cap_live) live = realloc(live, (cap_live = cap_live ? cap_live * 2 : 64) * sizeof(void *));
    live[n_live++] = obj;
    for (size_t i = 0; i < GONE; i++)
        if (gone[i].p == obj) gone[i].p = NULL;
    pthread_mutex_unlock(&lock);
    return obj;
}

void vn_tdt_forget(void *obj, const char *why)
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

void *vn_tdt_get(const void *p, int type, const char *arg, const char *api, int *code)
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
    void *found = vn_tdt_get(p, type, "", "", &code);
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
        return vn_tdt_keep(item);
    }
    if (dims && !vn_readable(dims, dimNum * sizeof(int64_t))) {
        free(item);
        return vn_fail(100000, api, "dims does not hold dimNum (%zu) values", dimNum), NULL;
    }
    memcpy(item->dims, dims, dimNum * sizeof(int64_t));
    item->ndims = dimNum, item->data_type = dataType, item->data = data, item->size = size;
    return vn_tdt_keep(item);
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
    struct acltdtDataItem *item = vn_tdt_get(dataItem, T_ITEM, "dataItem", api, &code);
    if (!item) return code;
    vn_tdt_forget(item, api);
    free_item(item);
    return 0;
}

VN_EXPORT acltdtDataset *acltdtCreateDataset(void)
{
    vn_enter("acltdtCreateDataset");
    struct acltdtDataset *ds = calloc(1, sizeof(*ds));
    ds->h.type = T_DATASET;
    return vn_tdt_keep(ds);
}

void vn_tdt_drop_received(struct acltdtDataset *ds)
{
    if (ds->owns_items)
        for (size_t i = 0; i < ds->n; i++)
            if (alive(ds->items[i], T_ITEM)) vn_tdt_forget(ds->items[i], "with its dataset"), free_item(ds->items[i]);
}

VN_EXPORT aclError acltdtDestroyDataset(acltdtDataset *dataset)
{
    const char *api = "acltdtDestroyDataset";
    vn_enter(api);
    int code;
    struct acltdtDataset *ds = vn_tdt_get(dataset, T_DATASET, "dataset", api, &code);
    if (!ds) return code;
    vn_tdt_drop_received(ds);
    vn_tdt_forget(ds, api);
    free(ds->items);
    free(ds);
    return 0;
}

VN_EXPORT acltdtDataItem *acltdtGetDataItem(const acltdtDataset *dataset, size_t index)
{
    const char *api = "acltdtGetDataItem";
    vn_enter(api);
    int code;
    struct acltdtDataset *ds = vn_tdt_get(dataset, T_DATASET, "dataset", api, &code);
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
    struct acltdtDataset *ds = vn_tdt_get(dataset, T_DATASET, "dataset", api, &code);
    if (!ds) return code;
    struct acltdtDataItem *item = vn_tdt_get(dataItem, T_ITEM, "dataItem", api, &code);
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
    struct acltdtDataset *ds = dataset ? vn_tdt_get(dataset, T_DATASET, "dataset", "acltdtGetDatasetSize", &code) : NULL;
    return ds ? ds->n : 0;
}

VN_EXPORT const char *acltdtGetDatasetName(const acltdtDataset *dataset)
{
    vn_enter("acltdtGetDatasetName");
    int code;
    struct acltdtDataset *ds = dataset ? vn_tdt_get(dataset, T_DATASET, "dataset", "acltdtGetDatasetName", &code) : NULL;
    return ds ? ds->name : NULL;
}

static struct acltdtDataItem *item_of(const acltdtDataItem *p, const char *api)
{
    int code;
    return p ? vn_tdt_get(p, T_ITEM, "dataItem", api, &code) : NULL;
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
    struct acltdtDataItem *i = vn_tdt_get(dataItem, T_ITEM, "dataItem", api, &code);
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
    struct acltdtDataItem *i = vn_tdt_get(dataItem, T_ITEM, "dataItem", api, &code);
    if (!i) return code;
    if (!dims && dimNum != 0)
        return vn_fail(100000, api, "dims is NULL but dimNum is %zu: with no dims, dimNum must be 0", dimNum);
    if (dims && dimNum == 0) return vn_fail(100000, api, "dims is not NULL but dimNum is 0");
    if (dimNum < i->ndims) return vn_fail(100000, api, "dimNum %zu is less than the item's %zu dims", dimNum, i->ndims);
    if (i->ndims) memcpy(dims, i->dims, i->ndims * sizeof(int64_t));
    return 0;
}
