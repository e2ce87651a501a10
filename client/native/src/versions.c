/* The versions and the device's UUID: aclsysGetCANNVersion (the packages' version texts are legacygen.py's,
 * evaluated from proto) and aclrtDeviceGetUuid (asked of the daemon). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "core.h"
#include "legacy.h"

#define INVALID 100000

VN_EXPORT aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version)
{
    const char *api = "aclsysGetCANNVersion";
    vn_enter(api);
    if (!version) return vn_fail(INVALID, api, "version is NULL: it must point to an aclCANNPackageVersion");
    if ((int)name == vn_pkg_driver) return vn_fail(vn_pkg_driver_code, api, "%s", vn_pkg_driver_message);
    const char *package = vn_cann_package((int)name);
    if (!package) return vn_fail(INVALID, api, "name %d is not an aclCANNPackageName", (int)name);
    char text[ACL_PKG_VERSION_MAX_SIZE];
    int code = aclsysGetVersionStr((char *)package, text);
    if (code) return code;
    char *dash = strchr(text, '-'); /* "X.Y.Z-suffix": the suffix joins the last part, its dots dropped */
    if (dash) {
        char *w = dash;
        for (char *r = dash + 1; *r; r++)
            if (*r != '.') *w++ = *r;
        *w = '\0';
        memmove(dash + 1, dash, strlen(dash) + 1), *dash = '.';
    }
    char *parts[4] = {"0", "0", "0", "0"}, copy[ACL_PKG_VERSION_MAX_SIZE];
    snprintf(copy, sizeof(copy), "%s", text);
    int n = 0;
    for (char *save, *p = strtok_r(copy, ".", &save); p && n < 4; p = strtok_r(NULL, ".", &save)) parts[n++] = p;
    if (n < 2) return vn_fail(100003, api, "the version '%s' of %s has fewer than two parts", text, package);
    memset(version, 0, sizeof(*version));
    snprintf(version->version, sizeof(version->version), "%s", text);
    snprintf(version->majorVersion, sizeof(version->majorVersion), "%s", parts[0]);
    snprintf(version->minorVersion, sizeof(version->minorVersion), "%s", parts[1]);
    snprintf(version->releaseVersion, sizeof(version->releaseVersion), "%s", parts[2]);
    snprintf(version->patchVersion, sizeof(version->patchVersion), "%s", parts[3]);
    return 0;
}

VN_EXPORT aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid)
{
    const char *api = "aclrtDeviceGetUuid";
    vn_enter(api);
    if (!uuid) return vn_fail(INVALID, api, "uuid is NULL: it must point to where the result goes");
    int ready = vn_ready(api);
    if (ready) return ready;
    vn_req r;
    vn_req_begin(&r, api, 1, 0);
    mp_key(&r.b, "deviceId"), mp_int(&r.b, deviceId);
    vn_reply reply;
    int code = vn_call(&r, &reply);
    if (code) return code;
    const mp_obj *got = vn_out(&reply, "uuid");
    memset(uuid, 0, sizeof(*uuid));
    if (got && got->type == MP_BIN) memcpy(uuid, got->v.s, got->n < sizeof(*uuid) ? got->n : sizeof(*uuid));
    vn_reply_free(&reply);
    return 0;
}
