/* vnpu: the aclnn library's own calls and its status codes; implemented by libnnopbase.so. */
#ifndef VNPU_ACLNN_ACLNN_BASE_H_
#define VNPU_ACLNN_ACLNN_BASE_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* vnpu: codes ACLNN_* */

ACL_FUNC_VISIBILITY aclnnStatus aclnnInit(const char *configPath);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFinalize(void);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_ACLNN_ACLNN_BASE_H_ */
