/* The functions of libascendcl.so that are not one call of the table: init and finalize, the thread's error
 * message and last error, what the runtime answers on the host (the SoC, versions), vnpu's context id. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "session.h"

#ifndef VNPU_SOC_NAME
#define VNPU_SOC_NAME "Ascend910B3"
#endif

VN_EXPORT int aclInit(const char *configPath)
{
    vn_enter("aclInit");
    return vn_init(configPath);
}

VN_EXPORT int aclFinalize(void)
{
    vn_enter("aclFinalize");
    int ready = vn_ready("aclFinalize");
    return ready ? ready : vn_finalize();
}

VN_EXPORT const char *aclGetRecentErrMsg(void) { return vn_take_message(); }

VN_EXPORT const char *aclrtGetSocName(void) { return VNPU_SOC_NAME; }

VN_EXPORT int aclrtGetLastError(int level)
{
    vn_enter("aclrtGetLastError");
    if (level != 0) return vn_fail(100000, "aclrtGetLastError", "level must be ACL_RT_THREAD_LEVEL (0), got %d", level);
    return vn_last_error(1);
}

VN_EXPORT int aclrtPeekAtLastError(int level)
{
    vn_enter("aclrtPeekAtLastError");
    if (level != 0)
        return vn_fail(100000, "aclrtPeekAtLastError", "level must be ACL_RT_THREAD_LEVEL (0), got %d", level);
    return vn_last_error(0);
}

VN_EXPORT int vnpuGetContextId(char *buf, size_t len)
{
    vn_enter("vnpuGetContextId");
    const char *id = vn_context_id();
    size_t need = strlen(id) + 1;
    if (!buf || len < need)
        return vn_fail(100000, "vnpuGetContextId", "buf must hold %zu bytes (the id and its NUL), got %zu", need, len);
    memcpy(buf, id, need);
    return 0;
}

VN_EXPORT int aclsysGetVersionStr(char *pkgName, char *versionStr)
{
    const char *api = "aclsysGetVersionStr";
    vn_enter(api);
    if (!versionStr) return vn_fail(100000, api, "versionStr is NULL: it must hold ACL_PKG_VERSION_MAX_SIZE bytes");
    if (!pkgName) return vn_fail(100000, api, "pkgName is NULL");
    const char *home = getenv("ASCEND_HOME_PATH");
    if (!home || !*home)
        return vn_fail(100003, api, "ASCEND_HOME_PATH is not set to a directory (source the toolkit's "
                                    "bin/setenv.bash: `vnpu toolkit`)");
    char path[4096], line[256];
    snprintf(path, sizeof(path), "%s/share/info/%s/version.info", home, pkgName);
    FILE *f = fopen(path, "r");
    if (!f) return vn_fail(100003, api, "%s does not exist", path);
    int found = 0;
    while (fgets(line, sizeof(line), f)) {
        char *v = strstr(line, "Version=");
        if (!v) continue;
        v += 8;
        v[strcspn(v, "\r\n")] = 0;
        if (strlen(v) >= 128) break;
        strcpy(versionStr, v);
        found = 1;
        break;
    }
    fclose(f);
    return found ? 0 : vn_fail(100003, api, "the version file of %s has no Version= line", pkgName);
}

/* aclAppLog is variadic: the runtime writes to its log, vnpu to stderr. */
VN_EXPORT void aclAppLog(int logLevel, const char *func, const char *file, uint32_t line, const char *fmt, ...)
{
    static const char *const levels[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof(message), fmt ? fmt : "", args);
    va_end(args);
    fprintf(stderr, "[%s] %s:%u %s: %s\n", (unsigned)logLevel < 4 ? levels[logLevel] : "LOG", file ? file : "?", line,
            func ? func : "?", message);
}

