/* vnpu's own C calls (not ACL): what a C program needs of vnpu beyond the ACL API. */
#ifndef VNPU_VNPU_H_
#define VNPU_VNPU_H_

#include <stddef.h>
#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The id of this process's vnpu context (NUL-terminated into buf): a second process that starts with
 * VNPU_CONTEXT=<id> in its environment joins the context and shares its handles. */
ACL_FUNC_VISIBILITY aclError vnpuGetContextId(char *buf, size_t len);

/* A `kernelName<<<numBlocks, nullptr, stream>>>(args...)` launch, as ascendc_library's stubs make it: args is
 * the argument block (each argument at an 8-byte boundary), run by the kernel's numpy implementation. */
ACL_FUNC_VISIBILITY aclError vnpuLaunchKernel(const char *kernelName, uint32_t numBlocks, void *stream,
                                              const void *args, size_t argsSize);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_VNPU_H_ */
