/* The calling thread: its current call (`vn_enter` counts the thread's calls of each function, so that a
 * pipelined error can name "the 3rd aclnnAdd call of this thread"), its last error message (aclGetRecentErrMsg)
 * and last error code (aclrtGetLastError), and the ways a call keeps its error (`vn_fail`, ...). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "session.h"

static pthread_key_t thread_key;
static pthread_once_t thread_once = PTHREAD_ONCE_INIT;
static __thread vn_thread *t_state;

static void thread_gone(void *p)
{
    vn_thread *t = p;
    free(t->message);
    free(t->returned);
    free(t);
}
static void make_key(void) { pthread_key_create(&thread_key, thread_gone); }

vn_thread *vn_self(void)
{
    if (t_state) return t_state;
    pthread_once(&thread_once, make_key);
    t_state = calloc(1, sizeof(vn_thread));
    if (!t_state) abort();
    t_state->tid = (long)pthread_self(); /* what a program passes as a thread id (aclrtSubscribeReport's threadId) */
    pthread_setspecific(thread_key, t_state);
    return t_state;
}

long vn_tid(void) { return vn_self()->tid; }

void vn_enter(const char *api)
{
    vn_thread *t = vn_self();
    size_t h = ((uintptr_t)api >> 3) % COUNT_SLOTS;
    for (size_t i = 0; i < COUNT_SLOTS; i++, h = (h + 1) % COUNT_SLOTS) {
        count_slot *s = &t->counts[h];
        if (s->api == api || !s->api) {
            s->api = api;
            t->api = api, t->ordinal = ++s->count;
            return;
        }
    }
    t->api = api, t->ordinal = 0;
}

static void ordinal(char *out, size_t n, uint32_t number)
{
    const char *suffix = (number % 100 >= 10 && number % 100 <= 20) ? "th"
                         : number % 10 == 1                        ? "st"
                         : number % 10 == 2                        ? "nd"
                         : number % 10 == 3                        ? "rd"
                                                                   : "th";
    snprintf(out, n, "%u%s", number, suffix);
}

void vn_place_of(char *out, size_t n, const char *api, uint32_t number)
{
    char nth[24];
    ordinal(nth, sizeof(nth), number);
    snprintf(out, n, "the %s %s call of this thread", nth, api);
}

void vn_set_message(char *message)
{
    vn_thread *t = vn_self();
    free(t->message);
    t->message = message;
}

char *vn_take_message(void)
{
    vn_thread *t = vn_self();
    char *m = t->message;
    t->message = NULL;
    free(t->returned);
    t->returned = m;
    return m;
}

static void note_last_error(int code)
{
    if ((code >= 107000 && code < 108000) || (code >= 207000 && code < 208000) || (code >= 507000 && code < 508000))
        vn_self()->last_error = code;
}
int vn_last_error(int clear)
{
    vn_thread *t = vn_self();
    int code = t->last_error;
    if (clear) t->last_error = 0;
    return code;
}

static char *format(const char *fmt, va_list args)
{
    char *text = NULL;
    if (vasprintf(&text, fmt, args) < 0) return NULL;
    return text;
}

char *vn_sprintf_alloc(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    char *text = format(fmt, args);
    va_end(args);
    return text;
}

/* CANN's log on stdout (ASCEND_SLOG_PRINT_TO_STDOUT=1) at its default level, error (ASCEND_GLOBAL_LOG_LEVEL unset or
 * 0-3): each error as it happens, a "[ERROR] " line. */
static int log_errors(void)
{
    static int decided = -1;
    int said = __atomic_load_n(&decided, __ATOMIC_RELAXED);
    if (said < 0) {
        const char *to_stdout = getenv("ASCEND_SLOG_PRINT_TO_STDOUT"), *level = getenv("ASCEND_GLOBAL_LOG_LEVEL");
        said = to_stdout && atoi(to_stdout) == 1 && !(level && *level && atoi(level) > 3);
        __atomic_store_n(&decided, said, __ATOMIC_RELAXED);
    }
    return said;
}

/* An error as AclError's str() gives it: "api: NAME (code): message". */
int vn_keep_error(int code, const char *api, const char *message)
{
    char *text = api && *api ? vn_sprintf_alloc("%s: %s (%d): %s", api, vn_code_name(code), code, message)
                             : vn_sprintf_alloc("%s (%d): %s", vn_code_name(code), code, message);
    if (text && log_errors()) {
        printf("[ERROR] %s\n", text);
        fflush(stdout);
    }
    vn_set_message(text);
    note_last_error(code);
    return code;
}

int vn_fail(int code, const char *api, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    char *message = format(fmt, args);
    va_end(args);
    vn_keep_error(code, api, message ? message : "");
    free(message);
    return code;
}

/* A transport failure (the daemon unreachable, the connection gone): the Python client's TransportError, whose
 * text the C toolkit keeps as "api: message", with ACL_ERROR_INTERNAL_ERROR. */
int vn_fail_transport(const char *api, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    char *message = format(fmt, args);
    va_end(args);
    vn_set_message(vn_sprintf_alloc("%s: %s", api, message ? message : ""));
    free(message);
    return 500000;
}

int vn_null_out(const char *api, const char *param)
{
    return vn_fail(100000, api, "%s is NULL: it must point to where the result goes", param);
}

int vn_not_implemented(const char *api) { return vn_fail(207000, api, "vnpu does not implement %s yet", api); }
