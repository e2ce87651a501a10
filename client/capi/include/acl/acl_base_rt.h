/* vnpu: ACL base types shared by every ACL header: handles, data buffers, data types, formats and the ACL
 * error codes. Laid out like CANN's acl/acl_base_rt.h so that programs built for CANN compile unchanged. */
#ifndef INC_EXTERNAL_ACL_ACL_BASE_RT_H_
#define INC_EXTERNAL_ACL_ACL_BASE_RT_H_

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Export and deprecation markers. vnpu's prototype table parses these headers with VNPU_CDEF defined: the
 * markers then vanish, since the parser knows no compiler attributes. */
#if defined(VNPU_CDEF)
#define ACL_FUNC_VISIBILITY
#define ACL_DEPRECATED
#define ACL_DEPRECATED_MESSAGE(message)
#else
#if defined(_MSC_VER)
#ifdef FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY _declspec(dllexport)
#else
#define ACL_FUNC_VISIBILITY
#endif
#else
#ifdef FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#else
#define ACL_FUNC_VISIBILITY
#endif
#endif
#if defined(__GNUC__) && (__GNUC__ >= 6)
#define ACL_DEPRECATED __attribute__((deprecated))
#define ACL_DEPRECATED_MESSAGE(message) __attribute__((deprecated(message)))
#elif defined(_MSC_VER)
#define ACL_DEPRECATED __declspec(deprecated)
#define ACL_DEPRECATED_MESSAGE(message) __declspec(deprecated(message))
#else
#define ACL_DEPRECATED
#define ACL_DEPRECATED_MESSAGE(message)
#endif
#endif

/* opaque handles: each names one runtime object */
typedef void* aclrtStream;
typedef void* aclmdlRITask;
typedef void* aclrtEvent;
typedef void* aclrtContext;
typedef void* aclrtNotify;
typedef void* aclrtCntNotify;
typedef void* aclrtLabel;
typedef void* aclrtLabelList;
typedef void* aclrtMbuf;
typedef int aclError;
typedef uint16_t aclFloat16;
typedef struct aclDataBuffer aclDataBuffer;
typedef void* aclrtAllocatorDesc;
typedef void* aclrtAllocator;
typedef void* aclrtAllocatorBlock;
typedef void* aclrtAllocatorAddr;
typedef void* aclrtTaskGrp;

/* the ACL layer's own codes (1000xx caller errors, 2000xx resources, 5000xx internal faults) */
/* vnpu: codes ACL_SUCCESS ACL_ERROR_* ACL_ERROR_RT_FAILURE ACL_ERROR_GE_FAILURE */

/* vnpu: enums aclDataType aclFormat aclLogLevel aclMemType aclSysParamOpt aclCannAttr aclDeviceInfo */

/* --- fp16 conversion */
ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value);
ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value);

/* --- data buffers */
ACL_FUNC_VISIBILITY aclDataBuffer* aclCreateDataBuffer(void* data, size_t size);
ACL_FUNC_VISIBILITY aclError aclDestroyDataBuffer(const aclDataBuffer* dataBuffer);
ACL_FUNC_VISIBILITY aclError aclUpdateDataBuffer(aclDataBuffer* dataBuffer, void* data, size_t size);
ACL_FUNC_VISIBILITY void* aclGetDataBufferAddr(const aclDataBuffer* dataBuffer);
ACL_DEPRECATED_MESSAGE("aclGetDataBufferSize is deprecated: use aclGetDataBufferSizeV2")
ACL_FUNC_VISIBILITY uint32_t aclGetDataBufferSize(const aclDataBuffer* dataBuffer);
ACL_FUNC_VISIBILITY size_t aclGetDataBufferSizeV2(const aclDataBuffer* dataBuffer);

/* --- data types, application logs, the SoC name, CANN attributes and device capabilities */
ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);
ACL_FUNC_VISIBILITY void aclAppLog(
    aclLogLevel logLevel,
    const char* func,
    const char* file,
    uint32_t line,
    const char* fmt,
    ...);
ACL_FUNC_VISIBILITY const char* aclrtGetSocName();
ACL_FUNC_VISIBILITY aclError aclGetCannAttributeList(const aclCannAttr** cannAttrList, size_t* num);
ACL_FUNC_VISIBILITY aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t* value);
ACL_FUNC_VISIBILITY aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t* value);

/* aclAppLog with the caller's function, file and line filled in */
#define ACL_APP_LOG(level, fmt, ...) aclAppLog(level, __FUNCTION__, __FILE__, __LINE__, fmt, ##__VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_BASE_RT_H_ */
