/* The legacy single-operator API from C, as proto.legacyop runs it: tensor descriptions (aclTensorDesc) and
 * operator attributes (aclopAttr) are host objects of the program; executing a legacy operator is refused with
 * ACL_ERROR_OP_NOT_FOUND naming it (vnpu runs aclnn operators only; a fallback answering 0 would leave the output
 * uncomputed). (The profiling reports are profiling.c's, aclsysGetCANNVersion and aclrtDeviceGetUuid versions.c's.)
 *
 * A getter given a pointer that is no description answers what the runtime answers for NULL (its result type has
 * no room for an error); a setter answers 100000. The generated part (gen_legacy.c, client/native/legacygen.py)
 * holds the texts and tables evaluated from proto. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "core.h"
#include "legacy.h"

#define INVALID 100000
#define UNKNOWN_RANK 0xFFFFFFFFFFFFFFFEull
#define MAX_DIMS 64

typedef struct {
    uint32_t magic;
    int dtype, format, origin_format, placement;
    int ndims; /* -1: dims hold [-2], an unknown rank */
    int64_t dims[MAX_DIMS];
    char *name;
} desc_t;

#define DESC_MAGIC 0x64657363u
#define ATTR_MAGIC 0x61747472u

typedef struct {
    uint32_t magic;
} attr_t;

/* ---- the live descriptions and attributes ------------------------------------------------------------------- */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void **live;
static size_t live_n, live_cap;

static void *keep(void *obj)
{
    pthread_mutex_lock(&lock);
    if (live_n == live_cap) live_cap = live_cap ? live_cap * 2 : 64, live = realloc(live, live_cap * sizeof(void *));
    live[live_n++] = obj;
    pthread_mutex_unlock(&lock);
    return obj;
}

static int known(const void *obj, int forget)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < live_n && !found; i++)
        if (live[i] == obj) {
            found = 1;
            if (forget) live[i] = live[--live_n];
        }
    pthread_mutex_unlock(&lock);
    return found;
}

static desc_t *desc_of(const aclTensorDesc *handle)
{
    return handle && known(handle, 0) && ((const desc_t *)handle)->magic == DESC_MAGIC ? (desc_t *)handle : NULL;
}

/* a setter's description: 100000 for NULL or a pointer that is none */
static int desc_set(aclTensorDesc *handle, const char *api, desc_t **out)
{
    vn_enter(api);
    if (!handle) return vn_fail(INVALID, api, "desc is NULL");
    if (!(*out = desc_of(handle))) return vn_fail(INVALID, api, "desc (%p) is not an aclTensorDesc this program created", (void *)handle);
    return 0;
}

VN_EXPORT aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims, aclFormat format)
{
    vn_enter("aclCreateTensorDesc");
    if (numDims < 0 || numDims > MAX_DIMS || (numDims && (!dims || !vn_readable(dims, (size_t)numDims * 8)))) return NULL;
    desc_t *d = calloc(1, sizeof(*d));
    d->magic = DESC_MAGIC, d->dtype = dataType, d->format = format, d->origin_format = -1;
    d->ndims = numDims == 1 && dims[0] == -2 ? -1 : numDims;
    if (numDims) memcpy(d->dims, dims, (size_t)numDims * 8);
    return keep(d);
}

VN_EXPORT void aclDestroyTensorDesc(const aclTensorDesc *desc)
{
    vn_enter("aclDestroyTensorDesc");
    desc_t *d = desc_of(desc);
    if (d && known(d, 1)) d->magic = 0, free(d->name), free(d);
}

VN_EXPORT aclDataType aclGetTensorDescType(const aclTensorDesc *desc)
{
    desc_t *d = desc_of(desc);
    return d ? (aclDataType)d->dtype : ACL_DT_UNDEFINED;
}

VN_EXPORT aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc)
{
    desc_t *d = desc_of(desc);
    return d ? (aclFormat)d->format : ACL_FORMAT_UNDEFINED;
}

VN_EXPORT size_t aclGetTensorDescNumDims(const aclTensorDesc *desc)
{
    desc_t *d = desc_of(desc);
    return !d ? 0 : d->ndims < 0 ? (size_t)UNKNOWN_RANK : (size_t)d->ndims;
}

/* 0 for NULL, an unknown rank or a negative (unknown) dimension */
VN_EXPORT size_t aclGetTensorDescElementCount(const aclTensorDesc *desc)
{
    desc_t *d = desc_of(desc);
    if (!d || d->ndims < 0) return 0;
    size_t n = 1;
    for (int i = 0; i < d->ndims; i++) {
        if (d->dims[i] < 0) return 0;
        n *= (size_t)d->dims[i];
    }
    return n;
}

VN_EXPORT size_t aclGetTensorDescSize(const aclTensorDesc *desc)
{
    desc_t *d = desc_of(desc);
    return d ? aclGetTensorDescElementCount(desc) * aclDataTypeSize((aclDataType)d->dtype) : 0;
}

size_t vn_desc_size(const void *desc, int *is_desc)
{
    *is_desc = desc_of(desc) != NULL;
    return aclGetTensorDescSize(desc);
}

