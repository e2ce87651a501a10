/* The session: one WebSocket connection to the daemon per process, shared by the program's threads.
 *
 * A call is an envelope {id, api, thread, reply, args}. Calls that only queue work are pipelined: they wait in
 * the outbox and leave as one frame (a msgpack array of envelopes) with the next waiting call, when 128 are
 * pending, or 0.5 ms after the first (the flusher thread); an error one causes comes back naming its request
 * id and thread, and is returned by the same thread's next waiting call, with which of the thread's calls of
 * that function it was ("the 3rd aclnnAdd call of this thread") -- the text the Python client gives. A reader
 * thread takes every message: a reply wakes the caller that waits for it, a pipelined error is kept for its
 * thread, idle news is noted (a synchronize of a stream the daemon said finished costs no round trip). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "session.h"

#define MAX_CALLS 128
#define MAX_BYTES (256 << 10)
#define FLUSH_DELAY_NS 500000
#define PLACES 16384
#define ARRAY_HEAD 5 /* the outbox's frame starts with room for an array header */
#define KEPT_FAILURES 16 /* pipelined failures of a thread kept whole until its next wait; the rest are counted */
#define FREES_KEPT 4096 /* aclrtFree calls whose place a later use-after-free message names */

vn_session *vn_current = NULL;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count = 0;

/* ---- per thread ---------------------------------------------------------------------------------------------- */
typedef struct {
    const char *api;
    uint32_t count;
} count_slot;

#define COUNT_SLOTS 512
typedef struct vn_thread {
    long tid;
    const char *api; /* the current call */
    uint32_t ordinal;
    char *message;   /* the last error message (aclGetRecentErrMsg) */
    char *returned;  /* what aclGetRecentErrMsg returned last: valid until the next one */
    int last_error;  /* aclrtGetLastError */
    count_slot counts[COUNT_SLOTS];
} vn_thread;

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

static void place_of(char *out, size_t n, const char *api, uint32_t number)
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

static char *sprintf_alloc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *sprintf_alloc(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    char *text = format(fmt, args);
    va_end(args);
    return text;
}

/* An error as AclError's str() gives it: "api: NAME (code): message". */
static int keep_error(int code, const char *api, const char *message)
{
    char *text = api && *api ? sprintf_alloc("%s: %s (%d): %s", api, vn_code_name(code), code, message)
                             : sprintf_alloc("%s (%d): %s", vn_code_name(code), code, message);
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
    keep_error(code, api, message ? message : "");
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
    vn_set_message(sprintf_alloc("%s: %s", api, message ? message : ""));
    free(message);
    return 500000;
}

int vn_null_out(const char *api, const char *param)
{
    return vn_fail(100000, api, "%s is NULL: it must point to where the result goes", param);
}

int vn_not_implemented(const char *api) { return vn_fail(207000, api, "vnpu does not implement %s yet", api); }

/* ---- configuration ------------------------------------------------------------------------------------------- */
const char *vn_context_id(void) { return vn_current ? vn_current->context : ""; }
int vn_on_this_machine(void) { return vn_current && vn_current->local_memory; }

/* ---- the outbox ---------------------------------------------------------------------------------------------- */
static void outbox_reset(vn_session *s)
{
    s->pending.len = ARRAY_HEAD;
    s->pending_calls = 0;
}

/* Send what is pending, as one frame (the caller holds neither lock). */
static int outbox_now(vn_session *s)
{
    pthread_mutex_lock(&s->sending);
    pthread_mutex_lock(&s->lock);
    mp_buf frame = s->pending;
    uint32_t calls = s->pending_calls;
    mp_init(&s->pending);
    mp_raw(&s->pending, "\0\0\0\0\0", ARRAY_HEAD);
    outbox_reset(s);
    pthread_mutex_unlock(&s->lock);
    int rc = 0;
    if (calls == 1) rc = ws_send(&s->ws, frame.data + ARRAY_HEAD, frame.len - ARRAY_HEAD);
    else if (calls > 1) {
        uint8_t *h = (uint8_t *)frame.data;
        h[0] = 0xdd, h[1] = (uint8_t)(calls >> 24), h[2] = (uint8_t)(calls >> 16), h[3] = (uint8_t)(calls >> 8),
        h[4] = (uint8_t)calls;
        rc = ws_send(&s->ws, frame.data, frame.len);
    }
    pthread_mutex_unlock(&s->sending);
    mp_free(&frame);
    return rc;
}

