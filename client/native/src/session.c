/* The session: one WebSocket connection to the daemon per process, shared by the program's threads; here its
 * opening (aclInit's first call, or a call answered before aclInit through a session of its own) and closing
 * (aclFinalize's last, or the program's exit, which sends what is pending).
 *
 * The rest of it: a call is an envelope {id, api, thread, reply, args} (call.c); calls that only queue work are
 * pipelined, and an error one causes is returned by the same thread's next waiting call (pipeline.c); a reader
 * thread takes every message (reader.c); each thread keeps its current call and last error (thread.c). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "session.h"

vn_session *vn_current = NULL;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count = 0;

/* ---- configuration ------------------------------------------------------------------------------------------- */
const char *vn_context_id(void) { return vn_current ? vn_current->context : ""; }
int vn_on_this_machine(void) { return vn_current && vn_current->local_memory; }

/* ---- opening and closing ------------------------------------------------------------------------------------- */
/* One line per process, an error of the runtime's log: ASCEND_GLOBAL_LOG_LEVEL=4 (null) silences it,
 * ASCEND_SLOG_PRINT_TO_STDOUT=1 sends it to stdout, as CANN's log does. */
static void once_unreachable(const char *endpoint, const char *reason)
{
    static int said = 0;
    if (__atomic_exchange_n(&said, 1, __ATOMIC_SEQ_CST)) return;
    const char *level = getenv("ASCEND_GLOBAL_LOG_LEVEL"), *to_stdout = getenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    if (level && atoi(level) >= 4) return;
    FILE *out = to_stdout && atoi(to_stdout) == 1 ? stdout : stderr;
    fprintf(out, "vnpu: aclInit failed: cannot reach the vnpu daemon at %s: %s; the program's ACL calls fail until it "
                 "answers\n", endpoint, reason);
    fflush(out);
}

/* Which daemon aclInit reached, at CANN's info level on stdout (ASCEND_SLOG_PRINT_TO_STDOUT=1 with
 * ASCEND_GLOBAL_LOG_LEVEL 0 or 1), in the Python client's words (its vnpu.client logger). */
static void say_connected(const char *endpoint, const char *context, const char *session)
{
    const char *level = getenv("ASCEND_GLOBAL_LOG_LEVEL"), *to_stdout = getenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    if (!to_stdout || atoi(to_stdout) != 1 || !level || !*level || atoi(level) > 1) return;
    printf("[INFO] vnpu: connected to the vnpu daemon at %s over the WebSocket: context %s, session %s\n", endpoint,
           context, session);
    fflush(stdout);
}

static void query_escape(char *out, size_t n, const char *value)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)value; *p && o + 4 < n; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-_.~", *p))
            out[o++] = (char)*p;
        else o += (size_t)snprintf(out + o, n - o, "%%%02X", *p);
    }
    out[o] = 0;
}

/* Open the session of `config` (aclInit's first call); 0 or an ACL code with the message kept. */
static int open_session(vn_config *config, vn_session **made)
{
    vn_session *s = calloc(1, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->numbering, NULL);
    pthread_mutex_init(&s->sending, NULL);
    pthread_mutex_init(&s->idle_lock, NULL);
    pthread_cond_init(&s->flush_cond, NULL);
    pthread_cond_init(&s->idle_cond, NULL);
    s->idle_tid = -1;
    mp_init(&s->pending);
    mp_raw(&s->pending, "\0\0\0\0\0", ARRAY_HEAD);
    vn_outbox_reset(s);
    s->launch_blocking = config->launch_blocking;
    s->local_memory = config->local_memory;
    char path[1024], context[256] = "", run[256] = "";
    if (config->context) {
        char escaped[200];
        query_escape(escaped, sizeof(escaped), config->context);
        snprintf(context, sizeof(context), "&context=%s", escaped);
    }
    if (config->run) {
        char escaped[200];
        query_escape(escaped, sizeof(escaped), config->run);
        snprintf(run, sizeof(run), "&run=%s", escaped);
    }
    snprintf(path, sizeof(path), "/v1/ws?idle=1&printed=1%s%s", context, run);
    char err[1024];
    if (ws_open(&s->ws, config->host, config->port, config->uds, path, config->token, err, sizeof(err)) != 0) {
        int code = 500000;
        if (strncmp(err, "HTTP ", 5) == 0) {
            int status = atoi(err + 5);
            const char *body = strchr(err + 5, ' ');
            body = body ? body + 1 : "";
            if (status == 401)
                vn_fail_transport("aclInit", "the vnpu daemon at %s requires a token: %s (HTTP 401)", config->endpoint,
                        config->token ? "check VNPU_TOKEN (it was not accepted)"
                                      : "set VNPU_TOKEN to one of the daemon's tokens");
            else {
                /* the daemon's JSON error: {"error": {"code": N, ..., "message": "..."}} */
                const char *c = strstr(body, "\"code\":");
                const char *msg = strstr(body, "\"message\":\"");
                if (c && msg) {
                    code = atoi(c + 7);
                    msg += 11;
                    const char *end = msg;
                    while (*end && !(*end == '"' && end[-1] != '\\')) end++;
                    vn_fail(code, "aclInit", "%.*s", (int)(end - msg), msg);
                } else
                    vn_fail_transport("aclInit", "the vnpu daemon at %s refused the session: %s", config->endpoint, err);
            }
        } else {
            const char *hint = strstr(err, "refused") || strstr(err, "No such file") ? " (is it running? `vnpu serve` starts one)" : "";
            vn_fail_transport("aclInit", "cannot reach the vnpu daemon at %s: %s%s", config->endpoint, err, hint);
            once_unreachable(config->endpoint, err);
        }
        free(s);
        return code;
    }
    char *hello;
    size_t len;
    if (ws_recv(&s->ws, &hello, &len) != 0) {
        once_unreachable(config->endpoint, "the connection closed before the daemon's hello");
        close(s->ws.fd);
        free(s);
        return vn_fail_transport("aclInit", "cannot reach the vnpu daemon at %s: no hello", config->endpoint);
    }
    mp_tree t;
    const mp_obj *m = mp_parse(&t, hello, len);
    const mp_obj *h = mp_get(m, "hello");
    char *ctx = mp_strdup(mp_get(h, "context")), *session = mp_strdup(mp_get(h, "session"));
    snprintf(s->context, sizeof(s->context), "%s", ctx ? ctx : "");
    say_connected(config->endpoint, s->context, session ? session : "");
    free(ctx), free(session);
    mp_tree_free(&t);
    pthread_create(&s->reader, NULL, vn_reader, s);
    *made = s;
    return 0;
}

