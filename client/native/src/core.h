/* The native toolkit's core: what every library of the toolkit shares (one copy, in libascendcl.so).
 *
 * mp_*     a small msgpack codec: an encoder into a growable buffer, a decoder into a tree in an arena
 * ws_*     a blocking WebSocket client (RFC 6455: handshake, masked frames, ping/pong, close, fragments)
 * vn_*     the session: configuration, the connection, per-thread pipelining and errors, idle news
 *
 * Why a codec and framing of our own, not msgpack-c or libwebsockets: the libraries load into every CANN program,
 * from a fresh shell (env -i); a dependency would have to be on each machine that runs one, and the subset vnpu's
 * envelopes use (maps, arrays, strings, bytes, ints, floats, nil, bool) and a blocking client's framing are ~600
 * lines whose cost is measured in the README (bench figure 14). */
#ifndef VNPU_NATIVE_CORE_H
#define VNPU_NATIVE_CORE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define VN_EXPORT __attribute__((visibility("default")))
#define VN_EXPORT_INTERNAL __attribute__((visibility("default")))

/* the core's functions are seen by the toolkit's other libraries (libnnopbase, libopapi link libascendcl) */
#pragma GCC visibility push(default)

/* ---- msgpack ------------------------------------------------------------------------------------------------ */
typedef struct {
    char *data;
    size_t len, cap;
} mp_buf;

void mp_init(mp_buf *b);
void mp_free(mp_buf *b);
void mp_raw(mp_buf *b, const void *data, size_t n);
void mp_map(mp_buf *b, uint32_t n);
void mp_array(mp_buf *b, uint32_t n);
void mp_str(mp_buf *b, const char *s);
void mp_strn(mp_buf *b, const char *s, size_t n);
void mp_bin(mp_buf *b, const void *data, size_t n);
void mp_uint(mp_buf *b, uint64_t v);
void mp_int(mp_buf *b, int64_t v);
void mp_u64(mp_buf *b, uint64_t v); /* always 9 bytes: a number patched later */
void mp_nil(mp_buf *b);
void mp_bool(mp_buf *b, int v);
void mp_double(mp_buf *b, double v);
void mp_key(mp_buf *b, const char *key); /* a map key: a string */

typedef enum { MP_NIL, MP_BOOL, MP_INT, MP_UINT, MP_FLOAT, MP_STR, MP_BIN, MP_ARRAY, MP_MAP } mp_type;
typedef struct mp_obj {
    mp_type type;
    uint32_t n; /* string/bytes length, array items, map pairs */
    union {
        int64_t i;
        uint64_t u;
        double f;
        int b;
        const char *s; /* strings and bytes point into the message; strings are NOT NUL-terminated */
        struct mp_obj *items; /* array: n items; map: 2n (key, value, key, value...) */
    } v;
} mp_obj;

typedef struct mp_chunk mp_chunk;
typedef struct {
    mp_chunk *chunks;
    char *message; /* the bytes the tree points into (owned) */
} mp_tree;

/* Parse `len` bytes (the tree takes ownership of `data`, a malloc'd block); NULL on malformed input. */
const mp_obj *mp_parse(mp_tree *tree, char *data, size_t len);
void mp_tree_free(mp_tree *tree);
const mp_obj *mp_get(const mp_obj *map, const char *key);
int mp_is(const mp_obj *o, const char *s); /* a string equal to s */
int64_t mp_i64(const mp_obj *o);
uint64_t mp_u64v(const mp_obj *o);
double mp_f64(const mp_obj *o);
char *mp_strdup(const mp_obj *o); /* a NUL-terminated copy of a string (malloc) */

/* ---- WebSocket ---------------------------------------------------------------------------------------------- */
typedef struct {
    int fd;
    pthread_mutex_t send_lock;
    char *in;
    size_t in_len, in_cap;
    int closed;
    uint64_t mask_state;
} ws_conn;

/* Connect to host:port (or the Unix socket `uds`), upgrade `path` (with its query); 0, or -1 with `err` said. */
int ws_open(ws_conn *c, const char *host, int port, const char *uds, const char *path, const char *token, char *err,
            size_t errlen);
int ws_send(ws_conn *c, const void *data, size_t len);       /* one binary message, any thread */
int ws_recv(ws_conn *c, char **message, size_t *len);        /* the next message (malloc'd); -1 when closed */
void ws_close(ws_conn *c);
void ws_shutdown(ws_conn *c); /* wake a reader blocked in ws_recv */

/* ---- the session -------------------------------------------------------------------------------------------- */
typedef struct {
    mp_buf b;       /* the envelope: {"id", "api", "thread", "reply", "args": {...}} */
    const char *api;
    size_t id_at;   /* where the id's 8 bytes go */
    size_t reply_at; /* where the reply flag goes */
    int wait;
    int has_stream; /* the call's stream argument, for a synchronize answered from idle news */
    uint64_t stream;
} vn_req;

typedef struct {
    mp_tree tree;
    const mp_obj *root;
    const mp_obj *result; /* the result map */
} vn_reply;

/* Every exported function starts so: counts the thread's call of `api` (a pipelined error names it by ordinal). */
void vn_enter(const char *api);
int vn_ready(const char *api); /* 0, or the code of a call before aclInit (the message kept) */
void vn_req_begin(vn_req *r, const char *api, uint32_t nargs, int asynchronous);
/* Send; for a waiting call wait for its reply. The ACL code (0 on success; the message kept for
 * aclGetRecentErrMsg). On success with a reply, `out` holds it (vn_reply_free it). */
int vn_call(vn_req *r, vn_reply *out);
void vn_reply_free(vn_reply *r);
const mp_obj *vn_out(const vn_reply *r, const char *name);

/* Errors: keep a message for aclGetRecentErrMsg and return `code`. */
int vn_fail(int code, const char *api, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vn_null_out(const char *api, const char *param);
int vn_fail_transport(const char *api, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int vn_not_implemented(const char *api);
void vn_note_free(uint64_t ptr); /* aclrtFree of `ptr` by this thread's current call: a later message names it */
const char *vn_code_name(int code);
void vn_set_message(char *message); /* takes ownership */
char *vn_take_message(void);

/* What the generated code and the hand-written parts share. */
uint64_t vn_to_daemon(const void *p); /* a program pointer as the daemon names it (pinned host memory mapped here) */
void *vn_from_daemon(uint64_t p);
int vn_push_pinned(void); /* remote host memory: send what the program changed */
int vn_pull_pinned(void); /* remote host memory: read back what the device changed */
const char *vn_context_id(void);
int vn_on_this_machine(void);
/* Whether [p, p + n) lies in mapped memory of the program (mincore): a length a program got wrong is refused
 * with 100000 instead of read past the end of its buffer. */
int vn_readable(const void *p, size_t n);
void *vn_managed_block(const void *block, size_t n); /* pinned.c: a launch's block with managed pointers translated */

#pragma GCC visibility pop
#endif
