/* The aclnn operators' two phases, over the host objects of hostobj.c and hostlist.c.
 *
 * Phase 1 runs the operator's rules once, in the daemon (`vnpuWorkspaceSize`, proto.aclnn's declarations): the
 * client builds the kernel description, asks, and remembers the answer -- the workspace size, or the error --
 * under the description with its addresses left out (operator, shapes, strides, offsets, dtypes, formats,
 * scalars, attributes), so an eager loop pays one round trip per shape, not per launch. Addresses do matter to one
 * check, the partial overlap of an output with an input: the key keeps, per group of tensors whose byte ranges
 * meet, their offsets from the group's first byte, and nothing of where the groups lie. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostobj.h"

/* ---- phase 1 -------------------------------------------------------------------------------------------------- */
static void tensor_range(const vn_tensor *t, uint64_t *first, uint64_t *count)
{
    int64_t numel = 1, last = 0;
    for (uint64_t i = 0; i < t->ndim; i++) numel *= t->dims[i], last += (t->dims[i] - 1) * t->strides[i];
    int size = vn_itemsize(t->dtype);
    *first = vn_to_daemon(t->data) + (uint64_t)t->offset * (uint64_t)size;
    *count = numel ? (uint64_t)(last + 1) * (uint64_t)size : 0;
}

/* `data` as the key says it: 0 for NULL, else (group + 1) << 48 | offset from the group's first byte. */
static void group_tensors(vn_tensor **tensors, int n, uint64_t *keyed)
{
    uint64_t *first = calloc((size_t)n + 1, sizeof(uint64_t)), *count = calloc((size_t)n + 1, sizeof(uint64_t));
    int *group = calloc((size_t)n + 1, sizeof(int));
    for (int i = 0; i < n; i++) {
        group[i] = i;
        if (tensors[i]) tensor_range(tensors[i], &first[i], &count[i]);
    }
    for (int i = 0; i < n; i++) /* tensors whose ranges meet share a group (a union, small n) */
        for (int j = i + 1; j < n; j++) {
            if (!tensors[i] || !tensors[j] || !tensors[i]->data || !tensors[j]->data || !count[i] || !count[j]) continue;
            if (first[i] < first[j] + count[j] && first[j] < first[i] + count[i]) {
                int gi = group[i], gj = group[j];
                for (int k = 0; k < n; k++)
                    if (group[k] == gj) group[k] = gi;
            }
        }
    for (int i = 0; i < n; i++) {
        keyed[i] = 0;
        if (!tensors[i] || !tensors[i]->data) continue;
        uint64_t base = first[i];
        for (int k = 0; k < n; k++)
            if (tensors[k] && tensors[k]->data && group[k] == group[i] && first[k] < base) base = first[k];
        uint64_t data = vn_to_daemon(tensors[i]->data);
        keyed[i] = (uint64_t)(group[i] + 1) << 48 | (data - base);
    }
    free(first), free(count), free(group);
}

static void put_ints(mp_buf *b, const int64_t *v, uint64_t n)
{
    mp_array(b, (uint32_t)n);
    for (uint64_t i = 0; i < n; i++) mp_int(b, v[i]);
}

static void put_tensor(mp_buf *b, const vn_tensor *t, uint64_t data)
{
    mp_map(b, 7);
    mp_key(b, "view_dims"), put_ints(b, t->dims, t->ndim);
    mp_key(b, "data_type"), mp_int(b, t->dtype);
    mp_key(b, "strides"), put_ints(b, t->strides, t->ndim);
    mp_key(b, "offset"), mp_int(b, t->offset);
    mp_key(b, "format"), mp_int(b, t->format);
    mp_key(b, "storage_dims"), put_ints(b, t->storage, t->nstorage);
    mp_key(b, "data"), mp_uint(b, data);
}

/* a double as the Python client's wire form has it: non-finite values named ("nan", "inf", "-inf") */
static void put_number(mp_buf *b, double v)
{
    if (isnan(v)) mp_str(b, "nan");
    else if (isinf(v)) mp_str(b, v > 0 ? "inf" : "-inf");
    else mp_double(b, v);
}

