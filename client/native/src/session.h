/* The session's state, shared by session.c, thread.c, pipeline.c, reader.c, call.c, config.c and embedded.c. */
#ifndef VNPU_NATIVE_SESSION_H
#define VNPU_NATIVE_SESSION_H

#include "core.h"

#define IDLE_MAX 256

typedef struct vn_slot {
    struct vn_slot *next;
    uint64_t id;
    long tid;
    pthread_cond_t cond;
    int done;
    mp_tree tree;
    const mp_obj *root;
} vn_slot;

typedef struct {
    uint64_t id;
    const char *api;
    uint32_t ordinal;
} vn_place;

typedef struct failed failed;

typedef struct {
    ws_conn ws;
    pthread_t reader, flusher;
    int flusher_started;
    pthread_mutex_t lock;      /* waiting slots, pipelined errors, the outbox's buffer */
    pthread_mutex_t numbering; /* held from numbering a call until it is in the outbox */
    pthread_mutex_t sending;   /* held while a frame leaves: frames leave in the order of their calls */
    pthread_cond_t flush_cond;
    mp_buf pending;
    uint32_t pending_calls;
    uint64_t next_id, last_id;
    vn_slot *waiting;
    failed *failed;
    vn_place *places;
    char *broken;
    int closing;
    int launch_blocking;
    int local_memory;
    char context[128];
    /* idle news */
    pthread_mutex_t idle_lock;
    pthread_cond_t idle_cond;
    long idle_tid;
    uint64_t idle_upto;
    uint64_t finished[IDLE_MAX], pending_streams[IDLE_MAX];
    size_t n_finished, n_pending;
} vn_session;

typedef struct {
    char *endpoint; /* as the user named it, for messages */
    char *host;
    int port;
    char *uds;
    char *token;
    char *context;
    char *run;
    int launch_blocking;
    int local_memory; /* pinned host memory is the daemon's shared memory mapped here */
    int embedded;
} vn_config;

/* The calling thread (thread.c). */
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

vn_thread *vn_self(void);
void vn_place_of(char *out, size_t n, const char *api, uint32_t number); /* "the 3rd aclnnAdd call of this thread" */
char *vn_sprintf_alloc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vn_keep_error(int code, const char *api, const char *message); /* "api: NAME (code): message", kept; `code` */

/* Pipelining (pipeline.c). */
#define PLACES 16384
#define ARRAY_HEAD 5 /* the outbox's frame starts with room for an array header */
void vn_outbox_reset(vn_session *s);
int vn_outbox_now(vn_session *s); /* send what is pending, as one frame (the caller holds neither lock) */
void *vn_flusher(void *session);
char *vn_located(char *message);
void vn_pipelined_error(vn_session *s, const mp_obj *m);
int vn_settle_earlier(vn_session *s); /* the thread's earlier pipelined failure (0: none) */
void vn_report_task(const mp_obj *task);

/* The reader (reader.c). */
void *vn_reader(void *session);
void vn_end_connection(vn_session *s, const char *why);
int vn_idle_finished(vn_session *s, uint64_t stream);

/* Calls (call.c) and the sessions opened for a call before aclInit (session.c). */
int vn_call_unwatched(vn_req *r, vn_reply *out); /* vn_call without the stream-state watch */
int vn_before_init(vn_req *r, vn_reply *out);

#pragma GCC visibility push(default)
extern vn_session *vn_current;
int vn_load_config(const char *config_path, vn_config *config);
void vn_free_config(vn_config *config);
int vn_start_embedded(vn_config *config);
int vn_init(const char *config_path);
int vn_nn_init(void);     /* aclnnInit: the aclInit the program has not made, at the first call that needs it */
int vn_nn_open(void);     /* that aclInit, when aclnnInit asked for it (-1: it did not) */
int vn_nn_finalize(void); /* aclnnFinalize: the aclFinalize of that aclInit */
int vn_finalize(void);
int vn_last_error(int clear);
long vn_tid(void);
#pragma GCC visibility pop

#endif