VN_EXPORT aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize)
{
    const char *api = "aclGetTensorDescDimV2";
    vn_enter(api);
    if (!dimSize) return vn_fail(INVALID, api, "dimSize is NULL: it must point to where the result goes");
    desc_t *d = desc_of(desc);
    if (!d) return vn_fail(INVALID, api, desc ? "desc (%p) is not an aclTensorDesc this program created" : "desc is NULL", (void *)desc);
    size_t n = d->ndims < 0 ? 1 : (size_t)d->ndims;
    if (index >= n)
        return vn_fail(INVALID, api, "index %zu is out of range: the description has %zu dims", index, n);
    *dimSize = d->ndims < 0 ? -2 : d->dims[index];
    return 0;
}

/* the deprecated form: -1 where aclGetTensorDescDimV2 fails */
VN_EXPORT int64_t aclGetTensorDescDim(const aclTensorDesc *desc, size_t index)
{
    int64_t dim;
    return aclGetTensorDescDimV2(desc, index, &dim) ? -1 : dim;
}

VN_EXPORT void aclSetTensorDescName(aclTensorDesc *desc, const char *name)
{
    vn_enter("aclSetTensorDescName");
    desc_t *d = desc_of(desc);
    if (d) free(d->name), d->name = strdup(name ? name : "");
}

VN_EXPORT const char *aclGetTensorDescName(aclTensorDesc *desc)
{
    desc_t *d = desc_of(desc);
    return d && d->name ? d->name : "";
}

#define FORMAT_SETTER(NAME, FIELD)                                                                                 \
    VN_EXPORT aclError NAME(aclTensorDesc *desc, aclFormat format)                                                 \
    {                                                                                                              \
        desc_t *d;                                                                                                 \
        int code = desc_set(desc, #NAME, &d);                                                                      \
        if (!code) d->FIELD = format;                                                                              \
        return code;                                                                                               \
    }
FORMAT_SETTER(aclSetTensorFormat, format)
FORMAT_SETTER(aclSetTensorStorageFormat, format)
FORMAT_SETTER(aclSetTensorOriginFormat, origin_format)

VN_EXPORT aclError aclSetTensorPlaceMent(aclTensorDesc *desc, aclMemType memType)
{
    desc_t *d;
    int code = desc_set(desc, "aclSetTensorPlaceMent", &d);
    if (code) return code;
    if ((int)memType < 0 || (int)memType > 2)
        return vn_fail(INVALID, "aclSetTensorPlaceMent", "memType %d is not an aclMemType", (int)memType);
    d->placement = memType;
    return 0;
}

static int shape_set(aclTensorDesc *desc, int numDims, const int64_t *dims, const char *api, int keep_dims)
{
    desc_t *d;
    vn_enter(api);
    if (numDims < 0) return vn_fail(INVALID, api, "numDims must be >= 0, got %d", numDims);
    int code = desc_set(desc, api, &d);
    if (code) return code;
    if (numDims && !dims) return vn_fail(INVALID, api, "dims is NULL while numDims is not 0");
    if (numDims > MAX_DIMS || (numDims && !vn_readable(dims, (size_t)numDims * 8)))
        return vn_fail(INVALID, api, "dims does not hold numDims (%d) values", numDims);
    if (keep_dims) {
        d->ndims = numDims;
        if (numDims) memcpy(d->dims, dims, (size_t)numDims * 8);
    }
    return 0;
}

VN_EXPORT aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const int64_t *dims)
{
    return shape_set(desc, numDims, dims, "aclSetTensorShape", 1);
}
VN_EXPORT aclError aclSetTensorStorageShape(aclTensorDesc *desc, int numDims, const int64_t *dims)
{
    return shape_set(desc, numDims, dims, "aclSetTensorStorageShape", 1);
}
/* the origin shape is kept by CANN for the compiler; vnpu compiles nothing, so it is only checked */
VN_EXPORT aclError aclSetTensorOriginShape(aclTensorDesc *desc, int numDims, const int64_t *dims)
{
    return shape_set(desc, numDims, dims, "aclSetTensorOriginShape", 0);
}

/* ---- operator attributes: checked and dropped (no legacy operator runs) ------------------------------------- */
VN_EXPORT aclopAttr *aclopCreateAttr(void)
{
    vn_enter("aclopCreateAttr");
    attr_t *a = calloc(1, sizeof(*a));
    a->magic = ATTR_MAGIC;
    return keep(a);
}

VN_EXPORT void aclopDestroyAttr(const aclopAttr *attr)
{
    vn_enter("aclopDestroyAttr");
    if (attr && known(attr, 0) && ((const attr_t *)attr)->magic == ATTR_MAGIC && known(attr, 1))
        ((attr_t *)attr)->magic = 0, free((void *)attr);
}

static int attr_set(const aclopAttr *attr, const char *name, const char *api)
{
    vn_enter(api);
    if (!attr) return vn_fail(INVALID, api, "attr is NULL");
    if (!known(attr, 0) || ((const attr_t *)attr)->magic != ATTR_MAGIC)
        return vn_fail(INVALID, api, "attr (%p) is not an aclopAttr this program created", (const void *)attr);
    if (!name || !*name) return vn_fail(INVALID, api, "attrName is NULL or empty");
    return 0;
}

