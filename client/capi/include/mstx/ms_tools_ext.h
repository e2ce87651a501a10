/* vnpu: MindStudio Tools Extension (mstx) markers: a mark is an instant, a range a start and an end, both on the
 * calling thread, optionally tied to a stream and grouped in a named domain. In CANN these calls reach the
 * profiler through an injection table; in vnpu libascendcl exports them, and the daemon's trace records them. */
#ifndef VNPU_MSTX_MS_TOOLS_EXT_H_
#define VNPU_MSTX_MS_TOOLS_EXT_H_

#include <stdint.h>
#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t mstxRangeId;
struct mstxDomainRegistration_st;
typedef struct mstxDomainRegistration_st mstxDomainRegistration_t;
typedef mstxDomainRegistration_t *mstxDomainHandle_t;

ACL_FUNC_VISIBILITY void mstxMarkA(const char *message, aclrtStream stream);
ACL_FUNC_VISIBILITY mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream);
ACL_FUNC_VISIBILITY void mstxRangeEnd(mstxRangeId id);

ACL_FUNC_VISIBILITY mstxDomainHandle_t mstxDomainCreateA(const char *name);
ACL_FUNC_VISIBILITY void mstxDomainDestroy(mstxDomainHandle_t domain);
ACL_FUNC_VISIBILITY void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message, aclrtStream stream);
ACL_FUNC_VISIBILITY mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const char *message,
    aclrtStream stream);
ACL_FUNC_VISIBILITY void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_MSTX_MS_TOOLS_EXT_H_ */
