/* Calls: an envelope {id, api, thread, reply, args} begun by `vn_req_begin`, numbered and put in the outbox by
 * `vn_call`; a waiting call sends the outbox and waits for its reply, then returns the thread's earlier pipelined
 * failure, if any, before its own answer. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "session.h"

#define MAX_CALLS 128
#define MAX_BYTES (256 << 10)

/* What the call's kernels printed (kernel printf), on the program's stdout. */
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
    int opened = vn_nn_open(); /* after aclnnInit alone */
    if (opened >= 0) return opened;
    if (strcmp(api, "aclFinalize") == 0) return vn_fail(100037, api, "aclFinalize without a matching aclInit");
    return vn_fail(100001, api, "no vnpu session: call aclInit first");
}

static int broken_code(vn_session *s, const char *api)
{
    return vn_fail_transport(api, "%s", s->broken ? s->broken : "the connection to the daemon closed");
}

void *vn_stream_state_before(const char *api, int has_stream, uint64_t stream);
void vn_stream_state_after(void *watch, int code, const mp_obj *result);

int vn_call(vn_req *r, vn_reply *out)
{
    const char *api = r->api;
    void *watch = vn_stream_state_before(api, r->has_stream, r->stream);
    if (!watch) return vn_call_unwatched(r, out);
    vn_reply local;
    vn_reply *reply = out ? out : &local;
    int code = vn_call_unwatched(r, reply);
    vn_stream_state_after(watch, code, code ? NULL : reply->result);
    if (!out && !code && reply->root) vn_reply_free(reply);
    return code;
}

int vn_answered_before_init(const char *api); /* generated from proto.calltable.BEFORE_INIT */

int vn_call_unwatched(vn_req *r, vn_reply *out)
{
    vn_session *s = vn_current;
    if (out) memset(out, 0, sizeof(*out));
    if (!s && vn_answered_before_init(r->api)) return vn_before_init(r, out);
    if (!s) {
        int code = vn_ready(r->api); /* 0: aclnnInit's aclInit has just opened the session */
        if (code) {
            mp_free(&r->b);
            return code;
        }
        s = vn_current;
    }
    int wait = r->wait || s->launch_blocking;
    r->b.data[r->reply_at] = wait ? (char)0xc3 : (char)0xc2;
    if (s->broken) {
        mp_free(&r->b);
        return broken_code(s, r->api);
    }
    if (r->has_stream && wait && strcmp(r->api, "aclrtSynchronizeStream") == 0 && vn_idle_finished(s, r->stream)) {
        mp_free(&r->b);
        return vn_settle_earlier(s);
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
            pthread_create(&s->flusher, NULL, vn_flusher, s);
        }
        pthread_cond_signal(&s->flush_cond);
    }
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&s->numbering);
    mp_free(&r->b);
    if (wait || full) {
        if (vn_outbox_now(s) != 0 && wait) {
            pthread_mutex_lock(&s->lock);
            for (vn_slot **link = &s->waiting; *link; link = &(*link)->next)
                if (*link == &slot) {
                    *link = slot.next;
                    break;
                }
            pthread_mutex_unlock(&s->lock);
            pthread_cond_destroy(&slot.cond);
            vn_end_connection(s, "cannot send to the daemon: the connection broke");
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
    int earlier = vn_settle_earlier(s);
    const mp_obj *error = mp_get(slot.root, "error");
    if (earlier || error) {
        int code = earlier;
        if (!earlier) {
            char *api = mp_strdup(mp_get(error, "api")), *message = vn_located(mp_strdup(mp_get(error, "message")));
            vn_report_task(mp_get(error, "task"));
            code = vn_keep_error((int)mp_i64(mp_get(error, "code")), *api ? api : r->api, message);
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
