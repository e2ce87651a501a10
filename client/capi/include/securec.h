/* vnpu: the secure C functions CANN ships in libc_sec.so (securec), for the programs that call them: bounded
 * copies, fills, string copies and formatting. Each takes the destination's size (destMax); on a bad argument it
 * returns an errno-style code and, where the code says _AND_RESET, clears the destination first. */
#ifndef VNPU_SECUREC_H_
#define VNPU_SECUREC_H_

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef EOK
#define EOK 0
#endif
typedef int errno_t;
#define SECUREC_MEM_MAX_LEN 0x7fffffffUL
#define SECUREC_STRING_MAX_LEN 0x7fffffffUL
#define EINVAL_AND_RESET (22 | 128)
#define ERANGE_AND_RESET (34 | 128)
#define EOVERLAP_AND_RESET (54 | 128)

errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count);
errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count);
errno_t memset_s(void *dest, size_t destMax, int c, size_t count);
errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc);
errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count);
errno_t strcat_s(char *strDest, size_t destMax, const char *strSrc);
errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count);
int sprintf_s(char *strDest, size_t destMax, const char *format, ...);
int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...);
int vsprintf_s(char *strDest, size_t destMax, const char *format, va_list argList);
int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_SECUREC_H_ */
