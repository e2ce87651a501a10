/* vnpu: the legacy single-operator API (aclop). CANN's runtime package ships this header empty and the operator
 * package fills it. vnpu runs aclnn operators only: the attributes are real host objects (torch_npu builds them
 * before it falls back to this path), and executing an operator this way always fails, naming the operator. */
#ifndef INC_EXTERNAL_ACL_ACL_OP_H_
#define INC_EXTERNAL_ACL_ACL_OP_H_

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aclopHandle aclopHandle;
typedef struct aclopAttr aclopAttr;

static const int ACL_COMPILE_FLAG_BIN_SELECTOR = 1;

/* vnpu: enums aclopEngineType */

/* --- operator attributes: a host object of named values */
ACL_FUNC_VISIBILITY aclopAttr* aclopCreateAttr(void);
ACL_FUNC_VISIBILITY void aclopDestroyAttr(const aclopAttr* attr);
ACL_FUNC_VISIBILITY aclError aclopSetAttrBool(aclopAttr* attr, const char* attrName, uint8_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrInt(aclopAttr* attr, const char* attrName, int64_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrFloat(aclopAttr* attr, const char* attrName, float attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrString(aclopAttr* attr, const char* attrName, const char* attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrDataType(aclopAttr* attr, const char* attrName, aclDataType attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListDataType(aclopAttr* attr, const char* attrName, int numValues,
                                                      const aclDataType* values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListBool(aclopAttr* attr, const char* attrName, int numValues,
                                                  const uint8_t* values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListInt(aclopAttr* attr, const char* attrName, int numValues,
                                                 const int64_t* values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListFloat(aclopAttr* attr, const char* attrName, int numValues,
                                                   const float* values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListString(aclopAttr* attr, const char* attrName, int numValues,
                                                    const char** values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListListInt(aclopAttr* attr, const char* attrName, int numLists,
                                                     const int* numValues, const int64_t* const* values);

/* --- executing a legacy operator: refused by vnpu (it runs aclnn operators only) */
ACL_DEPRECATED_MESSAGE("aclopExecute is deprecated, use aclopExecuteV2 instead")
ACL_FUNC_VISIBILITY aclError aclopExecute(const char* opType, int numInputs, const aclTensorDesc* const* inputDesc,
                                          const aclDataBuffer* const* inputs, int numOutputs,
                                          const aclTensorDesc* const* outputDesc, aclDataBuffer* const* outputs,
                                          const aclopAttr* attr, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclopExecuteV2(const char* opType, int numInputs, aclTensorDesc** inputDesc,
                                            aclDataBuffer** inputs, int numOutputs, aclTensorDesc** outputDesc,
                                            aclDataBuffer** outputs, aclopAttr* attr, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_OP_H_ */
