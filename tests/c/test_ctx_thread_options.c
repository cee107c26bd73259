/* Context options for the background thread, as libzmq 4.3.4 has them (probed with Debian's
 * libzmq side by side): each value read back as set, the I/O thread named "ZMQbg/IO/0"
 * (behind "<prefix>/" with ZMQ_THREAD_NAME_PREFIX), pinned to the CPUs added less those
 * removed, and run under SCHED_FIFO with the priority given. Settings take effect when
 * the thread starts: the first tcp bind. */
#include "testutil.h"
#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#ifndef ZMQ_ZERO_COPY_RECV
#define ZMQ_ZERO_COPY_RECV 10 /* in zmq.h's draft part */
#endif

/* Fills `allowed` ("Cpus_allowed_list") and `policy`/`rtprio` (fields 41 and 40 of
 * /proc/<tid>/stat) of this process's thread named `name`; 0 if there is none. */
static int find_thread(const char *name, char *allowed, size_t alen, unsigned *policy,
                       unsigned *rtprio) {
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int found = 0;
    while (d != NULL && (e = readdir(d)) != NULL && !found) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(buf, sizeof buf, f) == NULL)
            buf[0] = 0;
        fclose(f);
        buf[strcspn(buf, "\n")] = 0;
        if (strcmp(buf, name) != 0)
            continue;
        found = 1;
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        f = fopen(path, "r");
        while (f != NULL && fgets(buf, sizeof buf, f) != NULL) {
            if (strncmp(buf, "Cpus_allowed_list:", 18) == 0) {
                const char *v = buf + 18;
                while (*v == ' ' || *v == '\t')
                    v++;
                snprintf(allowed, alen, "%.*s", (int)strcspn(v, "\n"), v);
            }
        }
        if (f != NULL)
            fclose(f);
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        f = fopen(path, "r");
        if (f != NULL && fgets(buf, sizeof buf, f) != NULL) {
            /* Fields after the ")" that ends the name: the 3rd field is the state. */
            char *p = strrchr(buf, ')');
            int field = 2;
            for (char *tok = strtok(p + 2, " "); tok != NULL; tok = strtok(NULL, " ")) {
                field++;
                if (field == 40)
                    *rtprio = (unsigned)strtoul(tok, NULL, 10);
                if (field == 41)
                    *policy = (unsigned)strtoul(tok, NULL, 10);
            }
        }
        if (f != NULL)
            fclose(f);
    }
    if (d != NULL)
        closedir(d);
    return found;
}

/* Starts `ctx`'s thread (a tcp bind), makes it work (a connection and a message through
 * it, so it is past its own set-up) and looks it up by name. */
static int started_thread(void *ctx, const char *name, char *allowed, unsigned *policy,
                          unsigned *rtprio) {
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    char ep[64], buf[8];
    CHECK_RC(zmq_bind(pull, "tcp://127.0.0.1:*"));
    tu_last_endpoint(pull, ep, sizeof ep);
    CHECK_RC(zmq_connect(push, ep));
    CHECK(zmq_send(push, "x", 1, 0) == 1);
    CHECK(zmq_recv(pull, buf, sizeof buf, 0) == 1);
    int found = find_thread(name, allowed, 64, policy, rtprio);
    tu_set_int(push, ZMQ_LINGER, 0);
    zmq_close(push);
    zmq_close(pull);
    return found;
}

int main(void) {
    char allowed[64] = "";
    unsigned policy = 99, rtprio = 99;

    /* Values read back, and those refused. */
    void *ctx = zmq_ctx_new();
    CHECK(zmq_ctx_get(ctx, ZMQ_THREAD_NAME_PREFIX) == 0);
    CHECK(zmq_ctx_get(ctx, ZMQ_ZERO_COPY_RECV) == 1);
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_THREAD_NAME_PREFIX, -5));
    CHECK(zmq_ctx_get(ctx, ZMQ_THREAD_NAME_PREFIX) == -5);
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_ZERO_COPY_RECV, 0));
    CHECK(zmq_ctx_get(ctx, ZMQ_ZERO_COPY_RECV) == 0);
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_ZERO_COPY_RECV, 5));
    CHECK(zmq_ctx_get(ctx, ZMQ_ZERO_COPY_RECV) == 1);
    CHECK_ERR(zmq_ctx_set(ctx, ZMQ_ZERO_COPY_RECV, -1), EINVAL);
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_MAX_MSGSZ, 0));
    CHECK(zmq_ctx_get(ctx, ZMQ_MAX_MSGSZ) == 0);
    CHECK_ERR(zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, -1), EINVAL);
    CHECK_ERR(zmq_ctx_set(ctx, ZMQ_THREAD_SCHED_POLICY, -2), EINVAL);
    CHECK(zmq_ctx_term(ctx) == 0);

    /* The default name. */
    ctx = zmq_ctx_new();
    CHECK(started_thread(ctx, "ZMQbg/IO/0", allowed, &policy, &rtprio));
    CHECK(zmq_ctx_term(ctx) == 0);

    /* A prefix, and CPUs added and removed: CPU 0 is left. */
    ctx = zmq_ctx_new();
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_THREAD_NAME_PREFIX, 7));
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, 0));
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, 1));
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_REMOVE, 1));
    allowed[0] = 0;
    CHECK(started_thread(ctx, "7/ZMQbg/IO/0", allowed, &policy, &rtprio));
    CHECK(strcmp(allowed, "0") == 0);
    CHECK(zmq_ctx_term(ctx) == 0);

    /* Real-time scheduling needs the privilege (the CI runs as root); without it libzmq
     * aborts and ferromq leaves the thread as it was. */
    ctx = zmq_ctx_new();
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_THREAD_SCHED_POLICY, SCHED_FIFO));
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_THREAD_PRIORITY, 10));
    if (geteuid() == 0) {
        CHECK(started_thread(ctx, "ZMQbg/IO/0", allowed, &policy, &rtprio));
        CHECK(policy == SCHED_FIFO);
        CHECK(rtprio == 10);
    } else {
        fprintf(stderr, "test_ctx_thread_options: not root, SCHED_FIFO not checked\n");
    }
    CHECK(zmq_ctx_term(ctx) == 0);

    return tu_finish("test_ctx_thread_options");
}
