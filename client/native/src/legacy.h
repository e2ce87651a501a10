/* The legacy operator path (legacy.c, opcompiler/opcompiler.c, versions.c) and what is generated for it
 * (legacygen.py). */
#ifndef VNPU_NATIVE_LEGACY_H
#define VNPU_NATIVE_LEGACY_H

#include <stddef.h>

#pragma GCC visibility push(default)
extern const char *const vn_aclnn_only; /* the refusal's text, %s the operator */
extern const char *const vn_jit_default;
extern const int vn_opt_auto_tune, vn_opt_jit, vn_opt_debug_option, vn_opt_count;
extern const int vn_pkg_driver, vn_pkg_driver_code;
extern const char *const vn_pkg_driver_message;
const char *vn_cann_package(int name);
/* the runtime's checks of a legacy execution, then ACL_ERROR_OP_NOT_FOUND naming the operator */
int vn_refuse_execution(const char *api, const char *opType, int numInputs, int numOutputs,
                        const aclTensorDesc *const *outputs, int has_flag, int flag);
#pragma GCC visibility pop

#endif
