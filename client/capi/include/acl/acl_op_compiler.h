/* vnpu: the legacy operator compiler (libacl_op_compiler.so). Its options are kept per process as the runtime
 * keeps them; compiling and executing an operator always fails: vnpu runs aclnn operators only. */
#ifndef INC_EXTERNAL_ACL_ACL_OP_COMPILER_H_
#define INC_EXTERNAL_ACL_ACL_OP_COMPILER_H_

#include "acl/acl_base.h"
#include "acl/acl_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* vnpu: enums aclopCompileType aclCompileOpt aclOpCompileFlag */

typedef struct aclGraphDumpOption aclGraphDumpOption;

ACL_FUNC_VISIBILITY aclError aclopCompile(const char* opType, int numInputs, const aclTensorDesc* const* inputDesc,
                                          int numOutputs, const aclTensorDesc* const* outputDesc,
                                          const aclopAttr* attr, aclopEngineType engineType,
                                          aclopCompileType compileFlag, const char* opPath);
ACL_FUNC_VISIBILITY aclError aclopCompileAndExecute(
    const char* opType, int numInputs, const aclTensorDesc* const* inputDesc, const aclDataBuffer* const* inputs,
    int numOutputs, const aclTensorDesc* const* outputDesc, aclDataBuffer* const* outputs, const aclopAttr* attr,
    aclopEngineType engineType, aclopCompileType compileFlag, const char* opPath, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclopCompileAndExecuteV2(const char* opType, int numInputs, aclTensorDesc** inputDesc,
                                                      aclDataBuffer** inputs, int numOutputs,
                                                      aclTensorDesc** outputDesc, aclDataBuffer** outputs,
                                                      aclopAttr* attr, aclopEngineType engineType,
                                                      aclopCompileType compileFlag, const char* opPath,
                                                      aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclSetCompileopt(aclCompileOpt opt, const char* value);
ACL_FUNC_VISIBILITY size_t aclGetCompileoptSize(aclCompileOpt opt);
ACL_FUNC_VISIBILITY aclError aclGetCompileopt(aclCompileOpt opt, char* value, size_t length);
ACL_FUNC_VISIBILITY aclError aclopSetCompileFlag(aclOpCompileFlag flag);
ACL_FUNC_VISIBILITY aclError aclGenGraphAndDumpForOp(
    const char* opType, int numInputs, const aclTensorDesc* const* inputDesc, const aclDataBuffer* const* inputs,
    int numOutputs, const aclTensorDesc* const* outputDesc, aclDataBuffer* const* outputs, const aclopAttr* attr,
    aclopEngineType engineType, const char* graphDumpPath, const aclGraphDumpOption* graphDumpOpt);
ACL_FUNC_VISIBILITY aclGraphDumpOption* aclCreateGraphDumpOpt(void);
ACL_FUNC_VISIBILITY aclError aclDestroyGraphDumpOpt(const aclGraphDumpOption* graphDumpOpt);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_OP_COMPILER_H_ */
