// The secure C functions of libc_sec.so: each prints `label code` and what the destination holds after the call.
#include <cstdio>
#include <cstring>

#include "securec.h"

int main() {
    char d[8];
    int rc;
    std::memset(d, 'x', sizeof d);
    rc = memset_s(d, sizeof d, 'a', 4);
    std::printf("memset %d %c%c\n", rc, d[3], d[4]);
    rc = memset_s(d, 4, 'b', 8);  // fills destMax bytes, then says so
    std::printf("memset-over %d %c\n", rc, d[3]);
    rc = memset_s(d, 0, 0, 0);
    std::printf("memset-zero-max %d\n", rc);
    rc = memset_s(nullptr, 8, 0, 1);
    std::printf("memset-null %d\n", rc);
    rc = memcpy_s(d, sizeof d, "abc", 3);
    std::printf("memcpy %d %.3s\n", rc, d);
    rc = memcpy_s(d, 4, "abcdef", 6);
    std::printf("memcpy-over %d %d\n", rc, d[0]);
    rc = memcpy_s(d, sizeof d, nullptr, 1);
    std::printf("memcpy-null-src %d %d\n", rc, d[0]);
    std::memcpy(d, "abcdefg", 8);
    rc = memcpy_s(d + 1, 7, d, 4);
    std::printf("memcpy-overlap %d %d\n", rc, d[1]);
    std::memcpy(d, "abcdefg", 8);
    rc = memmove_s(d + 1, 7, d, 4);
    std::printf("memmove-overlap %d %s\n", rc, d);
    rc = strcpy_s(d, sizeof d, "hello");
    std::printf("strcpy %d %s\n", rc, d);
    rc = strcpy_s(d, sizeof d, "too long!");
    std::printf("strcpy-over %d [%s]\n", rc, d);
    rc = strncpy_s(d, sizeof d, "abcdef", 3);
    std::printf("strncpy %d %s\n", rc, d);
    rc = strcat_s(d, sizeof d, "de");
    std::printf("strcat %d %s\n", rc, d);
    rc = strcat_s(d, sizeof d, "xyzxyz");
    std::printf("strcat-over %d [%s]\n", rc, d);
    rc = sprintf_s(d, sizeof d, "%d-%s", 42, "ok");
    std::printf("sprintf %d %s\n", rc, d);
    rc = sprintf_s(d, sizeof d, "%s", "much too long");
    std::printf("sprintf-over %d [%s]\n", rc, d);
    rc = snprintf_s(d, sizeof d, 3, "%s", "abcdef");
    std::printf("snprintf-trunc %d %s\n", rc, d);
    return 0;
}
