/* vnpu: the graph engine's error codes, as the runtime package installs them. */
#ifndef INC_EXTERNAL_GE_GE_ERROR_CODES_H_
#define INC_EXTERNAL_GE_GE_ERROR_CODES_H_

/* the GE export marker; nothing here is exported, so it stays empty */
#ifndef GE_FUNC_VISIBILITY
#define GE_FUNC_VISIBILITY
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* vnpu: codes ACL_ERROR_GE_* */

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_GE_GE_ERROR_CODES_H_ */
