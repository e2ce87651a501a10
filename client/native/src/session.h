/* The session's state, shared by session.c, config.c and embedded.c. */
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

#pragma GCC visibility push(default)
extern vn_session *vn_current;
int vn_load_config(const char *config_path, vn_config *config);
void vn_free_config(vn_config *config);
int vn_start_embedded(vn_config *config);
int vn_init(const char *config_path);
int vn_finalize(void);
int vn_last_error(int clear);
long vn_tid(void);
#pragma GCC visibility pop

#endif
