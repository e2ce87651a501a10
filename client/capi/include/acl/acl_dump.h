/* vnpu: the dump API (adump), shaped like CANN's acl/acl_dump.h: a callback receiving dump data in chunks,
 * kernel-argument dumps, dump paths, and the exception-info save. aclmdlInitDump, aclmdlSetDump and
 * aclmdlFinalizeDump are declared in acl_rt.h, as in CANN. */
#ifndef INC_EXTERNAL_ACL_DUMP_H_
#define INC_EXTERNAL_ACL_DUMP_H_

#include <stdint.h>
#include "acl_base.h"

#if defined(VNPU_CDEF) || defined(_MSC_VER)
#define ACL_DUMP_API
#define ACL_DUMP_WEAK
#else
#define ACL_DUMP_API __attribute__((visibility("default")))
#define ACL_DUMP_WEAK __attribute__((weak))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* vnpu: defines ACL_DUMP_* ACL_OP_DUMP_* */

/* vnpu: enums acldump* */

/* one piece of a dump file, as the callback of acldumpRegCallback receives it */
typedef struct acldumpChunk {
    char fileName[ACL_DUMP_MAX_FILE_PATH_LENGTH]; /* the file the data belongs to (absolute path) */
    uint32_t bufLen; /* bytes in dataBuf */
    uint32_t isLastChunk; /* 1 for the file's last chunk */
    int64_t offset; /* where in the file dataBuf goes; -1 appends */
    int32_t flag; /* reserved */
    uint8_t dataBuf[0];
} acldumpChunk;

/* the callback's type, named for vnpu's prototype table (CANN spells it out in the parameter) */
typedef int32_t (*vnpuDumpCallback)(const acldumpChunk *chunk, int32_t len);
ACL_DUMP_API aclError acldumpRegCallback(vnpuDumpCallback const messageCallback, int32_t flag);
ACL_DUMP_API void acldumpUnregCallback(void);

ACL_FUNC_VISIBILITY aclError aclopStartDumpArgs(uint32_t dumpType, const char *path);
ACL_FUNC_VISIBILITY aclError aclopStopDumpArgs(uint32_t dumpType);
ACL_FUNC_VISIBILITY const char *acldumpGetPath(acldumpType dumpType);

/* a tensor of acldumpSaveExceptionInfo */
typedef struct acldumpTensorInfo {
    acldumpTensorType type;
    size_t tensorSize; /* bytes */
    int32_t format;
    int32_t dataType;
    int64_t *tensorAddr;
    acldumpTensorAddressType addrType;
    acldumpTensorPlacement placement;
    uint32_t argsOffset; /* where the tensor sits in the operator's arguments */
    uint32_t shapeNum; /* at most ACL_DUMP_MAX_SHAPE_NUM */
    uint32_t originShapeNum;
    uint64_t shape[ACL_DUMP_MAX_SHAPE_NUM];
    uint64_t originShape[ACL_DUMP_MAX_SHAPE_NUM];
} acldumpTensorInfo;

ACL_DUMP_WEAK ACL_FUNC_VISIBILITY aclError acldumpSaveExceptionInfo(const char *fileName, const char *userTag,
    const acldumpTensorInfo *tensors, size_t tensorCount);
ACL_DUMP_WEAK ACL_FUNC_VISIBILITY aclError acldumpGetExceptionInfoPath(char *path, size_t maxLen);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_DUMP_H_ */
