/* Pipelining: calls that only queue work wait in the outbox and leave as one frame (a msgpack array of
 * envelopes) with the next waiting call, when 128 are pending or 256 KiB, or 0.5 ms after the first (the flusher
 * thread). An error one causes comes back naming its request id and thread (`vn_pipelined_error`, from the
 * reader), and is returned by the same thread's next waiting call (`vn_settle_earlier`), with which of the thread's
 * calls of that function it was -- the text the Python client gives; a use-after-free names where the program
 * freed the block (`vn_note_free`, `vn_located`). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "session.h"

#define FLUSH_DELAY_NS 500000
#define KEPT_FAILURES 16 /* pipelined failures of a thread kept whole until its next wait; the rest are counted */
#define FREES_KEPT 4096 /* aclrtFree calls whose place a later use-after-free message names */

/* ---- the outbox ---------------------------------------------------------------------------------------------- */
void vn_outbox_reset(vn_session *s)
{
    s->pending.len = ARRAY_HEAD;
    s->pending_calls = 0;
}

/* Send what is pending, as one frame (the caller holds neither lock). */
int vn_outbox_now(vn_session *s)
{
    pthread_mutex_lock(&s->sending);
    pthread_mutex_lock(&s->lock);
    mp_buf frame = s->pending;
    uint32_t calls = s->pending_calls;
    mp_init(&s->pending);
    mp_raw(&s->pending, "\0\0\0\0\0", ARRAY_HEAD);
    vn_outbox_reset(s);
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

void *vn_flusher(void *arg)
{
    vn_session *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->pending_calls && !s->closing) pthread_cond_wait(&s->flush_cond, &s->lock);
        if (s->closing) break;
        pthread_mutex_unlock(&s->lock);
        struct timespec delay = {0, FLUSH_DELAY_NS};
        nanosleep(&delay, NULL);
        vn_outbox_now(s);
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
 * aclrtFree" naming where the program freed that block, when it was one of ours (the Python client's `vn_located`). */
char *vn_located(char *message)
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
    vn_place_of(place, sizeof(place), api, ordinal);
    char *out = vn_sprintf_alloc("%.*s (%s)%s", (int)(end - message), message, place, end);
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
    char *message = vn_located(mp_strdup(mp_get(error, "message")));
    char where[160] = "";
    vn_place *p = s->places ? &s->places[ident % PLACES] : NULL;
    if (p && p->id == ident && p->api) {
        char text[140];
        vn_place_of(text, sizeof(text), p->api, p->ordinal);
        snprintf(where, sizeof(where), " (%s)", text);
    }
    char *text = vn_sprintf_alloc("%s%s #%llu failed: %s", api, where, (unsigned long long)ident, message);
    free(message);
    *api_out = api;
    return text;
}

void vn_pipelined_error(vn_session *s, const mp_obj *m)
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
                f->later[f->n_later++] = vn_sprintf_alloc("%s: %s (%d): %s", api, vn_code_name(code), code, text);
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
int vn_settle_earlier(vn_session *s)
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
    if (t->api) vn_place_of(at, sizeof(at), t->api, t->ordinal);
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
    char *message = vn_sprintf_alloc("%s%s%s (raised at %s, the thread's next waiting call; VNPU_LAUNCH_BLOCKING=1 "
                                  "raises it at its own call)",
                                  f->message, more, kept.data, at);
    mp_free(&kept);
    if (f->task) vn_report_task(f->task), mp_tree_free(&f->task_tree); /* before the code is kept as the last */
    int code = vn_keep_error(f->code, f->api, message);
    free(message);
    free(f->message);
    free(f->api);
    free(f);
    return code;
}