static void put_scalar(mp_buf *b, const vn_scalar *s)
{
    if (!s) {
        mp_nil(b);
        return;
    }
    mp_map(b, 2);
    mp_key(b, "value");
    if (s->is_bool) mp_bool(b, (int)s->i);
    else if (s->is_float) put_number(b, s->f);
    else if (s->dtype == 10) mp_uint(b, (uint64_t)s->i);
    else mp_int(b, s->i);
    mp_key(b, "data_type"), mp_int(b, s->dtype);
}

/* the arguments' map; `data[t]` is the address the t-th tensor (list members included, in order) is sent with */
/* An operator's arguments as the daemon reads them; `sizes_only`: each int array as that many zeros (what
 * aclnn<Op>GetMaxWorkspaceSize checks: CANN's op_api replaces the sequence lengths by tensors of their size alone). */
static void put_args(mp_buf *b, const vn_op *op, const vn_opval *values, void **objs, const uint64_t *data,
                     int sizes_only)
{
    int t = 0;
    mp_map(b, (uint32_t)op->nargs);
    for (int i = 0; i < op->nargs; i++) {
        mp_key(b, op->args[i].name);
        vn_kind k = op->args[i].kind;
        if (!objs[i] && (k <= VN_INT_ARRAY || k >= VN_TENSOR_LIST)) {
            mp_nil(b);
            continue;
        }
        switch (k) {
        case VN_TENSOR: case VN_OUT: case VN_INPLACE: put_tensor(b, objs[i], data[t++]); break;
        case VN_SCALAR: put_scalar(b, objs[i]); break;
        case VN_INT_ARRAY: {
            vn_int_array *a = objs[i];
            if (sizes_only) {
                mp_array(b, (uint32_t)a->n);
                for (uint64_t j = 0; j < a->n; j++) mp_int(b, 0);
            } else {
                put_ints(b, a->values, a->n);
            }
            break;
        }
        case VN_TENSOR_LIST: case VN_OUT_LIST: case VN_INPLACE_LIST: case VN_SCALAR_LIST: {
            vn_list *l = objs[i];
            mp_array(b, (uint32_t)l->n);
            for (uint64_t j = 0; j < l->n; j++) {
                if (k == VN_SCALAR_LIST) put_scalar(b, l->items[j]);
                else if (l->items[j]) put_tensor(b, l->items[j], data[t++]);
                else mp_nil(b);
            }
            break;
        }
        case VN_BOOL_ARRAY: case VN_FLOAT_ARRAY: {
            vn_values *a = objs[i];
            mp_array(b, (uint32_t)a->n);
            for (uint64_t j = 0; j < a->n; j++)
                if (k == VN_BOOL_ARRAY) mp_bool(b, a->values[j] != 0);
                else put_number(b, a->values[j]);
            break;
        }
        case VN_BOOL: mp_bool(b, values[i].i != 0); break;
        case VN_INT: case VN_DTYPE: mp_int(b, values[i].i); break;
        case VN_UINT: mp_uint(b, (uint64_t)values[i].i); break;
        case VN_DOUBLE: put_number(b, values[i].d); break;
        case VN_STRING:
            if (values[i].s) mp_str(b, values[i].s);
            else mp_nil(b);
            break;
        }
    }
}

static int object_type(vn_kind k)
{
    switch (k) {
    case VN_TENSOR: case VN_OUT: case VN_INPLACE: return OBJ_TENSOR;
    case VN_SCALAR: return OBJ_SCALAR;
    case VN_INT_ARRAY: return OBJ_INT_ARRAY;
    case VN_TENSOR_LIST: case VN_OUT_LIST: case VN_INPLACE_LIST: return OBJ_TENSOR_LIST;
    case VN_SCALAR_LIST: return OBJ_SCALAR_LIST;
    case VN_BOOL_ARRAY: return OBJ_BOOL_ARRAY;
    case VN_FLOAT_ARRAY: return OBJ_FLOAT_ARRAY;
    default: return 0;
    }
}