static void close_session(vn_session *s)
{
    vn_outbox_now(s);
    pthread_mutex_lock(&s->lock);
    s->closing = 1;
    pthread_cond_broadcast(&s->flush_cond);
    pthread_mutex_unlock(&s->lock);
    if (s->flusher_started) pthread_join(s->flusher, NULL);
    ws_close(&s->ws);
    pthread_join(s->reader, NULL);
    close(s->ws.fd);
    /* the session's memory is kept: a thread still inside a call sees `broken` and returns */
}

static void flush_at_exit(void)
{
    vn_session *s = vn_current;
    if (s && !s->broken) vn_outbox_now(s);
}

/* The session of the configuration at `config_path` (NULL: the environment's), its embedded daemon started first. */
static int connect_session(const char *config_path, vn_session **made)
{
    vn_config config;
    int code = vn_load_config(config_path, &config);
    if (code == 0) code = vn_start_embedded(&config);
    if (code == 0) code = open_session(&config, made);
    vn_free_config(&config);
    return code;
}

/* The program's session, opened with the configuration at `config_path` when none is open. */
static int ensure_session(const char *config_path)
{
    int code = 0;
    pthread_mutex_lock(&init_lock);
    if (!vn_current) {
        vn_session *s = NULL;
        code = connect_session(config_path, &s);
        if (code == 0) {
            vn_current = s;
            static int registered = 0;
            if (!registered) registered = 1, atexit(flush_at_exit);
        }
    }
    pthread_mutex_unlock(&init_lock);
    return code;
}


int vn_init(const char *config_path)
{
    int code = ensure_session(config_path);
    if (code) return code;
    vn_req r;
    vn_req_begin(&r, "aclInit", 1, 0);
    mp_key(&r.b, "configPath");
    if (config_path) mp_str(&r.b, config_path);
    else mp_nil(&r.b);
    code = vn_call(&r, NULL);
    if (code == 0) {
        pthread_mutex_lock(&init_lock);
        init_count++;
        pthread_mutex_unlock(&init_lock);
    }
    return code;
}

/* A call the runtime answers before aclInit (torch.npu.is_available() asks the device count first): through a
 * session of its own, closed after, as the Python client does. */
int vn_before_init(vn_req *r, vn_reply *out)
{
    pthread_mutex_lock(&init_lock);
    if (vn_current) {
        pthread_mutex_unlock(&init_lock);
        return vn_call_unwatched(r, out);
    }
    vn_session *s = NULL;
    int code = connect_session(NULL, &s);
    if (code) {
        pthread_mutex_unlock(&init_lock);
        mp_free(&r->b);
        return code;
    }
    vn_current = s;
    code = vn_call_unwatched(r, out);
    vn_current = NULL;
    close_session(s);
    pthread_mutex_unlock(&init_lock);
    return code;
}

/* aclnnInit / aclnnFinalize: CANN's runtime answers aclrtSetDevice and what follows without aclInit, so a program
 * that starts with aclnnInit alone runs there. The daemon needs aclInit first: after aclnnInit, the first call that
 * needs the device makes the aclInit the program has not made (aclnnInit itself needs no daemon: host objects and
 * phase 1 live in the program), and aclnnFinalize ends it. After aclInit both do nothing. */
static int nn_pending, nn_initialized;

int vn_nn_init(void)
{
    pthread_mutex_lock(&init_lock);
    if (init_count == 0 && !nn_initialized) nn_pending = 1;
    pthread_mutex_unlock(&init_lock);
    return 0;
}

int vn_nn_open(void)
{
    if (!__atomic_load_n(&nn_pending, __ATOMIC_SEQ_CST)) return -1;
    int code = vn_init(NULL);
    if (code == 0) {
        __atomic_store_n(&nn_initialized, 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&nn_pending, 0, __ATOMIC_SEQ_CST);
    }
    return code;
}

int vn_nn_finalize(void)
{
    __atomic_store_n(&nn_pending, 0, __ATOMIC_SEQ_CST);
    return __atomic_exchange_n(&nn_initialized, 0, __ATOMIC_SEQ_CST) ? vn_finalize() : 0;
}

int vn_finalize(void)
{
    vn_req r;
    vn_req_begin(&r, "aclFinalize", 0, 0);
    int code = vn_call(&r, NULL);
    if (code) return code;
    pthread_mutex_lock(&init_lock);
    if (--init_count == 0 && vn_current) {
        vn_session *s = vn_current;
        vn_current = NULL;
        close_session(s);
    }
    pthread_mutex_unlock(&init_lock);
    return 0;
}
