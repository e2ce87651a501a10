/* The aclnn host objects that hold several values (aclTensorList, aclScalarList, aclBoolArray, aclFloatArray)
 * and libnnopbase's readers (aclGetViewShape, ..., aclGetIntArraySize), aclnnInit / aclnnFinalize; the same
 * codes and texts as the Python client's (client/capi/hostlists.py and nnopbase.py before them, proto.aclnn).
 *
 * A list is made of handles the program created (a tensor list may hold NULL entries, as CANN copies the
 * pointers as given) and owns them: aclDestroyTensorList destroys its tensors too, so their handles leave the
 * table with it and a later use names the list that took them. A bool or float array is a copy of the C array. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostobj.h"

static void *make_list(const void *const *value, uint64_t size, int type, int member, const char *api)
{
    vn_enter(api);
    if (size && !value) {
        vn_fail(161001, api, "value is NULL but size is %llu", (unsigned long long)size);
        return NULL;
    }
    if (size > (1u << 24) || (size && !vn_readable(value, size * sizeof(void *)))) {
        vn_fail(161002, api, "value does not hold %llu pointers", (unsigned long long)size);
        return NULL;
    }
    vn_list *l = calloc(1, sizeof(*l));
    l->h.type = type, l->n = size;
    l->items = calloc(size ? size : 1, sizeof(void *));
    for (uint64_t i = 0; i < size; i++) {
        char arg[32];
        snprintf(arg, sizeof(arg), "value[%llu]", (unsigned long long)i);
        if (!value[i] && member == OBJ_SCALAR) {
            vn_fail(161002, api, "value[%llu] must be an aclScalar, got NoneType", (unsigned long long)i);
            free(l->items), free(l);
            return NULL;
        }
        if (vn_obj_get(value[i], member, arg, api, 161002, &l->items[i])) {
            free(l->items), free(l);
            return NULL;
        }
    }
    return vn_obj_put(l);
}

VN_EXPORT void *aclCreateTensorList(const void *const *value, uint64_t size)
{
    return make_list(value, size, OBJ_TENSOR_LIST, OBJ_TENSOR, "aclCreateTensorList");
}

VN_EXPORT void *aclCreateScalarList(const void *const *value, uint64_t size)
{
    return make_list(value, size, OBJ_SCALAR_LIST, OBJ_SCALAR, "aclCreateScalarList");
}

static void *make_values(const void *value, uint64_t size, int type, const char *api)
{
    vn_enter(api);
    size_t item = type == OBJ_BOOL_ARRAY ? sizeof(bool) : sizeof(float);
    if (size && !value) {
        vn_fail(161001, api, "value is NULL but size is %llu", (unsigned long long)size);
        return NULL;
    }
    if (size > (1u << 28) || (size && !vn_readable(value, size * item))) {
        vn_fail(161002, api, "value does not hold %llu values", (unsigned long long)size);
        return NULL;
    }
    vn_values *a = calloc(1, sizeof(*a));
    a->h.type = type, a->n = size;
    a->values = calloc(size ? size : 1, sizeof(double));
    for (uint64_t i = 0; i < size; i++)
        a->values[i] = type == OBJ_BOOL_ARRAY ? (double)((const bool *)value)[i] : (double)((const float *)value)[i];
    return vn_obj_put(a);
}

VN_EXPORT void *aclCreateBoolArray(const bool *value, uint64_t size)
{
    return make_values(value, size, OBJ_BOOL_ARRAY, "aclCreateBoolArray");
}

VN_EXPORT void *aclCreateFloatArray(const float *value, uint64_t size)
{
    return make_values(value, size, OBJ_FLOAT_ARRAY, "aclCreateFloatArray");
}

static int destroy_several(const void *handle, int type, const char *api, const char *what)
{
    vn_enter(api);
    void *obj;
    if (vn_obj_get(handle, type, "array", api, 161002, &obj)) return 161002;
    if (!obj) return vn_fail(161001, api, "array is a null pointer");
    char why[96];
    snprintf(why, sizeof(why), "was destroyed by %s", api);
    vn_obj_drop(obj, why);
    if (type == OBJ_TENSOR_LIST || type == OBJ_SCALAR_LIST) {
        vn_list *l = obj;
        snprintf(why, sizeof(why), "was destroyed with its %s by %s", what, api);
        int member = type == OBJ_TENSOR_LIST ? OBJ_TENSOR : OBJ_SCALAR;
        for (uint64_t i = 0; i < l->n; i++)
            if (vn_obj_live(l->items[i], member)) { /* not when another list, or the program, destroyed it first */
                vn_obj_drop(l->items[i], why);
                vn_obj_free(l->items[i], member);
            }
    }
    vn_obj_free(obj, type);
    return 0;
}

VN_EXPORT int aclDestroyTensorList(const void *array)
{
    return destroy_several(array, OBJ_TENSOR_LIST, "aclDestroyTensorList", "aclTensorList");
}
VN_EXPORT int aclDestroyScalarList(const void *array)
{
    return destroy_several(array, OBJ_SCALAR_LIST, "aclDestroyScalarList", "aclScalarList");
}
VN_EXPORT int aclDestroyBoolArray(const void *array)
{
    return destroy_several(array, OBJ_BOOL_ARRAY, "aclDestroyBoolArray", "");
}
VN_EXPORT int aclDestroyFloatArray(const void *array)
{
    return destroy_several(array, OBJ_FLOAT_ARRAY, "aclDestroyFloatArray", "");
}

