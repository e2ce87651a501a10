/* vnpu: the runtime's error codes (1070xx caller errors, 2070xx resources, 5070xx device/internal faults). */
#ifndef __INC_EXTERNEL_RT_ERROR_CODES_H__
#define __INC_EXTERNEL_RT_ERROR_CODES_H__

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* vnpu: codes ACL_RT_SUCCESS ACL_ERROR_RT_* ACL_ERROR_STREAM_* ACL_ERROR_SNAPSHOT_* ACL_ERROR_HOST_MEMORY_* */

#ifdef __cplusplus
}
#endif

#endif /* __INC_EXTERNEL_RT_ERROR_CODES_H__ */
