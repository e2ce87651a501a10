/* TDT's host objects, shared by tdt.c (their table, data items and datasets), tdtchannel.c (channels and queues)
 * and tdtroute.c (queue attributes, routes, route lists, route queries). */
#ifndef VNPU_NATIVE_TDT_H
#define VNPU_NATIVE_TDT_H

#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "core.h"

#define MAX_DIM_COUNT 128
#define MAX_NAME_LEN 128
enum { T_ITEM = 1, T_DATASET, T_ATTR, T_ROUTE, T_LIST, T_INFO };

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

/* The table of live objects: `vn_tdt_get` answers the object `p` names, or NULL with the code (100000, "... was
 * destroyed" or "is not an object this program created", or of the wrong type) in `*code`. */
void *vn_tdt_keep(void *obj);
void vn_tdt_forget(void *obj, const char *why);
void *vn_tdt_get(const void *p, int type, const char *arg, const char *api, int *code);
void vn_tdt_drop_received(struct acltdtDataset *ds); /* a dataset's items a receive created, destroyed */

#endif