static void *flusher(void *arg)
{
    vn_session *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->pending_calls && !s->closing) pthread_cond_wait(&s->flush_cond, &s->lock);
        if (s->closing) break;
        pthread_mutex_unlock(&s->lock);
        struct timespec delay = {0, FLUSH_DELAY_NS};
        nanosleep(&delay, NULL);
        outbox_now(s);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- where the program freed a block: a task that finds it freed names the free ------------------------------- */
static struct {
    uint64_t ptr;
    const char *api;
    uint32_t ordinal;
} frees[FREES_KEPT];
static size_t frees_next;
static pthread_mutex_t frees_lock = PTHREAD_MUTEX_INITIALIZER;

void vn_note_free(uint64_t ptr)
{
    vn_thread *t = vn_self();
    if (!ptr || !t->api) return;
    pthread_mutex_lock(&frees_lock);
    frees[frees_next].ptr = ptr, frees[frees_next].api = t->api, frees[frees_next].ordinal = t->ordinal;
    frees_next = (frees_next + 1) % FREES_KEPT;
    pthread_mutex_unlock(&frees_lock);
}

/* `message` (malloc'd), its "allocation at 0x.., which held 0x.. when the task was issued, has been freed by
 * aclrtFree" naming where the program freed that block, when it was one of ours (the Python client's `located`). */
static char *located(char *message)
{
    static const char *const head = "allocation at 0x", *const tail = "has been freed by aclrtFree";
    char *at = message ? strstr(message, head) : NULL;
    if (!at) return message;
    char *end = strstr(at, tail);
    if (!end || (strchr(at, ';') && strchr(at, ';') < end)) return message;
    end += strlen(tail);
    uint64_t ptr = strtoull(at + strlen(head), NULL, 16);
    const char *api = NULL;
    uint32_t ordinal = 0;
    pthread_mutex_lock(&frees_lock);
    for (size_t k = 1; k <= FREES_KEPT; k++) { /* the newest free of that block */
        size_t i = (frees_next + FREES_KEPT - k) % FREES_KEPT;
        if (frees[i].api && frees[i].ptr == ptr) {
            api = frees[i].api, ordinal = frees[i].ordinal;
            break;
        }
    }
    pthread_mutex_unlock(&frees_lock);
    if (!api) return message;
    char place[160];
    place_of(place, sizeof(place), api, ordinal);
    char *out = sprintf_alloc("%.*s (%s)%s", (int)(end - message), message, place, end);
    free(message);
    return out;
}

/* ---- pipelined errors ----------------------------------------------------------------------------------------- */
typedef struct failed {
    struct failed *next;
    long tid;
    int code;
    char *api;
    char *message; /* "api (the 3rd aclnnAdd call of this thread) #12 failed: ..." */
    uint64_t more; /* all that failed after the first, kept or not */
    char *later[KEPT_FAILURES - 1]; /* the next ones whole, as the Python client keeps them: "api: NAME (code): ..." */
    int n_later;
    mp_tree task_tree; /* the failed task's information, when the error carries one */
    const mp_obj *task;
} failed;

void vn_report_task(const mp_obj *task);

/* A pipelined call's error as the Python client names it: "api (the 3rd aclnnAdd call of this thread) #12 failed: ..." */
static char *named(vn_session *s, const mp_obj *error, uint64_t ident, char **api_out)
{
    char *api = mp_strdup(mp_get(error, "api"));
    char *message = located(mp_strdup(mp_get(error, "message")));
    char where[160] = "";
    vn_place *p = s->places ? &s->places[ident % PLACES] : NULL;
    if (p && p->id == ident && p->api) {
        char text[140];
        place_of(text, sizeof(text), p->api, p->ordinal);
        snprintf(where, sizeof(where), " (%s)", text);
    }
    char *text = sprintf_alloc("%s%s #%llu failed: %s", api, where, (unsigned long long)ident, message);
    free(message);
    *api_out = api;
    return text;
}

