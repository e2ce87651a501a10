/* The aclnn host objects and the operators' two phases (hostobj.c), driven by the generated operator table. */
#ifndef VNPU_NATIVE_HOSTOBJ_H
#define VNPU_NATIVE_HOSTOBJ_H

#include "core.h"

typedef enum { VN_TENSOR, VN_OUT, VN_INPLACE, VN_SCALAR, VN_INT_ARRAY, VN_INT, VN_BOOL, VN_DTYPE } vn_kind;

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
    const void *handle; /* tensors, scalars, int arrays */
    int64_t i;          /* int, bool and dtype attributes */
} vn_opval;

#pragma GCC visibility push(default)
int vn_phase1(const vn_op *op, const vn_opval *values, uint64_t *workspace_size, void **executor);
int vn_phase2(const vn_op *op, void *workspace, uint64_t workspace_size, void *executor, void *stream);
int vn_itemsize(int dtype); /* generated: 0 for a dtype vnpu's tensors do not hold */
#pragma GCC visibility pop

#endif