VN_EXPORT int aclmdlRIDebugPrint(void *modelRI)
{
    const char *api = "aclmdlRIDebugPrint";
    vn_enter(api);
    vn_req r;
    vn_req_begin(&r, api, 1, 0);
    mp_key(&r.b, "modelRI"), mp_uint(&r.b, (uintptr_t)modelRI);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    const mp_obj *text = vn_out(&reply, "text");
    if (text && text->type == MP_STR) {
        size_t n = text->n;
        while (n && text->v.s[n - 1] == '\n') n--;
        fflush(NULL);
        fprintf(stderr, "%.*s\n", (int)n, text->v.s);
    }
    vn_reply_free(&reply);
    return 0;
}

VN_EXPORT int aclrtBinaryLoadFromFile(const char *binPath, void *options, void **binHandle)
{
    const char *api = "aclrtBinaryLoadFromFile";
    vn_enter(api);
    if (!binPath) return vn_fail(100000, api, "binPath is NULL");
    if (!binHandle) return vn_null_out(api, "binHandle");
    FILE *f = fopen(binPath, "rb");
    if (!f) return vn_fail(107000, api, "cannot read the binary '%s': %m", binPath);
    mp_buf data;
    mp_init(&data);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) mp_raw(&data, chunk, n);
    fclose(f);
    vn_req r;
    vn_req_begin(&r, "aclrtBinaryLoadFromData", 2, 0);
    mp_key(&r.b, "data"), mp_bin(&r.b, data.data, data.len);
    mp_key(&r.b, "options"), mp_uint(&r.b, (uintptr_t)options);
    mp_free(&data);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    *binHandle = (void *)(uintptr_t)mp_u64v(vn_out(&reply, "binHandle"));
    vn_reply_free(&reply);
    return 0;
}

/* ---- half-precision conversions, as the runtime does them (proto/host.py says how) ---------------------------- */
VN_EXPORT float aclFloat16ToFloat(uint16_t value)
{
    int sign = value >> 15 & 1, exponent = value >> 10 & 0x1f, mantissa = value & 0x3ff;
    if (!exponent && !mantissa) return sign ? -0.0f : 0.0f;
    double significand = exponent ? (mantissa | 0x400) : mantissa;
    double magnitude = significand * __builtin_ldexp(1.0, (exponent > 1 ? exponent : 1) - 25);
    return (float)(sign ? -magnitude : magnitude);
}

static uint32_t rounds_up(uint64_t bits, int dropped)
{
    uint64_t half = 1ull << (dropped - 1), kept_odd = bits >> dropped & 1, rest = bits & ((half << 1) - 1);
    return rest > half || (rest == half && kept_odd);
}

VN_EXPORT uint16_t aclFloatToFloat16(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, 4);
    uint32_t sign = bits >> 31, exponent = bits >> 23 & 0xff, mantissa = bits & 0x7fffff;
    int32_t half_exponent;
    uint32_t half_mantissa;
    if (exponent > 127 + 15) half_exponent = 0x1e, half_mantissa = 0x3ff;
    else if (exponent <= 127 - 15) {
        half_exponent = 0;
        if (exponent >= 127 - 24) {
            uint64_t shifted = (uint64_t)(mantissa | 0x800000) << (exponent - (127 - 24));
            half_mantissa = (uint32_t)(shifted >> 23) + rounds_up(shifted, 23);
        } else half_mantissa = exponent == 127 - 25 && mantissa ? 1 : 0;
    } else {
        half_exponent = (int32_t)exponent - (127 - 15);
        half_mantissa = (mantissa >> 13) + rounds_up(mantissa, 13);
        if (half_mantissa & 0x400) half_exponent += 1;
    }
    if (half_exponent >= 0x1f) half_exponent = 0x1e, half_mantissa = 0x3ff;
    else if (half_exponent == 0 && half_mantissa == 0x400) half_exponent = 1, half_mantissa = 0;
    return (uint16_t)(sign << 15 | (uint32_t)half_exponent << 10 | (half_mantissa & 0x3ff));
}

