/* The aclnn host objects (aclTensor, aclScalar, aclIntArray, aclOpExecutor); the operators' two phases are
 * phases.c's, the lists and libnnopbase's readers hostlist.c's.
 *
 * A handle is the address of an object of vnpu's; every handle a program passes is looked up in the table of
 * live objects before it is read, so a freed handle or a pointer vnpu did not give out is refused with a message
 * that says which (a destroyed one: by what), never dereferenced. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostobj.h"

/* ---- aclTensor ------------------------------------------------------------------------------------------------ */
#define MAX_DIMS 8
#define API_TENSOR "aclCreateTensor"

static int64_t *ints_copy(const int64_t *p, uint64_t n)
{
    int64_t *copy = malloc((n ? n : 1) * sizeof(int64_t));
    if (copy && n) memcpy(copy, p, n * sizeof(int64_t));
    return copy;
}

static void tensor_free(vn_tensor *t)
{
    free(t->dims), free(t->strides), free(t->storage), free(t);
}

static int mul_overflows(int64_t a, int64_t b, int64_t *out) { return __builtin_mul_overflow(a, b, out); }

VN_EXPORT void *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, int dataType, const int64_t *stride,
                                int64_t offset, int format, const int64_t *storageDims, uint64_t storageDimsNum,
                                void *tensorData)
{
    vn_enter(API_TENSOR);
    int64_t contiguous[MAX_DIMS];
    if (viewDimsNum && viewDims && !stride && viewDimsNum <= MAX_DIMS && vn_readable(viewDims, viewDimsNum * 8)) {
        /* NULL strides are contiguous ones, as CANN's own op_api code passes them */
        int64_t step = 1;
        for (uint64_t i = viewDimsNum; i-- > 0;) {
            contiguous[i] = step;
            step *= viewDims[i];
        }
        stride = contiguous;
    }
    if ((viewDimsNum && !viewDims) || (viewDimsNum && !stride) || (storageDimsNum && !storageDims)) {
        const char *which = viewDimsNum && !viewDims ? "viewDims" : viewDimsNum && !stride ? "stride" : "storageDims";
        vn_fail(161001, API_TENSOR, "%s is NULL but its length is %llu", which,
                (unsigned long long)(strcmp(which, "storageDims") ? viewDimsNum : storageDimsNum));
        return NULL;
    }
    if (viewDimsNum <= MAX_DIMS && storageDimsNum <= MAX_DIMS &&
        (!vn_readable(viewDims, viewDimsNum * 8) || !vn_readable(stride, viewDimsNum * 8) ||
         !vn_readable(storageDims, storageDimsNum * 8))) {
        vn_fail(161002, API_TENSOR, "viewDims, stride or storageDims does not hold the number of dims given");
        return NULL;
    }
    if (viewDimsNum > MAX_DIMS || storageDimsNum > MAX_DIMS) {
        vn_fail(161002, API_TENSOR, "%s has %llu dims; at most %d are supported",
                viewDimsNum > MAX_DIMS ? "view_dims" : "storage_dims",
                (unsigned long long)(viewDimsNum > MAX_DIMS ? viewDimsNum : storageDimsNum), MAX_DIMS);
        return NULL;
    }
    if (!vn_itemsize(dataType)) {
        vn_fail(161002, API_TENSOR, "data_type %d is not supported by vnpu tensors", dataType);
        return NULL;
    }
    if (offset < 0) {
        vn_fail(161002, API_TENSOR, "offset must be an int64 >= 0, got %lld", (long long)offset);
        return NULL;
    }
    for (uint64_t i = 0; i < viewDimsNum; i++)
        if (viewDims[i] < 0 || stride[i] < 0) {
            vn_fail(161002, API_TENSOR, "%s must hold int64 values >= 0, got %lld", viewDims[i] < 0 ? "view_dims" : "strides",
                    (long long)(viewDims[i] < 0 ? viewDims[i] : stride[i]));
            return NULL;
        }
    int64_t capacity = 1, numel = 1, last = 0;
    for (uint64_t i = 0; i < storageDimsNum; i++) {
        if (storageDims[i] < 0 || mul_overflows(capacity, storageDims[i], &capacity)) {
            vn_fail(161002, API_TENSOR, "storage_dims must hold int64 values >= 0 whose product fits");
            return NULL;
        }
    }
    for (uint64_t i = 0; i < viewDimsNum; i++) {
        int64_t reach;
        if (mul_overflows(numel, viewDims[i], &numel) ||
            (viewDims[i] && (mul_overflows(viewDims[i] - 1, stride[i], &reach) || __builtin_add_overflow(last, reach, &last)))) {
            vn_fail(161002, API_TENSOR, "the view's dims and strides overflow int64");
            return NULL;
        }
    }
    if (numel && offset + last >= capacity) {
        char view[256] = "", strides[256] = "", storage[256] = "";
        for (uint64_t i = 0; i < viewDimsNum; i++) {
            snprintf(view + strlen(view), sizeof(view) - strlen(view), "%s%lld", i ? ", " : "", (long long)viewDims[i]);
            snprintf(strides + strlen(strides), sizeof(strides) - strlen(strides), "%s%lld", i ? ", " : "",
                     (long long)stride[i]);
        }
        for (uint64_t i = 0; i < storageDimsNum; i++)
            snprintf(storage + strlen(storage), sizeof(storage) - strlen(storage), "%s%lld", i ? ", " : "",
                     (long long)storageDims[i]);
        vn_fail(161002, API_TENSOR,
                "the view (view_dims [%s], strides [%s], offset %lld) reaches element %lld but storage_dims [%s] "
                "hold %lld elements",
                view, strides, (long long)offset, (long long)(offset + last), storage, (long long)capacity);
        return NULL;
    }
    vn_tensor *t = calloc(1, sizeof(*t));
    t->h.type = OBJ_TENSOR;
    t->dtype = dataType, t->format = format, t->offset = offset, t->data = tensorData;
    t->ndim = viewDimsNum, t->nstorage = storageDimsNum;
    t->dims = ints_copy(viewDims, viewDimsNum);
    t->strides = ints_copy(stride, viewDimsNum);
    t->storage = ints_copy(storageDims, storageDimsNum);
    return vn_obj_put(t);
}