/* The remembered answers: key bytes -> workspace size, or the error. */
typedef struct answer {
    struct answer *next;
    uint64_t hash;
    size_t len;
    char *key;
    uint64_t size;
    int code;
    char *api, *message;
} answer;
#define ANSWERS 1024
#define ANSWERS_MAX 4096
static answer *answers[ANSWERS];
static size_t answers_n;
static pthread_mutex_t answers_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t fnv(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
    return h;
}

static void forget_answers(void)
{
    for (size_t i = 0; i < ANSWERS; i++)
        for (answer *a = answers[i], *next; a; a = next) next = a->next, free(a->key), free(a->api), free(a->message), free(a);
    memset(answers, 0, sizeof(answers));
    answers_n = 0;
}

static uint64_t phase1_round_trips; /* for the tests: how often phase 1 asked the daemon */
VN_EXPORT uint64_t vnpuPhase1RoundTrips(void) { return phase1_round_trips; }

static int phase1(const vn_op *op, const char *api, int sizes_only, const vn_opval *values, uint64_t *workspace_size,
                  void **executor)
{
    vn_enter(api);
    if (!workspace_size || !executor)
        return vn_fail(161001, api, "%s is NULL: it must point to where the result goes",
                       !workspace_size ? "workspaceSize" : "executor");
    int ready = vn_ready(api);
    if (ready) return ready;
    void *objs[64] = {0};
    if (op->nargs > 64) return vn_fail(161002, api, "too many arguments");
    size_t ntensors = 0;
    for (int i = 0; i < op->nargs; i++) {
        vn_kind k = op->args[i].kind;
        int type = object_type(k);
        if (type && vn_obj_get(values[i].handle, type, op->args[i].name, api, 161002, &objs[i])) return 161002;
        if (type == OBJ_TENSOR) ntensors++;
        else if (type == OBJ_TENSOR_LIST && objs[i]) ntensors += ((vn_list *)objs[i])->n;
    }
    if (ntensors > 4096) return vn_fail(161002, api, "%zu tensors: at most 4096 are supported", ntensors);
    vn_tensor **tensors = calloc(ntensors + 1, sizeof(*tensors));
    uint64_t *key_data = calloc(ntensors + 1, sizeof(uint64_t)), *desc_data = calloc(ntensors + 1, sizeof(uint64_t));
    size_t t = 0;
    for (int i = 0; i < op->nargs; i++) {
        int type = object_type(op->args[i].kind);
        if (type == OBJ_TENSOR && objs[i]) tensors[t++] = objs[i];
        else if (type == OBJ_TENSOR_LIST && objs[i])
            for (uint64_t j = 0; j < ((vn_list *)objs[i])->n; j++)
                if (((vn_list *)objs[i])->items[j]) tensors[t++] = ((vn_list *)objs[i])->items[j];
    }
    group_tensors(tensors, (int)t, key_data);
    for (size_t i = 0; i < t; i++) desc_data[i] = vn_to_daemon(tensors[i]->data);
    free(tensors);
    mp_buf key;
    mp_init(&key);
    mp_str(&key, op->name);
    put_args(&key, op, values, objs, key_data, sizes_only);
    uint64_t hash = fnv(key.data, key.len);
    uint64_t size = 0;
    int code = -1;
    pthread_mutex_lock(&answers_lock);
    for (answer *a = answers[hash % ANSWERS]; a; a = a->next)
        if (a->hash == hash && a->len == key.len && memcmp(a->key, key.data, key.len) == 0) {
            size = a->size, code = a->code;
            if (code) vn_fail(code, a->api, "%s", a->message);
            break;
        }
    pthread_mutex_unlock(&answers_lock);
    mp_buf args, checked;
    mp_init(&args);
    put_args(&args, op, values, objs, desc_data, 0);
    mp_init(&checked);
    if (sizes_only) put_args(&checked, op, values, objs, desc_data, 1);
    free(key_data), free(desc_data);
    if (code < 0) { /* ask the daemon: the one set of operator rules */
        const mp_buf *asked = sizes_only ? &checked : &args;
        vn_req r;
        vn_req_begin(&r, "vnpuWorkspaceSize", 2, 0);
        mp_key(&r.b, "op"), mp_str(&r.b, op->name);
        mp_key(&r.b, "args"), mp_raw(&r.b, asked->data, asked->len);
        vn_reply reply;
        __atomic_add_fetch(&phase1_round_trips, 1, __ATOMIC_RELAXED);
        code = vn_call(&r, &reply);
        if (code == 0) size = mp_u64v(vn_out(&reply, "workspaceSize")), vn_reply_free(&reply);
        if (code == 0 || (code >= 161000 && code < 162000)) { /* an answer of the rules: remembered */
            answer *a = calloc(1, sizeof(*a));
            a->hash = hash, a->len = key.len, a->key = key.data, a->size = size, a->code = code;
            mp_init(&key);
            if (code) {
                /* the message kept is "api: NAME (code): text": keep the text to say it again */
                char *kept = vn_take_message();
                const char *text = kept ? strstr(kept, "): ") : NULL;
                a->api = strdup(api);
                a->message = strdup(text ? text + 3 : kept ? kept : "");
                vn_fail(code, api, "%s", a->message);
            }
            pthread_mutex_lock(&answers_lock);
            if (answers_n >= ANSWERS_MAX) forget_answers();
            a->next = answers[hash % ANSWERS];
            answers[hash % ANSWERS] = a;
            answers_n++;
            pthread_mutex_unlock(&answers_lock);
        }
    }
    mp_free(&key);
    mp_free(&checked);
    if (code) {
        mp_free(&args);
        return code;
    }
    vn_executor *e = calloc(1, sizeof(*e));
    e->h.type = OBJ_EXECUTOR, e->op = op;
    mp_init(&e->desc);
    mp_map(&e->desc, 3);
    mp_key(&e->desc, "op"), mp_str(&e->desc, op->name);
    mp_key(&e->desc, "args"), mp_raw(&e->desc, args.data, args.len);
    mp_key(&e->desc, "workspace_size"), mp_uint(&e->desc, size);
    mp_free(&args);
    *workspace_size = size;
    *executor = vn_obj_put(e);
    return 0;
}

