/* libacl_op_compiler.so: the legacy operator compiler's options, as proto.legacyop keeps them (the process's), and
 * the refused compilation and execution of a legacy operator (legacy.c, in libascendcl, which this library NEEDs:
 * dlsym through its handle finds the runtime's functions too, as torch_npu looks them up). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "core.h"
#include "legacy.h"

#define INVALID 100000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *options[64];

VN_EXPORT aclError aclSetCompileopt(aclCompileOpt opt, const char *value)
{
    const char *api = "aclSetCompileopt";
    vn_enter(api);
    if (!value) return vn_fail(INVALID, api, "value is NULL");
    if ((int)opt == vn_opt_auto_tune)
        return vn_fail(200006, api, "ACL_AUTO_TUNE_MODE has been discarded (CANN tunes with its AOE tool)");
    if ((int)opt < 0 || (int)opt >= vn_opt_count) return vn_fail(500000, api, "option %d is not an aclCompileOpt", (int)opt);
    char *kept = strdup((int)opt == vn_opt_jit ? (strcmp(value, "enable") == 0 ? "1" : "0") : value);
    pthread_mutex_lock(&lock);
    free(options[opt]);
    options[opt] = kept;
    pthread_mutex_unlock(&lock);
    return 0;
}

/* ACL_OP_JIT_COMPILE: 256; another option: its value's length with the NUL, 0 when unset or empty */
VN_EXPORT size_t aclGetCompileoptSize(aclCompileOpt opt)
{
    vn_enter("aclGetCompileoptSize");
    if ((int)opt == vn_opt_jit) return 256;
    if ((int)opt < 0 || (int)opt >= vn_opt_count) return 0;
    pthread_mutex_lock(&lock);
    size_t n = options[opt] && options[opt][0] ? strlen(options[opt]) + 1 : 0;
    pthread_mutex_unlock(&lock);
    return n;
}

/* only ACL_OP_JIT_COMPILE (the SoC's default, whatever was set) and a set ACL_OP_DEBUG_OPTION are readable */
VN_EXPORT aclError aclGetCompileopt(aclCompileOpt opt, char *value, size_t length)
{
    const char *api = "aclGetCompileopt";
    vn_enter(api);
    if (!value) return vn_fail(INVALID, api, "value is NULL: it must point to length bytes");
    char text[4096] = "";
    int readable = (int)opt == vn_opt_jit;
    if (readable) snprintf(text, sizeof(text), "%s", vn_jit_default);
    pthread_mutex_lock(&lock);
    if ((int)opt == vn_opt_debug_option && options[opt]) readable = 1, snprintf(text, sizeof(text), "%s", options[opt]);
    pthread_mutex_unlock(&lock);
    if (!readable)
        return vn_fail(200006, api, "option %d cannot be read back (only ACL_OP_JIT_COMPILE and a set ACL_OP_DEBUG_OPTION)",
                       (int)opt);
    if (length < strlen(text) + 1) return vn_fail(500001, api, "length %zu cannot hold '%s' and its NUL", length, text);
    memcpy(value, text, strlen(text) + 1);
    return 0;
}

static int compile_flag;
VN_EXPORT aclError aclopSetCompileFlag(aclOpCompileFlag flag)
{
    vn_enter("aclopSetCompileFlag");
    __atomic_store_n(&compile_flag, (int)flag, __ATOMIC_RELAXED);
    return 0;
}

VN_EXPORT aclError aclopCompile(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[], int numOutputs,
                                const aclTensorDesc *const outputDesc[], const aclopAttr *attr,
                                aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath)
{
    (void)inputDesc, (void)attr, (void)engineType, (void)opPath;
    return vn_refuse_execution("aclopCompile", opType, numInputs, numOutputs, outputDesc, 1, compileFlag);
}

VN_EXPORT aclError aclopCompileAndExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                          const aclDataBuffer *const inputs[], int numOutputs,
                                          const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                          const aclopAttr *attr, aclopEngineType engineType,
                                          aclopCompileType compileFlag, const char *opPath, aclrtStream stream)
{
    (void)inputDesc, (void)inputs, (void)outputs, (void)attr, (void)engineType, (void)opPath, (void)stream;
    return vn_refuse_execution("aclopCompileAndExecute", opType, numInputs, numOutputs, outputDesc, 1, compileFlag);
}

VN_EXPORT aclError aclopCompileAndExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                            aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                                            aclDataBuffer *outputs[], aclopAttr *attr, aclopEngineType engineType,
                                            aclopCompileType compileFlag, const char *opPath, aclrtStream stream)
{
    (void)inputDesc, (void)inputs, (void)outputs, (void)attr, (void)engineType, (void)opPath, (void)stream;
    return vn_refuse_execution("aclopCompileAndExecuteV2", opType, numInputs, numOutputs,
                               (const aclTensorDesc *const *)outputDesc, 1, compileFlag);
}

VN_EXPORT aclError aclGenGraphAndDumpForOp(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                           const aclDataBuffer *const inputs[], int numOutputs,
                                           const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                           const aclopAttr *attr, aclopEngineType engineType, const char *graphDumpPath,
                                           const aclGraphDumpOption *graphDumpOpt)
{
    (void)inputDesc, (void)inputs, (void)outputs, (void)attr, (void)engineType, (void)graphDumpPath, (void)graphDumpOpt;
    return vn_refuse_execution("aclGenGraphAndDumpForOp", opType, numInputs, numOutputs, outputDesc, 0, 0);
}

/* graph dump options: nothing to hold (vnpu dumps no graphs), but a handle the program gave back must be one it got */
#define DUMP_OPTS 256
static void *dump_opts[DUMP_OPTS];

VN_EXPORT aclGraphDumpOption *aclCreateGraphDumpOpt(void)
{
    vn_enter("aclCreateGraphDumpOpt");
    void *made = calloc(1, 16);
    pthread_mutex_lock(&lock);
    int kept = 0;
    for (int i = 0; i < DUMP_OPTS && !kept; i++)
        if (!dump_opts[i]) dump_opts[i] = made, kept = 1;
    pthread_mutex_unlock(&lock);
    if (!kept) {
        free(made);
        vn_fail(INVALID, "aclCreateGraphDumpOpt", "more than %d graph dump options at once", DUMP_OPTS);
        return NULL;
    }
    return (aclGraphDumpOption *)made;
}

VN_EXPORT aclError aclDestroyGraphDumpOpt(const aclGraphDumpOption *graphDumpOpt)
{
    const char *api = "aclDestroyGraphDumpOpt";
    vn_enter(api);
    if (!graphDumpOpt) return vn_fail(INVALID, api, "graphDumpOpt is NULL");
    int found = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < DUMP_OPTS && !found; i++)
        if (dump_opts[i] == graphDumpOpt) dump_opts[i] = NULL, found = 1;
    pthread_mutex_unlock(&lock);
    if (!found) return vn_fail(INVALID, api, "graphDumpOpt (%p) is not one aclCreateGraphDumpOpt gave", (const void *)graphDumpOpt);
    free((void *)graphDumpOpt);
    return 0;
}
