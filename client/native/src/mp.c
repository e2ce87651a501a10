/* msgpack: the subset vnpu's envelopes use (see core.h for why it is vnpu's own). */
#include <stdlib.h>
#include <string.h>

#include "core.h"

void mp_init(mp_buf *b) { b->data = NULL, b->len = b->cap = 0; }
void mp_free(mp_buf *b)
{
    free(b->data);
    mp_init(b);
}

static void reserve(mp_buf *b, size_t n)
{
    if (b->len + n <= b->cap) return;
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + n) cap *= 2;
    char *grown = realloc(b->data, cap);
    if (!grown) abort(); /* out of memory: nothing sensible to answer */
    b->data = grown, b->cap = cap;
}

void mp_raw(mp_buf *b, const void *data, size_t n)
{
    reserve(b, n);
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

static void put1(mp_buf *b, uint8_t v) { mp_raw(b, &v, 1); }
static void putn(mp_buf *b, uint8_t tag, uint64_t v, int bytes)
{
    uint8_t out[9];
    out[0] = tag;
    for (int i = 0; i < bytes; i++) out[1 + i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
    mp_raw(b, out, 1 + bytes);
}

static void header(mp_buf *b, uint32_t n, uint8_t fix, uint32_t fixmax, uint8_t t16, uint8_t t32)
{
    if (n <= fixmax) put1(b, (uint8_t)(fix | n));
    else if (n <= 0xffff) putn(b, t16, n, 2);
    else putn(b, t32, n, 4);
}

void mp_map(mp_buf *b, uint32_t n) { header(b, n, 0x80, 15, 0xde, 0xdf); }
void mp_array(mp_buf *b, uint32_t n) { header(b, n, 0x90, 15, 0xdc, 0xdd); }
void mp_strn(mp_buf *b, const char *s, size_t n)
{
    if (n <= 31) put1(b, (uint8_t)(0xa0 | n));
    else if (n <= 0xff) putn(b, 0xd9, n, 1);
    else if (n <= 0xffff) putn(b, 0xda, n, 2);
    else putn(b, 0xdb, n, 4);
    mp_raw(b, s, n);
}
void mp_str(mp_buf *b, const char *s) { mp_strn(b, s, strlen(s)); }
void mp_key(mp_buf *b, const char *key) { mp_strn(b, key, strlen(key)); }
void mp_bin(mp_buf *b, const void *data, size_t n)
{
    if (n <= 0xff) putn(b, 0xc4, n, 1);
    else if (n <= 0xffff) putn(b, 0xc5, n, 2);
    else putn(b, 0xc6, n, 4);
    if (n) mp_raw(b, data, n);
}
void mp_uint(mp_buf *b, uint64_t v)
{
    if (v <= 0x7f) put1(b, (uint8_t)v);
    else if (v <= 0xff) putn(b, 0xcc, v, 1);
    else if (v <= 0xffff) putn(b, 0xcd, v, 2);
    else if (v <= 0xffffffffu) putn(b, 0xce, v, 4);
    else putn(b, 0xcf, v, 8);
}
void mp_u64(mp_buf *b, uint64_t v) { putn(b, 0xcf, v, 8); }
void mp_int(mp_buf *b, int64_t v)
{
    if (v >= 0) return mp_uint(b, (uint64_t)v);
    if (v >= -32) put1(b, (uint8_t)(int8_t)v);
    else if (v >= -128) putn(b, 0xd0, (uint64_t)v & 0xff, 1);
    else if (v >= -32768) putn(b, 0xd1, (uint64_t)v & 0xffff, 2);
    else if (v >= -2147483648LL) putn(b, 0xd2, (uint64_t)v & 0xffffffffu, 4);
    else putn(b, 0xd3, (uint64_t)v, 8);
}
void mp_nil(mp_buf *b) { put1(b, 0xc0); }
void mp_bool(mp_buf *b, int v) { put1(b, v ? 0xc3 : 0xc2); }
void mp_double(mp_buf *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    putn(b, 0xcb, bits, 8);
}

/* ---- decoding ----------------------------------------------------------------------------------------------- */
struct mp_chunk {
    mp_chunk *next;
    size_t used, cap;
    mp_obj objs[];
};

static mp_obj *alloc_objs(mp_tree *t, size_t n)
{
    mp_chunk *c = t->chunks;
    if (!c || c->used + n > c->cap) {
        size_t cap = n > 64 ? n : 64;
        c = malloc(sizeof(mp_chunk) + cap * sizeof(mp_obj));
        if (!c) return NULL;
        c->next = t->chunks, c->used = 0, c->cap = cap;
        t->chunks = c;
    }
    mp_obj *o = c->objs + c->used;
    c->used += n;
    return o;
}

typedef struct {
    const uint8_t *p, *end;
    mp_tree *t;
    int depth;
} reader;

static int need(reader *r, size_t n) { return (size_t)(r->end - r->p) >= n; }
static uint64_t be(reader *r, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | r->p[i];
    r->p += n;
    return v;
}

static int parse(reader *r, mp_obj *o);

static int container(reader *r, mp_obj *o, mp_type type, uint64_t n)
{
    uint64_t items = type == MP_MAP ? 2 * n : n;
    if (items > (uint64_t)(r->end - r->p) || ++r->depth > 64) return -1; /* each item takes >= 1 byte */
    o->type = type, o->n = (uint32_t)n;
    o->v.items = items ? alloc_objs(r->t, items) : NULL;
    if (items && !o->v.items) return -1;
    for (uint64_t i = 0; i < items; i++)
        if (parse(r, &o->v.items[i])) return -1;
    r->depth--;
    return 0;
}

static int bytes(reader *r, mp_obj *o, mp_type type, uint64_t n)
{
    if (!need(r, n)) return -1;
    o->type = type, o->n = (uint32_t)n, o->v.s = (const char *)r->p;
    r->p += n;
    return 0;
}

static int parse(reader *r, mp_obj *o)
{
    if (!need(r, 1)) return -1;
    uint8_t tag = *r->p++;
    if (tag <= 0x7f) return o->type = MP_UINT, o->v.u = tag, 0;
    if (tag >= 0xe0) return o->type = MP_INT, o->v.i = (int8_t)tag, 0;
    if ((tag & 0xf0) == 0x80) return container(r, o, MP_MAP, tag & 0x0f);
    if ((tag & 0xf0) == 0x90) return container(r, o, MP_ARRAY, tag & 0x0f);
    if ((tag & 0xe0) == 0xa0) return bytes(r, o, MP_STR, tag & 0x1f);
    static const int widths[] = {1, 2, 4, 8};
    switch (tag) {
    case 0xc0: return o->type = MP_NIL, 0;
    case 0xc2: case 0xc3: return o->type = MP_BOOL, o->v.b = tag == 0xc3, 0;
    case 0xc4: case 0xc5: case 0xc6: {
        int w = widths[tag - 0xc4];
        if (!need(r, w)) return -1;
        return bytes(r, o, MP_BIN, be(r, w));
    }
    case 0xca: case 0xcb: {
        int w = tag == 0xca ? 4 : 8;
        if (!need(r, w)) return -1;
        uint64_t bits = be(r, w);
        if (w == 4) {
            uint32_t b32 = (uint32_t)bits;
            float f;
            memcpy(&f, &b32, 4);
            o->v.f = f;
        } else memcpy(&o->v.f, &bits, 8);
        return o->type = MP_FLOAT, 0;
    }
    case 0xcc: case 0xcd: case 0xce: case 0xcf: {
        int w = widths[tag - 0xcc];
        if (!need(r, w)) return -1;
        return o->type = MP_UINT, o->v.u = be(r, w), 0;
    }
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        int w = widths[tag - 0xd0];
        if (!need(r, w)) return -1;
        uint64_t u = be(r, w);
        int shift = 64 - 8 * w;
        o->v.i = (int64_t)(u << shift) >> shift;
        if (o->v.i >= 0) return o->type = MP_UINT, o->v.u = (uint64_t)o->v.i, 0;
        return o->type = MP_INT, 0;
    }
    case 0xd9: case 0xda: case 0xdb: {
        int w = widths[tag - 0xd9];
        if (!need(r, w)) return -1;
        return bytes(r, o, MP_STR, be(r, w));
    }
    case 0xdc: case 0xdd: {
        int w = tag == 0xdc ? 2 : 4;
        if (!need(r, w)) return -1;
        return container(r, o, MP_ARRAY, be(r, w));
    }
    case 0xde: case 0xdf: {
        int w = tag == 0xde ? 2 : 4;
        if (!need(r, w)) return -1;
        return container(r, o, MP_MAP, be(r, w));
    }
    default: return -1; /* ext types: vnpu sends none */
    }
}

const mp_obj *mp_parse(mp_tree *t, char *data, size_t len)
{
    t->chunks = NULL, t->message = data;
    mp_obj *root = alloc_objs(t, 1);
    reader r = {(const uint8_t *)data, (const uint8_t *)data + len, t, 0};
    if (!root || parse(&r, root)) return NULL;
    return root;
}

void mp_tree_free(mp_tree *t)
{
    for (mp_chunk *c = t->chunks, *next; c; c = next) next = c->next, free(c);
    free(t->message);
    t->chunks = NULL, t->message = NULL;
}

int mp_is(const mp_obj *o, const char *s)
{
    size_t n = strlen(s);
    return o && o->type == MP_STR && o->n == n && memcmp(o->v.s, s, n) == 0;
}

const mp_obj *mp_get(const mp_obj *map, const char *key)
{
    if (!map || map->type != MP_MAP) return NULL;
    for (uint32_t i = 0; i < map->n; i++)
        if (mp_is(&map->v.items[2 * i], key)) return &map->v.items[2 * i + 1];
    return NULL;
}

int64_t mp_i64(const mp_obj *o)
{
    if (!o) return 0;
    if (o->type == MP_INT || o->type == MP_UINT) return o->v.i;
    if (o->type == MP_BOOL) return o->v.b;
    if (o->type == MP_FLOAT) return (int64_t)o->v.f;
    return 0;
}
uint64_t mp_u64v(const mp_obj *o) { return (uint64_t)mp_i64(o); }
double mp_f64(const mp_obj *o)
{
    if (!o) return 0;
    if (o->type == MP_FLOAT) return o->v.f;
    if (o->type == MP_INT) return (double)o->v.i;
    if (o->type == MP_UINT) return (double)o->v.u;
    return 0;
}
char *mp_strdup(const mp_obj *o)
{
    size_t n = o && (o->type == MP_STR || o->type == MP_BIN) ? o->n : 0;
    char *s = malloc(n + 1);
    if (!s) return NULL;
    if (n) memcpy(s, o->v.s, n);
    s[n] = 0;
    return s;
}
