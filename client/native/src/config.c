/* Where the daemon is, as the Python client reads it (client/config.py): aclInit's JSON file
 * ({"vnpu": {"endpoint": ..., "token": ...}}), else VNPU_ENDPOINT (default http://127.0.0.1:9470; unix:PATH;
 * embedded) and VNPU_TOKEN; VNPU_LAUNCH_BLOCKING, VNPU_HOST_MEMORY, VNPU_CONTEXT and VNPU_RUN. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h"

#define DEFAULT_ENDPOINT "http://127.0.0.1:9470"

/* ---- a JSON reader for the config file: checks the whole text, keeps vnpu.endpoint and vnpu.token ------------ */
typedef struct {
    const char *p, *end;
    int depth;
    char *endpoint, *token;
    int vnpu_not_object;
} json;

static void skip(json *j)
{
    while (j->p < j->end && isspace((unsigned char)*j->p)) j->p++;
}

static int string(json *j, char **out)
{
    if (j->p >= j->end || *j->p != '"') return -1;
    j->p++;
    size_t cap = 64, n = 0;
    char *s = out ? malloc(cap) : NULL;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\') {
            if (j->p >= j->end) return free(s), -1;
            c = *j->p++;
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u':
                if (j->end - j->p < 4) return free(s), -1;
                c = '?', j->p += 4; /* vnpu's settings are ASCII */
                break;
            default: break;
            }
        }
        if (s) {
            if (n + 2 > cap) s = realloc(s, cap *= 2);
            s[n++] = c;
        }
    }
    if (j->p >= j->end) return free(s), -1;
    j->p++;
    if (s) s[n] = 0, *out = s;
    return 0;
}

static int value(json *j, int level, const char *key);

static int object(json *j, int level, const char *parent)
{
    j->p++;
    skip(j);
    if (j->p < j->end && *j->p == '}') return j->p++, 0;
    for (;;) {
        char *key = NULL;
        skip(j);
        if (string(j, &key)) return -1;
        skip(j);
        if (j->p >= j->end || *j->p++ != ':') return free(key), -1;
        skip(j);
        int rc;
        if (level == 0 && strcmp(key, "vnpu") == 0) {
            if (j->p < j->end && *j->p != '{') j->vnpu_not_object = 1;
            rc = value(j, 1, key);
        } else if (level == 1 && parent && strcmp(parent, "vnpu") == 0 &&
                   (strcmp(key, "endpoint") == 0 || strcmp(key, "token") == 0) && j->p < j->end && *j->p == '"') {
            char **slot = strcmp(key, "endpoint") == 0 ? &j->endpoint : &j->token;
            free(*slot);
            *slot = NULL;
            rc = string(j, slot);
        } else rc = value(j, level + 1, key);
        free(key);
        if (rc) return -1;
        skip(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == '}') return j->p++, 0;
        return -1;
    }
}

static int value(json *j, int level, const char *key)
{
    if (++j->depth > 64) return -1;
    skip(j);
    if (j->p >= j->end) return -1;
    int rc = 0;
    char c = *j->p;
    if (c == '{') rc = object(j, level, key);
    else if (c == '[') {
        j->p++;
        skip(j);
        if (j->p < j->end && *j->p == ']') j->p++;
        else
            for (;;) {
                if (value(j, level + 1, NULL)) return -1;
                skip(j);
                if (j->p < j->end && *j->p == ',') {
                    j->p++;
                    continue;
                }
                if (j->p < j->end && *j->p == ']') {
                    j->p++;
                    break;
                }
                return -1;
            }
    } else if (c == '"') rc = string(j, NULL);
    else if (!strncmp(j->p, "true", 4)) j->p += 4;
    else if (!strncmp(j->p, "false", 5)) j->p += 5;
    else if (!strncmp(j->p, "null", 4)) j->p += 4;
    else {
        char *after;
        strtod(j->p, &after);
        if (after == j->p) return -1;
        j->p = after;
    }
    j->depth--;
    return rc;
}

static int read_config_file(const char *path, char **endpoint, char **token)
{
    FILE *f = fopen(path, "rb");
    if (!f) return vn_fail(100003, "aclInit", "config file %s cannot be read: %m", path);
    char *text = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 > cap) text = realloc(text, cap = cap * 2 + 4096);
        got = fread(text + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    json j = {text, text + n, 0, NULL, NULL, 0};
    skip(&j);
    int code = 0;
    if (j.p == j.end) goto done; /* an empty file is no configuration */
    if (*j.p != '{') {
        code = vn_fail(100006, "aclInit", "config file %s must hold a JSON object", path);
        goto done;
    }
    if (value(&j, 0, NULL) || (skip(&j), j.p != j.end)) {
        code = vn_fail(100006, "aclInit", "config file %s is not valid JSON", path);
        goto done;
    }
    if (j.vnpu_not_object) {
        code = vn_fail(100006, "aclInit", "config file %s: \"vnpu\" must be an object", path);
        goto done;
    }
    if (j.endpoint) *endpoint = j.endpoint, j.endpoint = NULL;
    if (j.token) *token = j.token, j.token = NULL;
done:
    free(j.endpoint);
    free(j.token);
    free(text);
    return code;
}

/* ---- the endpoint -------------------------------------------------------------------------------------------- */
static int bad_endpoint(const char *source, const char *value)
{
    return vn_fail(100000, "aclInit",
                   "%s '%s' is not a daemon URL: use http://host:port or https://host:port (e.g. %s), unix:PATH "
                   "for a daemon's Unix socket, or embedded to run the device inside this process",
                   source, value, DEFAULT_ENDPOINT);
}

