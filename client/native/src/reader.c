/* The reader thread takes every message of the daemon: a reply wakes the caller that waits for it, a pipelined
 * error is kept for its thread (`vn_pipelined_error`), idle news is noted (a synchronize of a stream the daemon
 * said finished costs no round trip: `vn_idle_finished`). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "session.h"

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
int vn_idle_finished(vn_session *s, uint64_t stream)
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
            vn_outbox_now(s);
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
void vn_end_connection(vn_session *s, const char *why)
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
    if (mp_get(m, "error")) vn_pipelined_error(s, m);
    mp_tree_free(&tree);
}

void *vn_reader(void *arg)
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
    vn_end_connection(s, s->closing ? "the session was closed (aclFinalize)" : "the connection to the daemon closed");
    return NULL;
}
