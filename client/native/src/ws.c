/* A blocking WebSocket client (RFC 6455): the opening handshake (with its Sec-WebSocket-Accept checked), masked
 * binary frames out, ping answered with pong, close answered, fragmented messages joined. One reader thread
 * calls ws_recv; any thread calls ws_send (under a lock). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

/* ---- SHA-1 (FIPS 180-4), for the handshake's accept key only -------------------------------------------------- */
static uint32_t rol(uint32_t x, int n) { return x << n | x >> (32 - n); }

static void sha1(const uint8_t *msg, size_t len, uint8_t out[20])
{
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    size_t total = ((len + 8) / 64 + 1) * 64;
    uint8_t *m = calloc(total, 1);
    if (!m) return;
    memcpy(m, msg, len);
    m[len] = 0x80;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) m[total - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t off = 0; off < total; off += 64) {
        uint32_t w[80];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)m[off + 4 * i] << 24 | (uint32_t)m[off + 4 * i + 1] << 16 |
                   (uint32_t)m[off + 4 * i + 2] << 8 | m[off + 4 * i + 3];
        for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; i++) {
            uint32_t f, k;
            if (i < 20) f = (b & c) | (~b & d), k = 0x5A827999;
            else if (i < 40) f = b ^ c ^ d, k = 0x6ED9EBA1;
            else if (i < 60) f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
            else f = b ^ c ^ d, k = 0xCA62C1D6;
            uint32_t t = rol(a, 5) + f + e + k + w[i];
            e = d, d = c, c = rol(b, 30), b = a, a = t;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
    }
    free(m);
    for (int i = 0; i < 20; i++) out[i] = (uint8_t)(h[i / 4] >> (24 - 8 * (i % 4)));
}

static void base64(const uint8_t *in, size_t n, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
        out[o++] = i + 1 < n ? abc[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? abc[v & 63] : '=';
    }
    out[o] = 0;
}

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* ---- sockets -------------------------------------------------------------------------------------------------- */
static int send_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n, len -= (size_t)n;
    }
    return 0;
}

static int connect_to(const char *host, int port, const char *uds, char *err, size_t errlen)
{
    if (uds) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        if (strlen(uds) >= sizeof(a.sun_path)) {
            snprintf(err, errlen, "the socket path is too long");
            close(fd);
            return -1;
        }
        strcpy(a.sun_path, uds);
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
            snprintf(err, errlen, "%s", strerror(errno));
            close(fd);
            return -1;
        }
        return fd;
    }
    char service[16];
    snprintf(service, sizeof(service), "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *found = NULL;
    int rc = getaddrinfo(host, service, &hints, &found);
    if (rc != 0) {
        snprintf(err, errlen, "%s", gai_strerror(rc));
        return -1;
    }
    int fd = -1, why = 0;
    for (struct addrinfo *a = found; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
        why = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(found);
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(why ? why : ECONNREFUSED));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static ssize_t fill(ws_conn *c)
{
    if (c->in_cap - c->in_len < 65536) {
        size_t cap = c->in_cap ? c->in_cap * 2 : 131072;
        char *grown = realloc(c->in, cap);
        if (!grown) return -1;
        c->in = grown, c->in_cap = cap;
    }
    ssize_t n;
    do n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
    while (n < 0 && errno == EINTR);
    if (n > 0) c->in_len += (size_t)n;
    return n;
}

static void consume(ws_conn *c, size_t n)
{
    memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
}

int ws_open(ws_conn *c, const char *host, int port, const char *uds, const char *path, const char *token, char *err,
            size_t errlen)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->send_lock, NULL);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    c->mask_state = (uint64_t)now.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 32 ^ (uintptr_t)c;
    if (!c->mask_state) c->mask_state = 1;
    c->fd = connect_to(host, port, uds, err, errlen);
    if (c->fd < 0) return -1;
    uint8_t nonce[16];
    for (int i = 0; i < 16; i++) nonce[i] = (uint8_t)next_random(&c->mask_state);
    char key[32], request[2048], auth[600] = "";
    base64(nonce, 16, key);
    if (token && *token) snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", token);
    int n = snprintf(request, sizeof(request),
                     "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n%s\r\n",
                     path, uds ? "localhost" : host, key, auth);
    if (n >= (int)sizeof(request) || send_all(c->fd, request, (size_t)n) != 0) {
        snprintf(err, errlen, "cannot send the WebSocket handshake");
        goto fail;
    }
    char *end = NULL;
    while (!(end = c->in ? memmem(c->in, c->in_len, "\r\n\r\n", 4) : NULL)) {
        if (c->in_len > 65536 || fill(c) <= 0) {
            snprintf(err, errlen, "the daemon closed the connection during the WebSocket handshake");
            goto fail;
        }
    }
    size_t head = (size_t)(end - c->in) + 4;
    int status = 0;
    sscanf(c->in, "HTTP/1.1 %d", &status);
    if (status != 101) {
        /* the daemon's refusal: its JSON body (an error, or 401) follows the head */
        size_t body_len = 0;
        char *cl = memmem(c->in, head, "content-length:", 15);
        if (!cl) cl = memmem(c->in, head, "Content-Length:", 15);
        if (cl) body_len = (size_t)strtoul(cl + 15, NULL, 10);
        while (c->in_len < head + body_len && body_len < 65536 && fill(c) > 0) {}
        size_t have = c->in_len - head < body_len ? c->in_len - head : body_len;
        snprintf(err, errlen, "HTTP %d %.*s", status, (int)have, c->in + head);
        goto fail;
    }
    char accept_key[128], expected[32];
    uint8_t digest[20];
    snprintf(accept_key, sizeof(accept_key), "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    sha1((const uint8_t *)accept_key, strlen(accept_key), digest);
    base64(digest, 20, expected);
    if (!memmem(c->in, head, expected, strlen(expected))) {
        snprintf(err, errlen, "the daemon's WebSocket handshake has a wrong Sec-WebSocket-Accept");
        goto fail;
    }
    consume(c, head);
    return 0;
fail:
    close(c->fd);
    c->fd = -1;
    return -1;
}

