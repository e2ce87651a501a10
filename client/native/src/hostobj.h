/* The aclnn host objects (hostobj.c, hostlist.c) and the operators' two phases (phases.c), driven by the generated
 * operator table. */
#ifndef VNPU_NATIVE_HOSTOBJ_H
#define VNPU_NATIVE_HOSTOBJ_H

#include "core.h"

/* the kinds of proto.aclnn.ArgKind; the tensors first (phase 1 tests `kind <= VN_INPLACE`) */
typedef enum {
    VN_TENSOR,
    VN_OUT,
    VN_INPLACE,
    VN_SCALAR,
    VN_INT_ARRAY,
    VN_INT,
    VN_BOOL,
    VN_DTYPE,
    VN_UINT,
    VN_DOUBLE,
    VN_STRING,
    VN_TENSOR_LIST,
    VN_OUT_LIST,
    VN_INPLACE_LIST,
    VN_SCALAR_LIST,
    VN_BOOL_ARRAY,
    VN_FLOAT_ARRAY
} vn_kind;
#define VN_IS_LIST(k) ((k) >= VN_TENSOR_LIST && (k) <= VN_INPLACE_LIST)

typedef struct {
    const char *name;
    vn_kind kind;
    int optional;
} vn_op_arg;

typedef struct {
    const char *name;    /* "Add" */
    const char *ws_name; /* "aclnnAddGetWorkspaceSize" */
    const char *c_name;  /* "aclnnAdd" */
    int nargs;
    const vn_op_arg *args;
} vn_op;

typedef union {
    const void *handle; /* tensors, scalars, lists and arrays */
    int64_t i;          /* int, bool and dtype attributes */
    double d;           /* double and float attributes */
    const char *s;      /* string attributes */
} vn_opval;

/* the host objects, shared by hostobj.c and hostlist.c (hidden: not exported) */
enum { OBJ_TENSOR = 1, OBJ_SCALAR, OBJ_INT_ARRAY, OBJ_EXECUTOR, OBJ_DATA_BUFFER, OBJ_TENSOR_LIST, OBJ_SCALAR_LIST,
       OBJ_BOOL_ARRAY, OBJ_FLOAT_ARRAY };

typedef struct {
    int type;
} obj_head;

typedef struct {
    obj_head h;
    int dtype, format;
    int64_t offset;
    uint64_t ndim, nstorage;
    void *data;
    int64_t *dims, *strides, *storage;
} vn_tensor;

typedef struct {
    obj_head h;
    int dtype;
    int is_float, is_bool;
    double f;
    int64_t i;
} vn_scalar;

typedef struct {
    obj_head h;
    uint64_t n;
    int64_t *values;
} vn_int_array;

typedef struct { /* aclTensorList, aclScalarList: the handles it owns (a tensor list may hold NULL) */
    obj_head h;
    uint64_t n;
    void **items;
} vn_list;

typedef struct { /* aclBoolArray (0/1), aclFloatArray: a copy of the program's values */
    obj_head h;
    uint64_t n;
    double *values;
} vn_values;

/* an aclOpExecutor: made by phase 1 (phases.c), destroyed by aclDestroyAclOpExecutor (hostobj.c) */
typedef struct {
    obj_head h;
    const vn_op *op;
    mp_buf desc; /* {"op", "args", "workspace_size"} msgpack: what phase 2 sends */
    int repeatable;
} vn_executor;

/* the table of live handles (handles.c, in libascendcl: exported to the other libraries) */
#pragma GCC visibility push(default)
void *vn_obj_put(void *obj);
int vn_obj_get(const void *handle, int type, const char *arg, const char *api, int code, void **out);
void vn_obj_drop(void *obj, const char *why);
int vn_obj_live(const void *handle, int type); /* quietly: whether `handle` is a live object of `type` */
#pragma GCC visibility pop
void vn_obj_free(void *obj, int type); /* hostobj.c */

#pragma GCC visibility push(default)
int vn_phase1(const vn_op *op, const vn_opval *values, uint64_t *workspace_size, void **executor);
/* aclnn<Op>GetMaxWorkspaceSize (named `api`): phase 1 with its int arrays' values unread, their sizes kept */
int vn_phase1_max(const vn_op *op, const char *api, const vn_opval *values, uint64_t *workspace_size, void **executor);
int vn_phase2(const vn_op *op, void *workspace, uint64_t workspace_size, void *executor, void *stream);
int vn_itemsize(int dtype); /* generated: 0 for a dtype vnpu's tensors do not hold */
#pragma GCC visibility pop

#endif