int vn_phase1(const vn_op *op, const vn_opval *values, uint64_t *workspace_size, void **executor)
{
    return phase1(op, op->ws_name, 0, values, workspace_size, executor);
}

int vn_phase1_max(const vn_op *op, const char *api, const vn_opval *values, uint64_t *workspace_size, void **executor)
{
    return phase1(op, api, 1, values, workspace_size, executor);
}

/* ---- phase 2 -------------------------------------------------------------------------------------------------- */
int vn_phase2(const vn_op *op, void *workspace, uint64_t workspace_size, void *executor, void *stream)
{
    const char *api = op->c_name;
    vn_enter(api);
    vn_executor *e;
    if (vn_obj_get(executor, OBJ_EXECUTOR, "executor", api, 161002, (void **)&e)) return 161002;
    if (!e) return vn_fail(161001, api, "executor is NULL");
    vn_req r;
    vn_req_begin(&r, api, 4, 1);
    mp_key(&r.b, "workspace"), mp_uint(&r.b, vn_to_daemon(workspace));
    mp_key(&r.b, "workspaceSize"), mp_uint(&r.b, workspace_size);
    mp_key(&r.b, "executor"), mp_bin(&r.b, e->desc.data, e->desc.len);
    mp_key(&r.b, "stream"), mp_uint(&r.b, (uintptr_t)stream);
    r.has_stream = 1, r.stream = (uintptr_t)stream;
    int code = vn_call(&r, NULL);
    if (!e->repeatable) {
        char why[96];
        snprintf(why, sizeof(why), "was released by its %s call (executors are single-use unless repeatable)", api);
        vn_obj_drop(e, why);
        mp_free(&e->desc);
        free(e);
    }
    return code;
}