static int send_frame(ws_conn *c, uint8_t opcode, const void *data, size_t len)
{
    uint8_t head[14];
    size_t h = 0;
    head[h++] = 0x80 | opcode;
    if (len < 126) head[h++] = 0x80 | (uint8_t)len;
    else if (len <= 0xffff) head[h++] = 0x80 | 126, head[h++] = (uint8_t)(len >> 8), head[h++] = (uint8_t)len;
    else {
        head[h++] = 0x80 | 127;
        for (int i = 7; i >= 0; i--) head[h++] = (uint8_t)(len >> (8 * i));
    }
    uint32_t mask = (uint32_t)next_random(&c->mask_state);
    memcpy(head + h, &mask, 4);
    h += 4;
    /* masked in place in a copy: small messages on the stack, large ones word by word into a heap block */
    char small[4096];
    char *masked = len <= sizeof(small) ? small : malloc(len);
    if (!masked) return -1;
    const uint8_t *src = data;
    uint64_t mask64 = (uint64_t)mask << 32 | mask;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, src + i, 8);
        w ^= mask64;
        memcpy(masked + i, &w, 8);
    }
    const uint8_t *m = (const uint8_t *)&mask;
    for (; i < len; i++) masked[i] = (char)(src[i] ^ m[i & 3]);
    int rc = send_all(c->fd, head, h);
    if (rc == 0 && len) rc = send_all(c->fd, masked, len);
    if (masked != small) free(masked);
    return rc;
}

int ws_send(ws_conn *c, const void *data, size_t len)
{
    pthread_mutex_lock(&c->send_lock);
    int rc = c->closed || c->fd < 0 ? -1 : send_frame(c, 0x2, data, len);
    pthread_mutex_unlock(&c->send_lock);
    return rc;
}

int ws_recv(ws_conn *c, char **message, size_t *message_len)
{
    char *parts = NULL;
    size_t parts_len = 0;
    for (;;) {
        while (c->in_len < 2 || c->in_len < 2 + ((c->in[1] & 0x7f) == 126 ? 2 : (c->in[1] & 0x7f) == 127 ? 8 : 0)) {
            if (fill(c) <= 0) goto closed;
        }
        uint8_t b0 = (uint8_t)c->in[0], b1 = (uint8_t)c->in[1];
        size_t h = 2;
        uint64_t len = b1 & 0x7f;
        if (len == 126) len = (uint64_t)(uint8_t)c->in[2] << 8 | (uint8_t)c->in[3], h = 4;
        else if (len == 127) {
            len = 0;
            for (int i = 0; i < 8; i++) len = len << 8 | (uint8_t)c->in[2 + i];
            h = 10;
        }
        if (b1 & 0x80) h += 4; /* a server never masks; tolerated */
        if (len > ((uint64_t)1 << 40)) goto closed;
        while (c->in_len < h + len) {
            if (c->in_cap < h + len + 65536) {
                char *grown = realloc(c->in, h + len + 65536);
                if (!grown) goto closed;
                c->in = grown, c->in_cap = h + len + 65536;
            }
            if (fill(c) <= 0) goto closed;
        }
        uint8_t opcode = b0 & 0x0f;
        char *payload = c->in + h;
        if (opcode == 0x9) { /* ping: pong with its data */
            pthread_mutex_lock(&c->send_lock);
            send_frame(c, 0xA, payload, len);
            pthread_mutex_unlock(&c->send_lock);
        } else if (opcode == 0x8) { /* close: answer it, and the connection ends */
            pthread_mutex_lock(&c->send_lock);
            if (!c->closed) send_frame(c, 0x8, payload, len >= 2 ? 2 : 0);
            c->closed = 1;
            pthread_mutex_unlock(&c->send_lock);
            consume(c, h + len);
            goto closed;
        } else if (opcode <= 0x2) { /* data, or a continuation */
            char *grown = realloc(parts, parts_len + len + 1);
            if (!grown) goto closed;
            parts = grown;
            memcpy(parts + parts_len, payload, len);
            parts_len += len;
            if (b0 & 0x80) {
                consume(c, h + len);
                *message = parts, *message_len = parts_len;
                return 0;
            }
        }
        consume(c, h + len);
    }
closed:
    free(parts);
    c->closed = 1;
    return -1;
}

void ws_shutdown(ws_conn *c)
{
    if (c->fd >= 0) shutdown(c->fd, SHUT_RDWR);
}

void ws_close(ws_conn *c)
{
    pthread_mutex_lock(&c->send_lock);
    if (!c->closed && c->fd >= 0) {
        uint8_t code[2] = {0x03, 0xe8}; /* 1000: normal closure */
        send_frame(c, 0x8, code, 2);
    }
    c->closed = 1;
    pthread_mutex_unlock(&c->send_lock);
    if (c->fd >= 0) shutdown(c->fd, SHUT_RDWR);
}