static void pipelined_error(vn_session *s, const mp_obj *m)
{
    const mp_obj *thread = mp_get(m, "thread"), *error = mp_get(m, "error");
    long tid = thread && thread->type == MP_ARRAY && thread->n == 2 ? (long)mp_i64(&thread->v.items[1]) : -1;
    uint64_t ident = mp_u64v(mp_get(m, "id"));
    int code = (int)mp_i64(mp_get(error, "code"));
    pthread_mutex_lock(&s->lock);
    for (failed *f = s->failed; f; f = f->next)
        if (f->tid == tid) {
            f->more++;
            if (f->n_later < KEPT_FAILURES - 1) {
                char *api, *text = named(s, error, ident, &api);
                f->later[f->n_later++] = sprintf_alloc("%s: %s (%d): %s", api, vn_code_name(code), code, text);
                free(api), free(text);
            }
            pthread_mutex_unlock(&s->lock);
            return;
        }
    failed *f = calloc(1, sizeof(*f));
    f->tid = tid;
    f->code = code;
    f->message = named(s, error, ident, &f->api);
    const mp_obj *task = mp_get(error, "task");
    if (task && task->type == MP_MAP) { /* kept in a tree of its own: the message's is freed */
        mp_buf copy;
        mp_init(&copy);
        mp_map(&copy, task->n);
        for (uint32_t i = 0; i < task->n; i++) {
            const mp_obj *k = &task->v.items[2 * i], *v = &task->v.items[2 * i + 1];
            mp_strn(&copy, k->v.s, k->type == MP_STR ? k->n : 0);
            mp_int(&copy, mp_i64(v));
        }
        f->task = mp_parse(&f->task_tree, copy.data, copy.len);
    }
    f->next = s->failed;
    s->failed = f;
    pthread_mutex_unlock(&s->lock);
}

/* The thread's earlier pipelined failure, returned at this waiting call (0: none). */
static int settle_earlier(vn_session *s)
{
    long tid = vn_tid();
    pthread_mutex_lock(&s->lock);
    failed **link = &s->failed, *f = NULL;
    for (; *link; link = &(*link)->next)
        if ((*link)->tid == tid) {
            f = *link;
            *link = f->next;
            break;
        }
    pthread_mutex_unlock(&s->lock);
    if (!f) return 0;
    vn_thread *t = vn_self();
    char at[160] = "", more[96] = "";
    if (t->api) place_of(at, sizeof(at), t->api, t->ordinal);
    if (f->more)
        snprintf(more, sizeof(more), "; and %llu more pipelined %s failed", (unsigned long long)f->more,
                 f->more == 1 ? "call" : "calls");
    mp_buf kept; /* the later failures kept whole: "(the first N shown): a; b; ..." */
    mp_init(&kept);
    if (f->n_later) {
        char shown[64] = "";
        if ((uint64_t)f->n_later != f->more) snprintf(shown, sizeof(shown), " (the first %d shown)", f->n_later);
        mp_raw(&kept, shown, strlen(shown));
        mp_raw(&kept, ": ", 2);
        for (int i = 0; i < f->n_later; i++) {
            if (i) mp_raw(&kept, "; ", 2);
            mp_raw(&kept, f->later[i], strlen(f->later[i]));
            free(f->later[i]);
        }
    }
    mp_raw(&kept, "", 1);
    char *message = sprintf_alloc("%s%s%s (raised at %s, the thread's next waiting call; VNPU_LAUNCH_BLOCKING=1 "
                                  "raises it at its own call)",
                                  f->message, more, kept.data, at);
    mp_free(&kept);
    if (f->task) vn_report_task(f->task), mp_tree_free(&f->task_tree); /* before the code is kept as the last */
    int code = keep_error(f->code, f->api, message);
    free(message);
    free(f->message);
    free(f->api);
    free(f);
    return code;
}

/* ---- idle news ------------------------------------------------------------------------------------------------ */
static int set_has(const uint64_t *set, size_t n, uint64_t v)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == v) return 1;
    return 0;
}

static size_t set_from(uint64_t *set, const mp_obj *list)
{
    size_t n = 0;
    if (list && list->type == MP_ARRAY)
        for (uint32_t i = 0; i < list->n && n < IDLE_MAX; i++) set[n++] = mp_u64v(&list->v.items[i]);
    return n;
}

static void idle_replied(vn_session *s, uint64_t ident, long tid, const mp_obj *m)
{
    const mp_obj *idle = mp_get(m, "idle"), *pending = mp_get(m, "pending");
    pthread_mutex_lock(&s->idle_lock);
    s->idle_tid = tid, s->idle_upto = ident;
    s->n_finished = set_from(s->finished, idle);
    s->n_pending = set_from(s->pending_streams, pending);
    pthread_cond_broadcast(&s->idle_cond);
    pthread_mutex_unlock(&s->idle_lock);
}