VN_EXPORT int aclsysGetVersionNum(char *pkgName, int32_t *versionNum)
{
    const char *api = "aclsysGetVersionNum";
    vn_enter(api);
    if (!versionNum) return vn_null_out(api, "versionNum");
    char version[128];
    int code = aclsysGetVersionStr(pkgName, version);
    if (code) return code;
    unsigned major, minor, patch, number = 0;
    char stage[16] = "";
    int n = sscanf(version, "%u.%u.%u%*[.-]%15[a-zA-Z]%*[.-]%u", &major, &minor, &patch, stage, &number);
    if (n < 3) n = sscanf(version, "%u.%u.%u%15[a-zA-Z]%u", &major, &minor, &patch, stage, &number);
    if (n < 3) return vn_fail(500000, api, "the version '%s' of %s is not X.Y.Z[.alphaN]", version, pkgName);
    int32_t value = (int32_t)(major * 10000000u + minor * 100000u + patch * 1000u);
    if (!strcasecmp(stage, "alpha")) value += -300 + (int32_t)number;
    else if (!strcasecmp(stage, "beta")) value += -200 + (int32_t)number;
    else if (!strcasecmp(stage, "rc")) value += -100 + (int32_t)number;
    *versionNum = value;
    return 0;
}

/* ---- stream attributes: the union aclrtStreamAttrValue travels as its 64-bit member (the daemon reads a 32-bit
 * member from its low half, the bytes it occupies on a little-endian host); a get writes the attribute's member
 * only (failureMode is the one 64-bit member) ------------------------------------------------------------------- */
#define STREAM_ATTR_FAILURE_MODE 1

VN_EXPORT int aclrtSetStreamAttribute(void *stream, int stmAttrType, void *value)
{
    const char *api = "aclrtSetStreamAttribute";
    vn_enter(api);
    if (!value) return vn_fail(100000, api, "value is NULL: it must point to the aclrtStreamAttrValue to set");
    uint64_t bits;
    memcpy(&bits, value, 8);
    vn_req r;
    vn_req_begin(&r, api, 3, 0);
    mp_key(&r.b, "stream"), mp_uint(&r.b, (uintptr_t)stream);
    mp_key(&r.b, "stmAttrType"), mp_int(&r.b, stmAttrType);
    mp_key(&r.b, "value"), mp_uint(&r.b, bits);
    return vn_call(&r, NULL);
}

VN_EXPORT int aclrtGetStreamAttribute(void *stream, int stmAttrType, void *value)
{
    const char *api = "aclrtGetStreamAttribute";
    vn_enter(api);
    if (!value) return vn_null_out(api, "value");
    vn_req r;
    vn_req_begin(&r, api, 2, 0);
    mp_key(&r.b, "stream"), mp_uint(&r.b, (uintptr_t)stream);
    mp_key(&r.b, "stmAttrType"), mp_int(&r.b, stmAttrType);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    uint64_t got = mp_u64v(vn_out(&reply, "value"));
    vn_reply_free(&reply);
    if (stmAttrType == STREAM_ATTR_FAILURE_MODE) memcpy(value, &got, 8);
    else {
        uint32_t low = (uint32_t)got;
        memcpy(value, &low, 4);
    }
    return 0;
}

/* aclmdlRIGetName: the ACL layer's NULL checks first; a buffer too small is zero-filled, as securec leaves it when
 * the runtime's copy fails (507000) */
VN_EXPORT int aclmdlRIGetName(void *modelRI, uint32_t maxLen, char *name)
{
    const char *api = "aclmdlRIGetName";
    vn_enter(api);
    if (!modelRI) return vn_fail(100000, api, "modelRI is NULL");
    if (!name) return vn_fail(100000, api, "name is NULL: it must point to a buffer of maxLen bytes");
    vn_req r;
    vn_req_begin(&r, api, 2, 0);
    mp_key(&r.b, "modelRI"), mp_uint(&r.b, (uintptr_t)modelRI);
    mp_key(&r.b, "maxLen"), mp_uint(&r.b, maxLen);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) {
        if (code == 507000) memset(name, 0, maxLen);
        return code;
    }
    const mp_obj *text = vn_out(&reply, "name");
    size_t n = text && text->type == MP_STR ? text->n : 0;
    if (n + 1 <= maxLen) memcpy(name, text->v.s, n), name[n] = 0;
    vn_reply_free(&reply);
    return 0;
}