static int size_of(const void *handle, int type, const char *arg, uint64_t *size, const char *api)
{
    vn_enter(api);
    void *obj;
    if (vn_obj_get(handle, type, arg, api, 161002, &obj)) return 161002;
    if (!obj) return vn_fail(161001, api, "%s is a null pointer", arg);
    if (!size) return vn_fail(161001, api, "size is NULL: it must point to where the result goes");
    *size = type == OBJ_INT_ARRAY ? ((vn_int_array *)obj)->n
          : type == OBJ_BOOL_ARRAY || type == OBJ_FLOAT_ARRAY ? ((vn_values *)obj)->n
                                                               : ((vn_list *)obj)->n;
    return 0;
}

VN_EXPORT int aclGetTensorListSize(const void *tensorList, uint64_t *size)
{
    return size_of(tensorList, OBJ_TENSOR_LIST, "tensorList", size, "aclGetTensorListSize");
}
VN_EXPORT int aclGetScalarListSize(const void *scalarList, uint64_t *size)
{
    return size_of(scalarList, OBJ_SCALAR_LIST, "scalarList", size, "aclGetScalarListSize");
}
VN_EXPORT int aclGetBoolArraySize(const void *array, uint64_t *size)
{
    return size_of(array, OBJ_BOOL_ARRAY, "array", size, "aclGetBoolArraySize");
}
VN_EXPORT int aclGetFloatArraySize(const void *array, uint64_t *size)
{
    return size_of(array, OBJ_FLOAT_ARRAY, "array", size, "aclGetFloatArraySize");
}
VN_EXPORT int aclGetIntArraySize(const void *array, uint64_t *size)
{
    const char *api = "aclGetIntArraySize";
    vn_enter(api);
    void *obj;
    if (vn_obj_get(array, OBJ_INT_ARRAY, "array", api, 161002, &obj)) return 161002;
    if (!obj) return vn_fail(161001, api, "array is NULL");
    return size_of(array, OBJ_INT_ARRAY, "array", size, api);
}

/* ---- reading a tensor back ------------------------------------------------------------------------------------ */
static int tensor_of(const void *handle, const char *api, vn_tensor **t)
{
    vn_enter(api);
    void *obj;
    if (vn_obj_get(handle, OBJ_TENSOR, "tensor", api, 161002, &obj)) return 161002;
    if (!obj) return vn_fail(161001, api, "tensor is NULL");
    *t = obj;
    return 0;
}

enum { VIEW, STORAGE, STRIDES };

static int ints_out(const void *tensor, int64_t **array, uint64_t *count, int which, const char *api,
                    const char *values, const char *counted)
{
    vn_tensor *t;
    int code = tensor_of(tensor, api, &t);
    if (code) return code;
    if (!array) return vn_fail(161001, api, "%s is NULL: it must point to where the result goes", values);
    if (!count) return vn_fail(161001, api, "%s is NULL: it must point to where the result goes", counted);
    const int64_t *from = which == VIEW ? t->dims : which == STORAGE ? t->storage : t->strides;
    uint64_t n = which == STORAGE ? t->nstorage : t->ndim;
    int64_t *copy = malloc(n ? n * sizeof(int64_t) : 8); /* the caller's, to delete[] */
    if (!copy) return vn_fail(161001, api, "no memory for %llu values", (unsigned long long)n);
    if (n) memcpy(copy, from, n * sizeof(int64_t));
    *array = copy, *count = n;
    return 0;
}

VN_EXPORT int aclGetViewShape(const void *tensor, int64_t **viewDims, uint64_t *viewDimsNum)
{
    return ints_out(tensor, viewDims, viewDimsNum, VIEW, "aclGetViewShape", "viewDims", "viewDimsNum");
}
VN_EXPORT int aclGetStorageShape(const void *tensor, int64_t **storageDims, uint64_t *storageDimsNum)
{
    return ints_out(tensor, storageDims, storageDimsNum, STORAGE, "aclGetStorageShape", "storageDims",
                    "storageDimsNum");
}
VN_EXPORT int aclGetViewStrides(const void *tensor, int64_t **stridesValue, uint64_t *stridesNum)
{
    return ints_out(tensor, stridesValue, stridesNum, STRIDES, "aclGetViewStrides", "stridesValue", "stridesNum");
}

#define VALUE_GETTER(NAME, TYPE, FIELD, OUT)                                                                      \
    VN_EXPORT int NAME(const void *tensor, TYPE *OUT)                                                             \
    {                                                                                                             \
        vn_tensor *t;                                                                                             \
        int code = tensor_of(tensor, #NAME, &t);                                                                  \
        if (code) return code;                                                                                    \
        if (!OUT) return vn_fail(161001, #NAME, "%s is NULL: it must point to where the result goes", #OUT);      \
        *OUT = (TYPE)t->FIELD;                                                                                    \
        return 0;                                                                                                 \
    }
VALUE_GETTER(aclGetViewOffset, int64_t, offset, offset)
VALUE_GETTER(aclGetFormat, int, format, format)
VALUE_GETTER(aclGetDataType, int, dtype, dataType)

VN_EXPORT int aclnnInit(const char *configPath)
{
    (void)configPath; /* the operator library's configuration (its debug options): nothing vnpu reads */
    vn_enter("aclnnInit");
    return vn_nn_init(); /* the device's aclInit when the program has not made it, at the first call needing it */
}
VN_EXPORT int aclnnFinalize(void)
{
    vn_enter("aclnnFinalize");
    return vn_nn_finalize();
}