static int destroy(const void *handle, int type, const char *api, const char *arg)
{
    vn_enter(api);
    void *obj;
    if (vn_obj_get(handle, type, arg, api, 161002, &obj)) return 161002;
    if (!obj) return 0;
    char why[96];
    snprintf(why, sizeof(why), "was destroyed by %s", api);
    vn_obj_drop(obj, why);
    vn_obj_free(obj, type);
    return 0;
}

void vn_obj_free(void *obj, int type)
{
    if (type == OBJ_TENSOR) tensor_free(obj);
    else if (type == OBJ_INT_ARRAY) free(((vn_int_array *)obj)->values), free(obj);
    else if (type == OBJ_EXECUTOR) mp_free(&((vn_executor *)obj)->desc), free(obj);
    else if (type == OBJ_TENSOR_LIST || type == OBJ_SCALAR_LIST) free(((vn_list *)obj)->items), free(obj);
    else if (type == OBJ_BOOL_ARRAY || type == OBJ_FLOAT_ARRAY) free(((vn_values *)obj)->values), free(obj);
    else free(obj);
}

VN_EXPORT int aclDestroyTensor(const void *tensor) { return destroy(tensor, OBJ_TENSOR, "aclDestroyTensor", "tensor"); }
VN_EXPORT int aclDestroyScalar(const void *scalar) { return destroy(scalar, OBJ_SCALAR, "aclDestroyScalar", "scalar"); }
VN_EXPORT int aclDestroyIntArray(const void *array)
{
    return destroy(array, OBJ_INT_ARRAY, "aclDestroyIntArray", "intarray");
}
VN_EXPORT int aclDestroyAclOpExecutor(void *executor)
{
    return destroy(executor, OBJ_EXECUTOR, "aclDestroyAclOpExecutor", "executor");
}

