/* vnpu: the part of CANN's profiling/aprof_pub.h that programs call: which device a model's profiling data is
 * reported for. */
#ifndef VNPU_PROFILING_APROF_PUB_H_
#define VNPU_PROFILING_APROF_PUB_H_

#include <stddef.h>
#include <stdint.h>

#ifndef MSVP_PROF_API
#if defined(VNPU_CDEF)
#define MSVP_PROF_API
#else
#define MSVP_PROF_API __attribute__((visibility("default")))
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

MSVP_PROF_API int32_t MsprofSetDeviceIdByGeModelIdx(const uint32_t geModelIdx, const uint32_t deviceId);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_PROFILING_APROF_PUB_H_ */