static int list_set(const aclopAttr *attr, const char *name, int n, const void *values, size_t item, const char *api)
{
    int code = attr_set(attr, name, api);
    if (code) return code;
    if (n < 0 || (n && !values)) return vn_fail(INVALID, api, "numValues is %d with values %s", n, n ? "NULL" : "");
    if (n && !vn_readable(values, (size_t)n * item)) return vn_fail(INVALID, api, "values does not hold %d values", n);
    return 0;
}

VN_EXPORT aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue)
{
    (void)attrValue;
    return attr_set(attr, attrName, "aclopSetAttrBool");
}
VN_EXPORT aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue)
{
    (void)attrValue;
    return attr_set(attr, attrName, "aclopSetAttrInt");
}
VN_EXPORT aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue)
{
    (void)attrValue;
    return attr_set(attr, attrName, "aclopSetAttrFloat");
}
VN_EXPORT aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue)
{
    (void)attrValue;
    return attr_set(attr, attrName, "aclopSetAttrString");
}
VN_EXPORT aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName, aclDataType attrValue)
{
    (void)attrValue;
    return attr_set(attr, attrName, "aclopSetAttrDataType");
}
VN_EXPORT aclError aclopSetAttrListDataType(aclopAttr *attr, const char *attrName, int numValues, const aclDataType values[])
{
    return list_set(attr, attrName, numValues, values, sizeof(int), "aclopSetAttrListDataType");
}
VN_EXPORT aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName, int numValues, const uint8_t *values)
{
    return list_set(attr, attrName, numValues, values, 1, "aclopSetAttrListBool");
}
VN_EXPORT aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues, const int64_t *values)
{
    return list_set(attr, attrName, numValues, values, 8, "aclopSetAttrListInt");
}
VN_EXPORT aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName, int numValues, const float *values)
{
    return list_set(attr, attrName, numValues, values, 4, "aclopSetAttrListFloat");
}
VN_EXPORT aclError aclopSetAttrListString(aclopAttr *attr, const char *attrName, int numValues, const char **values)
{
    return list_set(attr, attrName, numValues, values, sizeof(char *), "aclopSetAttrListString");
}
VN_EXPORT aclError aclopSetAttrListListInt(aclopAttr *attr, const char *attrName, int numLists, const int *numValues,
                                           const int64_t *const values[])
{
    const char *api = "aclopSetAttrListListInt";
    int code = list_set(attr, attrName, numLists, numValues, sizeof(int), api);
    if (!code) code = list_set(attr, attrName, numLists, values, sizeof(void *), api);
    for (int i = 0; !code && i < numLists; i++) code = list_set(attr, attrName, numValues[i], values[i], 8, api);
    return code;
}

/* ---- executing a legacy operator: the runtime's checks, then the refusal naming the operator ---------------- */
int vn_refuse_execution(const char *api, const char *opType, int numInputs, int numOutputs,
                        const aclTensorDesc *const *outputs, int has_flag, int flag)
{
    vn_enter(api);
    if (numInputs < 0 || numOutputs < 0)
        return vn_fail(INVALID, api, "numInputs %d / numOutputs %d must be >= 0", numInputs, numOutputs);
    if (has_flag && flag != 0 && flag != 1)
        return vn_fail(INVALID, api, "compileFlag %d is not ACL_COMPILE_SYS or ACL_COMPILE_UNREGISTERED", flag);
    if (!opType) return vn_fail(INVALID, api, "opType is NULL");
    if (numOutputs > 0 && outputs && vn_readable(outputs, (size_t)numOutputs * sizeof(void *))) {
        int empty = 1;
        for (int i = 0; i < numOutputs && empty; i++) empty = desc_of(outputs[i]) && aclGetTensorDescSize(outputs[i]) == 0;
        if (empty) return 0; /* nothing to compute */
    }
    char message[1024];
    snprintf(message, sizeof(message), vn_aclnn_only, opType);
    return vn_fail(100024, api, "%s('%s'): %s", api, opType, message);
}

VN_EXPORT aclError aclopExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                const aclDataBuffer *const inputs[], int numOutputs,
                                const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                const aclopAttr *attr, aclrtStream stream)
{
    (void)inputDesc, (void)inputs, (void)outputs, (void)attr, (void)stream;
    return vn_refuse_execution("aclopExecute", opType, numInputs, numOutputs, outputDesc, 0, 0);
}

VN_EXPORT aclError aclopExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[], aclDataBuffer *inputs[],
                                  int numOutputs, aclTensorDesc *outputDesc[], aclDataBuffer *outputs[], aclopAttr *attr,
                                  aclrtStream stream)
{
    (void)inputDesc, (void)inputs, (void)outputs, (void)attr, (void)stream;
    return vn_refuse_execution("aclopExecuteV2", opType, numInputs, numOutputs, (const aclTensorDesc *const *)outputDesc,
                               0, 0);
}