VN_EXPORT int aclSetAclOpExecutorRepeatable(void *executor)
{
    const char *api = "aclSetAclOpExecutorRepeatable";
    vn_enter(api);
    vn_executor *e;
    if (vn_obj_get(executor, OBJ_EXECUTOR, "executor", api, 161002, (void **)&e)) return 161002;
    if (!e) return vn_fail(161001, api, "executor is NULL");
    e->repeatable = 1;
    return 0;
}

/* ---- aclScalar ------------------------------------------------------------------------------------------------ */
static double half_to_double(uint16_t h)
{
    int sign = h >> 15, exp = h >> 10 & 0x1f, mant = h & 0x3ff;
    double v = exp == 0 ? ldexp(mant, -24) : exp == 31 ? (mant ? NAN : INFINITY) : ldexp(mant | 0x400, exp - 25);
    return sign ? -v : v;
}

VN_EXPORT void *aclCreateScalar(void *value, int dataType)
{
    const char *api = "aclCreateScalar";
    vn_enter(api);
    vn_scalar s = {.h = {OBJ_SCALAR}, .dtype = dataType};
    const void *p = value;
    switch (dataType) {
    case 0: case 1: case 11: case 27: case 2: case 3: case 4: case 6: case 7: case 8: case 9: case 10: case 12: break;
    default: vn_fail(161002, api, "dataType %d is not a scalar type vnpu reads", dataType); return NULL;
    }
    if (!value) {
        vn_fail(161001, api, "value is NULL");
        return NULL;
    }
    if (!vn_readable(value, 8 > vn_itemsize(dataType) ? (size_t)vn_itemsize(dataType) : 8)) {
        vn_fail(161002, api, "value does not point to memory of this program");
        return NULL;
    }
    switch (dataType) {
    case 0: s.is_float = 1, s.f = *(const float *)p; break;
    case 1: s.is_float = 1, s.f = half_to_double(*(const uint16_t *)p); break;
    case 27: {
        uint32_t bits = (uint32_t)*(const uint16_t *)p << 16;
        float f;
        memcpy(&f, &bits, 4);
        s.is_float = 1, s.f = f;
        break;
    }
    case 11: s.is_float = 1, s.f = *(const double *)p; break;
    case 2: s.i = *(const int8_t *)p; break;
    case 3: s.i = *(const int32_t *)p; break;
    case 4: s.i = *(const uint8_t *)p; break;
    case 6: s.i = *(const int16_t *)p; break;
    case 7: s.i = *(const uint16_t *)p; break;
    case 8: s.i = *(const uint32_t *)p; break;
    case 9: s.i = *(const int64_t *)p; break;
    case 10: s.i = (int64_t)*(const uint64_t *)p; break;
    case 12: s.is_bool = 1, s.i = *(const uint8_t *)p != 0; break;
    }
    vn_scalar *made = malloc(sizeof(s));
    *made = s;
    return vn_obj_put(made);
}

/* ---- aclIntArray ---------------------------------------------------------------------------------------------- */
VN_EXPORT void *aclCreateIntArray(const int64_t *value, uint64_t size)
{
    const char *api = "aclCreateIntArray";
    vn_enter(api);
    if (size && !value) {
        vn_fail(161001, api, "value is NULL but its length is %llu", (unsigned long long)size);
        return NULL;
    }
    if (size > (1u << 24) || !vn_readable(value, size * 8)) {
        vn_fail(161002, api, "value does not hold %llu int64 values", (unsigned long long)size);
        return NULL;
    }
    vn_int_array *a = calloc(1, sizeof(*a));
    a->h.type = OBJ_INT_ARRAY, a->n = size, a->values = ints_copy(value, size);
    return vn_obj_put(a);
}
