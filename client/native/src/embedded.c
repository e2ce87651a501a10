/* VNPU_ENDPOINT=embedded from C: no interpreter inside the program. The library starts a private daemon for the
 * program -- `python -m server.cli serve --uds <private dir>/vnpu.sock`, the interpreter that built the toolkit --
 * and the session reaches it over that Unix socket. The daemon's output goes to <private dir>/daemon.log, which
 * every error message names; it is stopped (SIGTERM: its contexts released, its shared memory unlinked) when the
 * program exits, and dies with the program if the program is killed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

#ifndef VNPU_PYTHON
#define VNPU_PYTHON "python3"
#endif
#define START_TIMEOUT_S 60

static pid_t daemon_pid = 0;
static char daemon_dir[256];

static void stop_daemon(void)
{
    if (daemon_pid <= 0 || getpid() == daemon_pid) return;
    kill(daemon_pid, SIGTERM);
    for (int i = 0; i < 200; i++) { /* at most 10 s for a graceful stop */
        if (waitpid(daemon_pid, NULL, WNOHANG) == daemon_pid) goto gone;
        struct timespec t = {0, 50000000};
        nanosleep(&t, NULL);
    }
    kill(daemon_pid, SIGKILL);
    waitpid(daemon_pid, NULL, 0);
gone:
    daemon_pid = 0;
    char path[300];
    snprintf(path, sizeof(path), "%s/vnpu.sock", daemon_dir);
    unlink(path);
    if (!getenv("VNPU_KEEP_EMBEDDED_LOG")) {
        snprintf(path, sizeof(path), "%s/daemon.log", daemon_dir);
        unlink(path);
        rmdir(daemon_dir);
    }
}

static int answers(const char *socket_path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof(a.sun_path)) return close(fd), 0;
    memcpy(a.sun_path, socket_path, strlen(socket_path) + 1);
    int ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

int vn_start_embedded(vn_config *config)
{
    if (!config->embedded) return 0;
    char *socket_path = NULL;
    if (daemon_pid > 0) goto connect; /* a second aclInit after a full aclFinalize: the same daemon */
    const char *tmp = getenv("TMPDIR");
    snprintf(daemon_dir, sizeof(daemon_dir), "%s/vnpu-embedded-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(daemon_dir))
        return vn_fail_transport("aclInit", "VNPU_ENDPOINT=embedded: cannot make a private directory: %m");
    char log_path[300], sock[300];
    snprintf(log_path, sizeof(log_path), "%s/daemon.log", daemon_dir);
    snprintf(sock, sizeof(sock), "%s/vnpu.sock", daemon_dir);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return vn_fail_transport("aclInit", "VNPU_ENDPOINT=embedded: cannot start the daemon: %m");
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(1);
        int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (log >= 0) dup2(log, 1), dup2(log, 2), close(log);
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, 0), close(null);
        setenv("VNPU_LOG_LEVEL", getenv("VNPU_LOG_LEVEL") ? getenv("VNPU_LOG_LEVEL") : "warning", 1);
        unsetenv("VNPU_UDS"), unsetenv("VNPU_PORT"), unsetenv("VNPU_HOST");
        /* from the private directory: `-m server.cli` must find vnpu's installed package, never a `server/`
         * folder of the program's working directory */
        if (chdir(daemon_dir) != 0) _exit(126);
        execl(VNPU_PYTHON, VNPU_PYTHON, "-m", "server.cli", "serve", "--uds", sock, (char *)NULL);
        fprintf(stderr, "vnpu: cannot run %s: %s\n", VNPU_PYTHON, strerror(errno));
        _exit(127);
    }
    daemon_pid = pid;
    atexit(stop_daemon);
    for (int i = 0; i < START_TIMEOUT_S * 100; i++) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            daemon_pid = 0;
            return vn_fail_transport("aclInit",
                           "VNPU_ENDPOINT=embedded: the private daemon (%s) exited at start (status %d); its "
                           "output is in %s",
                           VNPU_PYTHON, WIFEXITED(status) ? WEXITSTATUS(status) : -1, log_path);
        }
        if (answers(sock)) goto connect;
        struct timespec t = {0, 10000000};
        nanosleep(&t, NULL);
    }
    stop_daemon();
    return vn_fail_transport("aclInit", "VNPU_ENDPOINT=embedded: the private daemon did not answer within %d s; its "
                                      "output is in %s", START_TIMEOUT_S, log_path);
connect:
    if (asprintf(&socket_path, "%s/vnpu.sock", daemon_dir) < 0) return vn_fail_transport("aclInit", "out of memory");
    free(config->uds);
    config->uds = socket_path;
    free(config->endpoint);
    if (asprintf(&config->endpoint, "embedded (a private daemon on unix:%s, its output in %s/daemon.log)",
                 socket_path, daemon_dir) < 0)
        config->endpoint = NULL;
    config->local_memory = 1;
    return 0;
}