static int parse_endpoint(const char *value, const char *source, vn_config *c)
{
    if (strcmp(value, "embedded") == 0) {
        c->embedded = 1;
        return 0;
    }
    if (strncmp(value, "unix:", 5) == 0 && value[5]) {
        char *abs = value[5] == '/' ? strdup(value + 5) : NULL;
        if (!abs) {
            char cwd[4096];
            if (!getcwd(cwd, sizeof(cwd))) cwd[0] = 0;
            if (asprintf(&abs, "%s/%s", cwd, value + 5) < 0) abs = NULL;
        }
        c->uds = abs;
        return 0;
    }
    const char *rest;
    int secure;
    if (!strncmp(value, "http://", 7)) rest = value + 7, secure = 0;
    else if (!strncmp(value, "ws://", 5)) rest = value + 5, secure = 0;
    else if (!strncmp(value, "https://", 8)) rest = value + 8, secure = 1;
    else if (!strncmp(value, "wss://", 6)) rest = value + 6, secure = 1;
    else return bad_endpoint(source, value);
    size_t n = strcspn(rest, "/?#");
    char *hostport = strndup(rest, n);
    char *colon = hostport[0] == '[' ? strchr(hostport, ']') : strrchr(hostport, ':');
    int port = secure ? 443 : 80;
    if (colon && *colon == ']') colon = colon[1] == ':' ? colon + 1 : NULL;
    if (colon) {
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (*end || p <= 0 || p > 65535) {
            free(hostport);
            return bad_endpoint(source, value);
        }
        port = (int)p;
        *colon = 0;
    }
    if (!hostport[0]) {
        free(hostport);
        return bad_endpoint(source, value);
    }
    if (hostport[0] == '[') {
        memmove(hostport, hostport + 1, strlen(hostport));
        hostport[strlen(hostport) - 1] = 0;
    }
    if (secure) {
        free(hostport);
        return vn_fail(100000, "aclInit",
                       "%s '%s': the native toolkit does not speak TLS yet; reach the daemon through a local "
                       "TLS-terminating proxy, or over http:// or unix:",
                       source, value);
    }
    c->host = hostport, c->port = port;
    return 0;
}

static int choice(const char *name, const char *fallback, const char *const *choices, const char *listed, int *index)
{
    const char *v = getenv(name);
    if (!v || !*v) v = fallback;
    for (int i = 0; choices[i]; i++)
        if (strcasecmp(v, choices[i]) == 0) return *index = i, 0;
    return vn_fail(100000, "aclInit", "%s '%s' is not one of %s", name, v, listed);
}

int vn_load_config(const char *config_path, vn_config *c)
{
    memset(c, 0, sizeof(*c));
    const char *env_endpoint = getenv("VNPU_ENDPOINT"), *env_token = getenv("VNPU_TOKEN");
    char *endpoint = strdup(env_endpoint && *env_endpoint ? env_endpoint : DEFAULT_ENDPOINT);
    char *token = env_token && *env_token ? strdup(env_token) : NULL;
    char source[4200] = "VNPU_ENDPOINT";
    if (config_path && *config_path) {
        char *file_endpoint = NULL, *file_token = NULL;
        int code = read_config_file(config_path, &file_endpoint, &file_token);
        if (code) {
            free(endpoint), free(token);
            return code;
        }
        if (file_endpoint) {
            free(endpoint);
            endpoint = file_endpoint;
            snprintf(source, sizeof(source), "config file %s: vnpu.endpoint", config_path);
        }
        if (file_token) free(token), token = file_token;
    }
    c->endpoint = endpoint, c->token = token;
    int code = parse_endpoint(endpoint, source, c);
    static const char *const transports[] = {"ws", "http", NULL};
    static const char *const memories[] = {"auto", "local", "remote", NULL};
    int transport = 0, memory = 0;
    if (!code) code = choice("VNPU_TRANSPORT", "ws", transports, "ws, http", &transport);
    if (!code) code = choice("VNPU_HOST_MEMORY", "auto", memories, "auto, local, remote", &memory);
    if (!code && transport == 1)
        code = vn_fail(100000, "aclInit", "VNPU_TRANSPORT=http: the native toolkit speaks the WebSocket only");
    if (!code && getenv("VNPU_DEVICES") && *getenv("VNPU_DEVICES"))
        code = vn_fail(100000, "aclInit", "VNPU_DEVICES: the native toolkit reaches one daemon (not yet several)");
    if (code) {
        vn_free_config(c);
        return code;
    }
    const char *ctx = getenv("VNPU_CONTEXT"), *run = getenv("VNPU_RUN");
    c->context = ctx && *ctx ? strdup(ctx) : NULL;
    c->run = run && *run ? strdup(run) : NULL;
    const char *blocking = getenv("VNPU_LAUNCH_BLOCKING");
    c->launch_blocking = blocking && *blocking && strcmp(blocking, "0") != 0;
    int loopback = c->embedded || c->uds ||
                   (c->host && (!strcmp(c->host, "127.0.0.1") || !strcmp(c->host, "localhost") || !strcmp(c->host, "::1")));
    c->local_memory = memory == 1 || (memory == 0 && loopback);
    return 0;
}

void vn_free_config(vn_config *c)
{
    free(c->endpoint), free(c->host), free(c->uds), free(c->token), free(c->context), free(c->run);
    memset(c, 0, sizeof(*c));
}
