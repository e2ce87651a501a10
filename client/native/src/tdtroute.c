/* TDT's queue attributes, routes, route lists and route queries: host objects of the program (proto/tdt.py says
 * what each holds and checks), handed to the queue calls of tdtchannel.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "tdt.h"

/* ---- attributes, routes, route lists, queries (host objects) ----------------------------------------------- */
VN_EXPORT acltdtQueueAttr *acltdtCreateQueueAttr(void)
{
    vn_enter("acltdtCreateQueueAttr");
    struct acltdtQueueAttr *a = calloc(1, sizeof(*a));
    a->h.type = T_ATTR, a->depth = 2; /* the runtime's default depth */
    return vn_tdt_keep(a);
}

VN_EXPORT acltdtQueueRoute *acltdtCreateQueueRoute(uint32_t srcId, uint32_t dstId)
{
    vn_enter("acltdtCreateQueueRoute");
    struct acltdtQueueRoute *r = calloc(1, sizeof(*r));
    r->h.type = T_ROUTE, r->src = srcId, r->dst = dstId, r->status = ACL_TDT_QUEUE_ROUTE_UNBIND;
    return vn_tdt_keep(r);
}

VN_EXPORT acltdtQueueRouteList *acltdtCreateQueueRouteList(void)
{
    vn_enter("acltdtCreateQueueRouteList");
    struct acltdtQueueRouteList *l = calloc(1, sizeof(*l));
    l->h.type = T_LIST;
    return vn_tdt_keep(l);
}

VN_EXPORT acltdtQueueRouteQueryInfo *acltdtCreateQueueRouteQueryInfo(void)
{
    vn_enter("acltdtCreateQueueRouteQueryInfo");
    struct acltdtQueueRouteQueryInfo *q = calloc(1, sizeof(*q));
    q->h.type = T_INFO;
    return vn_tdt_keep(q);
}

static aclError destroy(const void *p, int type, const char *arg, const char *api)
{
    vn_enter(api);
    int code;
    void *obj = vn_tdt_get(p, type, arg, api, &code);
    if (!obj) return code;
    vn_tdt_forget(obj, api);
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
    struct acltdtQueueAttr *a = vn_tdt_get(attr, T_ATTR, "attr", api, &code);
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
    struct acltdtQueueAttr *a = vn_tdt_get(attr, T_ATTR, "attr", api, &code);
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
    struct acltdtQueueRoute *r = vn_tdt_get(route, T_ROUTE, "route", api, &code);
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
    struct acltdtQueueRouteList *l = vn_tdt_get(routeList, T_LIST, "routeList", api, &code);
    if (!l) return code;
    struct acltdtQueueRoute *r = vn_tdt_get(route, T_ROUTE, "route", api, &code);
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
    struct acltdtQueueRouteList *l = vn_tdt_get(routeList, T_LIST, "routeList", api, &code);
    if (!l) return code;
    struct acltdtQueueRoute *into = vn_tdt_get(route, T_ROUTE, "route", api, &code);
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
    struct acltdtQueueRouteList *l = routeList ? vn_tdt_get(routeList, T_LIST, "routeList", "acltdtGetQueueRouteNum", &code)
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
    struct acltdtQueueRouteQueryInfo *q = vn_tdt_get(param, T_INFO, "param", api, &code);
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