static void idle_reported(vn_session *s, const mp_obj *m)
{
    uint64_t stream = mp_u64v(mp_get(m, "stream")), upto = mp_u64v(mp_get(m, "upto"));
    const mp_obj *thread = mp_get(m, "thread"), *finished = mp_get(m, "finished");
    long tid = thread && thread->type == MP_ARRAY && thread->n == 2 ? (long)mp_i64(&thread->v.items[1]) : -1;
    pthread_mutex_lock(&s->idle_lock);
    for (size_t i = 0; i < s->n_pending; i++)
        if (s->pending_streams[i] == stream) {
            s->pending_streams[i] = s->pending_streams[--s->n_pending];
            break;
        }
    if (finished && finished->type == MP_BOOL && finished->v.b && tid == s->idle_tid && upto >= s->idle_upto) {
        if (upto > s->idle_upto) s->idle_upto = upto, s->n_finished = 0;
        if (s->n_finished < IDLE_MAX && !set_has(s->finished, s->n_finished, stream))
            s->finished[s->n_finished++] = stream;
    }
    pthread_cond_broadcast(&s->idle_cond);
    pthread_mutex_unlock(&s->idle_lock);
}

static void idle_forget(vn_session *s)
{
    pthread_mutex_lock(&s->idle_lock);
    s->n_finished = s->n_pending = 0;
    pthread_cond_broadcast(&s->idle_cond);
    pthread_mutex_unlock(&s->idle_lock);
}

/* Whether a synchronize of `stream` by this thread is known finished (waiting for a pending stream's report). */
static int idle_finished(vn_session *s, uint64_t stream)
{
    long tid = vn_tid();
    int flushed = 0, known = 0;
    pthread_mutex_lock(&s->idle_lock);
    while (s->idle_tid == tid && !s->broken) {
        if (set_has(s->finished, s->n_finished, stream) && s->idle_upto >= s->last_id) {
            known = 1;
            break;
        }
        if (!set_has(s->pending_streams, s->n_pending, stream)) break;
        if (!flushed) {
            pthread_mutex_unlock(&s->idle_lock);
            outbox_now(s);
            pthread_mutex_lock(&s->idle_lock);
            flushed = 1;
            continue;
        }
        pthread_cond_wait(&s->idle_cond, &s->idle_lock);
    }
    pthread_mutex_unlock(&s->idle_lock);
    return known;
}

/* ---- the reader ----------------------------------------------------------------------------------------------- */
static void write_printed(const mp_obj *printed)
{
    if (!printed || printed->type != MP_STR || !printed->n) return;
    fflush(NULL);
    const char *p = printed->v.s;
    size_t n = printed->n;
    while (n) {
        ssize_t w = write(1, p, n);
        if (w <= 0) break;
        p += w, n -= (size_t)w;
    }
}

static void end_connection(vn_session *s, const char *why)
{
    pthread_mutex_lock(&s->lock);
    if (!s->broken) s->broken = strdup(why);
    for (vn_slot *w = s->waiting; w; w = w->next) pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&s->idle_lock);
    s->n_finished = s->n_pending = 0;
    pthread_cond_broadcast(&s->idle_cond);
    pthread_mutex_unlock(&s->idle_lock);
}

static void take(vn_session *s, char *data, size_t len)
{
    mp_tree tree;
    const mp_obj *m = mp_parse(&tree, data, len);
    if (!m || m->type != MP_MAP) {
        mp_tree_free(&tree);
        return;
    }
    if (mp_get(m, "stream") && mp_get(m, "finished")) {
        idle_reported(s, m);
        mp_tree_free(&tree);
        return;
    }
    const mp_obj *shared = mp_get(m, "shared");
    if (shared && m->n == 1) {
        idle_forget(s);
        static const char ack[] = "\x81\xa3" "ack" "\xa6" "shared"; /* {"ack": "shared"} */
        ws_send(&s->ws, ack, sizeof(ack) - 1);
        mp_tree_free(&tree);
        return;
    }
    const mp_obj *id = mp_get(m, "id");
    uint64_t ident = id && id->type == MP_UINT ? id->v.u : 0;
    vn_slot *slot = NULL;
    pthread_mutex_lock(&s->lock);
    for (vn_slot **link = &s->waiting; ident && *link; link = &(*link)->next)
        if ((*link)->id == ident) {
            slot = *link;
            *link = slot->next;
            break;
        }
    if (slot) {
        if (mp_get(m, "result")) idle_replied(s, ident, slot->tid, m);
        slot->tree = tree, slot->root = m, slot->done = 1;
        pthread_cond_signal(&slot->cond);
        pthread_mutex_unlock(&s->lock);
        return;
    }
    pthread_mutex_unlock(&s->lock);
    if (mp_get(m, "error")) pipelined_error(s, m);
    mp_tree_free(&tree);
}

