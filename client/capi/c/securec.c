/* vnpu's libc_sec.so: the secure C functions of securec.h, written from their documented behaviour. A bad size
 * (0 or above the maximum) is ERANGE and a NULL destination EINVAL, the destination untouched; a NULL source, a
 * source that does not fit, or overlapping buffers clear the destination and answer the _AND_RESET code. The
 * formatting functions answer the number of characters written, or -1 (the destination then an empty string). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "securec.h"

#define SEC_API __attribute__((visibility("default")))

static int overlaps(const void *a, size_t na, const void *b, size_t nb) {
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + nb && y < x + na;
}

static int bad_size(size_t destMax, size_t limit) { return destMax == 0 || destMax > limit; }

SEC_API errno_t memset_s(void *dest, size_t destMax, int c, size_t count) {
    if (bad_size(destMax, SECUREC_MEM_MAX_LEN)) return 34;
    if (dest == NULL) return 22;
    if (count > destMax) {
        memset(dest, c, destMax);
        return ERANGE_AND_RESET;
    }
    memset(dest, c, count);
    return EOK;
}

static errno_t copy(void *dest, size_t destMax, const void *src, size_t count, int allow_overlap) {
    if (bad_size(destMax, SECUREC_MEM_MAX_LEN)) return 34;
    if (dest == NULL) return 22;
    if (src == NULL) {
        memset(dest, 0, destMax);
        return EINVAL_AND_RESET;
    }
    if (count > destMax) {
        memset(dest, 0, destMax);
        return ERANGE_AND_RESET;
    }
    if (count == 0 || dest == src) return EOK;
    if (!allow_overlap && overlaps(dest, count, src, count)) {
        memset(dest, 0, destMax);
        return EOVERLAP_AND_RESET;
    }
    memmove(dest, src, count);
    return EOK;
}

SEC_API errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count) {
    return copy(dest, destMax, src, count, 0);
}

SEC_API errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count) {
    return copy(dest, destMax, src, count, 1);
}

/* copies at most `count` characters of src after the `start` characters already in strDest */
static errno_t string_copy(char *strDest, size_t destMax, size_t start, const char *strSrc, size_t count) {
    if (bad_size(destMax, SECUREC_STRING_MAX_LEN)) return 34;
    if (strDest == NULL) return 22;
    if (strSrc == NULL) {
        strDest[0] = '\0';
        return EINVAL_AND_RESET;
    }
    if (start >= destMax) { /* strDest is not terminated within destMax */
        strDest[0] = '\0';
        return 22 | 128;
    }
    size_t n = strnlen(strSrc, count);
    if (start + n >= destMax) {
        strDest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    if (overlaps(strDest, destMax, strSrc, n + 1)) {
        strDest[0] = '\0';
        return EOVERLAP_AND_RESET;
    }
    memcpy(strDest + start, strSrc, n);
    strDest[start + n] = '\0';
    return EOK;
}

SEC_API errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc) {
    return string_copy(strDest, destMax, 0, strSrc, SIZE_MAX);
}

SEC_API errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count) {
    return string_copy(strDest, destMax, 0, strSrc, count);
}

SEC_API errno_t strcat_s(char *strDest, size_t destMax, const char *strSrc) {
    size_t start = strDest == NULL || bad_size(destMax, SECUREC_STRING_MAX_LEN) ? 0 : strnlen(strDest, destMax);
    return string_copy(strDest, destMax, start, strSrc, SIZE_MAX);
}

SEC_API errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count) {
    size_t start = strDest == NULL || bad_size(destMax, SECUREC_STRING_MAX_LEN) ? 0 : strnlen(strDest, destMax);
    return string_copy(strDest, destMax, start, strSrc, count);
}

SEC_API int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList) {
    if (strDest == NULL || format == NULL || bad_size(destMax, SECUREC_STRING_MAX_LEN)) {
        if (strDest != NULL && destMax > 0 && destMax <= SECUREC_STRING_MAX_LEN) strDest[0] = '\0';
        return -1;
    }
    int truncate = count < destMax; /* at most count characters, the rest cut off */
    size_t room = truncate ? count + 1 : destMax;
    int n = vsnprintf(strDest, room, format, argList);
    if (n < 0) {
        strDest[0] = '\0';
        return -1;
    }
    if ((size_t)n >= room) {
        if (!truncate) strDest[0] = '\0';
        return -1;
    }
    return n;
}

SEC_API int vsprintf_s(char *strDest, size_t destMax, const char *format, va_list argList) {
    return vsnprintf_s(strDest, destMax, SIZE_MAX, format, argList);
}

SEC_API int sprintf_s(char *strDest, size_t destMax, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsprintf_s(strDest, destMax, format, args);
    va_end(args);
    return n;
}

SEC_API int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf_s(strDest, destMax, count, format, args);
    va_end(args);
    return n;
}
