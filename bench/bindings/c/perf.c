/*
 * Workload C driver, C over zmq.h: libzmq's classic perf pair.
 *
 *   perf ROLE ENDPOINT SIZE COUNT
 *   ROLE: local_thr | remote_thr | local_lat | remote_lat
 *
 * Linked against libzmq.so.5 by soname; the runner selects the library with
 * LD_LIBRARY_PATH.  The measuring side (local_thr, remote_lat) prints
 *   RESULT {"msg_per_s": F}   or   RESULT {"latency_us": F}
 * Exit 1 on any failed zmq call (the message names it), 2 on usage errors.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

static void fail(const char *what)
{
    fprintf(stderr, "perf(c): %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void version_note(void)
{
    int a, b, c;
    zmq_version(&a, &b, &c);
    fprintf(stderr, "perf(c): zmq_version %d.%d.%d\n", a, b, c);
}

/* PULL binds; timer starts at the first message; (count-1)/elapsed. */
static void local_thr(void *s, const char *ep, size_t size, long count)
{
    zmq_msg_t m;
    if (zmq_bind(s, ep) != 0) fail("zmq_bind");
    if (zmq_msg_init(&m) != 0) fail("zmq_msg_init");
    double t0 = 0;
    for (long i = 0; i < count; i++) {
        if (zmq_msg_recv(&m, s, 0) < 0) fail("zmq_msg_recv");
        if (zmq_msg_size(&m) != size) {
            fprintf(stderr, "perf(c): message of wrong size\n");
            exit(1);
        }
        if (i == 0) t0 = now_s();
    }
    double el = now_s() - t0;
    zmq_msg_close(&m);
    printf("RESULT {\"msg_per_s\": %.3f}\n", (double)(count - 1) / el);
}

/* PUSH connects and sends count messages. */
static void remote_thr(void *s, const char *ep, size_t size, long count)
{
    if (zmq_connect(s, ep) != 0) fail("zmq_connect");
    for (long i = 0; i < count; i++) {
        zmq_msg_t m;
        if (zmq_msg_init_size(&m, size) != 0) fail("zmq_msg_init_size");
        memset(zmq_msg_data(&m), 'D', size);
        if (zmq_msg_send(&m, s, 0) < 0) fail("zmq_msg_send");
    }
}

/* REP binds and echoes count messages. */
static void local_lat(void *s, const char *ep, size_t size, long count)
{
    zmq_msg_t m;
    if (zmq_bind(s, ep) != 0) fail("zmq_bind");
    if (zmq_msg_init(&m) != 0) fail("zmq_msg_init");
    for (long i = 0; i < count; i++) {
        if (zmq_msg_recv(&m, s, 0) < 0) fail("zmq_msg_recv");
        if (zmq_msg_send(&m, s, 0) < 0) fail("zmq_msg_send");
    }
    zmq_msg_close(&m);
    (void)size;
}

/* REQ connects and times count round trips: one-way = elapsed / (2 count). */
static void remote_lat(void *s, const char *ep, size_t size, long count)
{
    zmq_msg_t m;
    if (zmq_connect(s, ep) != 0) fail("zmq_connect");
    if (zmq_msg_init_size(&m, size) != 0) fail("zmq_msg_init_size");
    memset(zmq_msg_data(&m), 'D', size);
    double t0 = now_s();
    for (long i = 0; i < count; i++) {
        if (zmq_msg_send(&m, s, 0) < 0) fail("zmq_msg_send");
        if (zmq_msg_recv(&m, s, 0) < 0) fail("zmq_msg_recv");
        if (zmq_msg_size(&m) != size) {
            fprintf(stderr, "perf(c): reply of wrong size\n");
            exit(1);
        }
    }
    double el = now_s() - t0;
    zmq_msg_close(&m);
    printf("RESULT {\"latency_us\": %.3f}\n", el * 1e6 / (2.0 * count));
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s ROLE ENDPOINT SIZE COUNT\n", argv[0]);
        return 2;
    }
    const char *role = argv[1], *ep = argv[2];
    long size = atol(argv[3]), count = atol(argv[4]);
    if (size < 1 || count < 2) {
        fprintf(stderr, "perf(c): SIZE >= 1 and COUNT >= 2 required\n");
        return 2;
    }
    static const struct {
        const char *name;
        int type;
        void (*fn)(void *, const char *, size_t, long);
    } roles[] = {
        {"local_thr", ZMQ_PULL, local_thr},
        {"remote_thr", ZMQ_PUSH, remote_thr},
        {"local_lat", ZMQ_REP, local_lat},
        {"remote_lat", ZMQ_REQ, remote_lat},
    };
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++) {
        if (strcmp(role, roles[i].name) != 0) continue;
        version_note();
        void *ctx = zmq_ctx_new();
        if (!ctx) fail("zmq_ctx_new");
        void *s = zmq_socket(ctx, roles[i].type);
        if (!s) fail("zmq_socket");
        roles[i].fn(s, ep, (size_t)size, count);
        if (zmq_close(s) != 0) fail("zmq_close");
        if (zmq_ctx_term(ctx) != 0) fail("zmq_ctx_term");
        fflush(stdout);
        return 0;
    }
    fprintf(stderr, "perf(c): unknown role '%s'\n", role);
    return 2;
}