static void *reader(void *arg)
{
    vn_session *s = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        char *message;
        size_t len;
        if (ws_recv(&s->ws, &message, &len) != 0) break;
        take(s, message, len);
    }
    end_connection(s, s->closing ? "the session was closed (aclFinalize)" : "the connection to the daemon closed");
    return NULL;
}

/* ---- calls ---------------------------------------------------------------------------------------------------- */
void vn_req_begin(vn_req *r, const char *api, uint32_t nargs, int asynchronous)
{
    mp_init(&r->b);
    r->api = api;
    r->wait = !asynchronous;
    r->has_stream = 0;
    mp_map(&r->b, 5);
    mp_key(&r->b, "id");
    r->id_at = r->b.len;
    mp_u64(&r->b, 0);
    mp_key(&r->b, "api");
    mp_str(&r->b, api);
    mp_key(&r->b, "thread");
    mp_array(&r->b, 2);
    mp_uint(&r->b, (uint64_t)getpid());
    mp_uint(&r->b, (uint64_t)vn_tid());
    mp_key(&r->b, "reply");
    r->reply_at = r->b.len;
    mp_bool(&r->b, 1);
    mp_key(&r->b, "args");
    mp_map(&r->b, nargs);
}

void vn_reply_free(vn_reply *r)
{
    mp_tree_free(&r->tree);
    r->root = r->result = NULL;
}

const mp_obj *vn_out(const vn_reply *r, const char *name) { return mp_get(r->result, name); }

int vn_ready(const char *api)
{
    if (vn_current) return 0;
    if (strcmp(api, "aclFinalize") == 0) return vn_fail(100037, api, "aclFinalize without a matching aclInit");
    return vn_fail(100001, api, "no vnpu session: call aclInit first");
}

static int broken_code(vn_session *s, const char *api)
{
    return vn_fail_transport(api, "%s", s->broken ? s->broken : "the connection to the daemon closed");
}

void *vn_stream_state_before(const char *api, int has_stream, uint64_t stream);
void vn_stream_state_after(void *watch, int code, const mp_obj *result);
static int call(vn_req *r, vn_reply *out);

int vn_call(vn_req *r, vn_reply *out)
{
    const char *api = r->api;
    void *watch = vn_stream_state_before(api, r->has_stream, r->stream);
    if (!watch) return call(r, out);
    vn_reply local;
    vn_reply *reply = out ? out : &local;
    int code = call(r, reply);
    vn_stream_state_after(watch, code, code ? NULL : reply->result);
    if (!out && !code && reply->root) vn_reply_free(reply);
    return code;
}

int vn_answered_before_init(const char *api); /* generated from proto.calltable.BEFORE_INIT */
static int before_init(vn_req *r, vn_reply *out);

