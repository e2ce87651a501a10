// aclInit(configPath) from C: `config <path>` prints "init <code> <message>", then, when it succeeded,
// "count <code> <devices>" from the daemon the file names, and "finalize <code>".
#include <cstdio>

#include "acl/acl.h"

int main(int argc, char **argv)
{
    aclError init = aclInit(argc > 1 ? argv[1] : nullptr);
    const char *message = init == ACL_SUCCESS ? nullptr : aclGetRecentErrMsg();
    std::printf("init %d %s\n", init, message ? message : "");
    if (init != ACL_SUCCESS) {
        return 0;
    }
    uint32_t count = 0;
    aclError counted = aclrtGetDeviceCount(&count);
    std::printf("count %d %u\n", counted, count);
    std::printf("finalize %d\n", aclFinalize());
    return 0;
}