static int call(vn_req *r, vn_reply *out)
{
    vn_session *s = vn_current;
    if (out) memset(out, 0, sizeof(*out));
    if (!s && vn_answered_before_init(r->api)) return before_init(r, out);
    if (!s) {
        mp_free(&r->b);
        return vn_ready(r->api);
    }
    int wait = r->wait || s->launch_blocking;
    r->b.data[r->reply_at] = wait ? (char)0xc3 : (char)0xc2;
    if (s->broken) {
        mp_free(&r->b);
        return broken_code(s, r->api);
    }
    if (r->has_stream && wait && strcmp(r->api, "aclrtSynchronizeStream") == 0 && idle_finished(s, r->stream)) {
        mp_free(&r->b);
        return settle_earlier(s);
    }
    vn_slot slot = {0};
    pthread_mutex_lock(&s->numbering);
    pthread_mutex_lock(&s->lock);
    uint64_t ident = ++s->next_id;
    s->last_id = ident;
    for (int i = 0; i < 8; i++) r->b.data[r->id_at + 1 + i] = (char)(ident >> (8 * (7 - i)));
    if (wait) {
        slot.id = ident, slot.tid = vn_tid();
        pthread_cond_init(&slot.cond, NULL);
        slot.next = s->waiting;
        s->waiting = &slot;
    } else {
        vn_thread *t = vn_self();
        if (!s->places) s->places = calloc(PLACES, sizeof(vn_place));
        if (s->places) s->places[ident % PLACES] = (vn_place){ident, t->api, t->ordinal};
    }
    mp_raw(&s->pending, r->b.data, r->b.len);
    s->pending_calls++;
    int full = s->pending_calls >= MAX_CALLS || s->pending.len >= MAX_BYTES;
    if (!wait && s->pending_calls == 1) {
        if (!s->flusher_started) {
            s->flusher_started = 1;
            pthread_create(&s->flusher, NULL, flusher, s);
        }
        pthread_cond_signal(&s->flush_cond);
    }
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&s->numbering);
    mp_free(&r->b);
    if (wait || full) {
        if (outbox_now(s) != 0 && wait) {
            pthread_mutex_lock(&s->lock);
            for (vn_slot **link = &s->waiting; *link; link = &(*link)->next)
                if (*link == &slot) {
                    *link = slot.next;
                    break;
                }
            pthread_mutex_unlock(&s->lock);
            pthread_cond_destroy(&slot.cond);
            end_connection(s, "cannot send to the daemon: the connection broke");
            return broken_code(s, r->api);
        }
    }
    if (!wait) return 0;
    pthread_mutex_lock(&s->lock);
    while (!slot.done && !s->broken) pthread_cond_wait(&slot.cond, &s->lock);
    if (!slot.done) {
        for (vn_slot **link = &s->waiting; *link; link = &(*link)->next)
            if (*link == &slot) {
                *link = slot.next;
                break;
            }
    }
    pthread_mutex_unlock(&s->lock);
    pthread_cond_destroy(&slot.cond);
    if (!slot.done) return broken_code(s, r->api);
    write_printed(mp_get(slot.root, "printed"));
    int earlier = settle_earlier(s);
    const mp_obj *error = mp_get(slot.root, "error");
    if (earlier || error) {
        int code = earlier;
        if (!earlier) {
            char *api = mp_strdup(mp_get(error, "api")), *message = located(mp_strdup(mp_get(error, "message")));
            vn_report_task(mp_get(error, "task"));
            code = keep_error((int)mp_i64(mp_get(error, "code")), *api ? api : r->api, message);
            free(api);
            free(message);
        }
        mp_tree_free(&slot.tree);
        return code;
    }
    if (out) {
        out->tree = slot.tree, out->root = slot.root, out->result = mp_get(slot.root, "result");
    } else mp_tree_free(&slot.tree);
    return 0;
}

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
    outbox_reset(s);
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
    pthread_create(&s->reader, NULL, reader, s);
    *made = s;
    return 0;
}

static void close_session(vn_session *s)
{
    outbox_now(s);
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
    if (s && !s->broken) outbox_now(s);
}

int vn_init(const char *config_path)
{
    pthread_mutex_lock(&init_lock);
    if (!vn_current) {
        vn_config config;
        int code = vn_load_config(config_path, &config);
        if (code == 0) code = vn_start_embedded(&config);
        vn_session *s = NULL;
        if (code == 0) code = open_session(&config, &s);
        vn_free_config(&config);
        if (code) {
            pthread_mutex_unlock(&init_lock);
            return code;
        }
        vn_current = s;
        static int registered = 0;
        if (!registered) registered = 1, atexit(flush_at_exit);
    }
    pthread_mutex_unlock(&init_lock);
    vn_req r;
    vn_req_begin(&r, "aclInit", 1, 0);
    mp_key(&r.b, "configPath");
    if (config_path) mp_str(&r.b, config_path);
    else mp_nil(&r.b);
    int code = vn_call(&r, NULL);
    if (code == 0) {
        pthread_mutex_lock(&init_lock);
        init_count++;
        pthread_mutex_unlock(&init_lock);
    }
    return code;
}

/* A call the runtime answers before aclInit (torch.npu.is_available() asks the device count first): through a
 * session of its own, closed after, as the Python client does. */
static int before_init(vn_req *r, vn_reply *out)
{
    pthread_mutex_lock(&init_lock);
    if (vn_current) {
        pthread_mutex_unlock(&init_lock);
        return call(r, out);
    }
    vn_config config;
    int code = vn_load_config(NULL, &config);
    if (code == 0) code = vn_start_embedded(&config);
    vn_session *s = NULL;
    if (code == 0) code = open_session(&config, &s);
    vn_free_config(&config);
    if (code) {
        pthread_mutex_unlock(&init_lock);
        mp_free(&r->b);
        return code;
    }
    vn_current = s;
    code = call(r, out);
    vn_current = NULL;
    close_session(s);
    pthread_mutex_unlock(&init_lock);
    return code;
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
