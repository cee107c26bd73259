/*
 * proxy_probe.c -- zmq_proxy between two connections: one-way latency of REQ -> ROUTER
 * [zmq_proxy] DEALER -> REP, or throughput of PUSH -> PULL [zmq_proxy] PUSH -> PULL.
 * A proxy forwards between two connections, the case the streaming rule of inline
 * writes must not slow (docs/results/2026-12-05-streaming-by-output.md).  Link against
 * libzmq and pick the library with LD_LIBRARY_PATH.  One process, three threads (the
 * proxy, a sender or REP, the main thread).
 *
 *   gcc -O2 -o proxy_probe bench/adhoc/proxy_probe.c -lzmq -lpthread
 *   ./proxy_probe lat|thr tcp|ipc|inproc SIZE COUNT
 *
 * Prints "proxy lat TRANSPORT SIZE: X us one-way" (COUNT round trips after 100 warm-up
 * ones; one-way = elapsed / 2 / round trips) or "proxy thr TRANSPORT SIZE: X msg/s"
 * (HWM 0 throughout; the timer starts at the first message received).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define WARMUP 100

static void *ctx;
static const char *transport;
static size_t size;
static long count;
static int latency;
static char front_ep[256], back_ep[256];
static volatile int proxy_ready;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", what, zmq_strerror(zmq_errno()));
        exit(1);
    }
}

static void zero_hwm(void *s)
{
    int zero = 0;
    check(zmq_setsockopt(s, ZMQ_SNDHWM, &zero, sizeof zero), "sndhwm");
    check(zmq_setsockopt(s, ZMQ_RCVHWM, &zero, sizeof zero), "rcvhwm");
}

/* Binds `s` to a fresh endpoint of the chosen transport and stores the resolved one. */
static void bind_any(void *s, const char *name, char *resolved)
{
    char ep[256];
    if (strcmp(transport, "tcp") == 0)
        snprintf(ep, sizeof ep, "tcp://127.0.0.1:*");
    else if (strcmp(transport, "ipc") == 0)
        snprintf(ep, sizeof ep, "ipc:///tmp/proxy-probe-%d-%s", (int)getpid(), name);
    else
        snprintf(ep, sizeof ep, "inproc://proxy-probe-%s", name);
    check(zmq_bind(s, ep), "bind");
    size_t len = 256;
    check(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, resolved, &len), "last endpoint");
}

static void *proxy(void *arg)
{
    (void)arg;
    void *front = zmq_socket(ctx, latency ? ZMQ_ROUTER : ZMQ_PULL);
    void *back = zmq_socket(ctx, latency ? ZMQ_DEALER : ZMQ_PUSH);
    if (!latency) {
        zero_hwm(front);
        zero_hwm(back);
    }
    bind_any(front, "front", front_ep);
    bind_any(back, "back", back_ep);
    __atomic_store_n(&proxy_ready, 1, __ATOMIC_SEQ_CST);
    zmq_proxy(front, back, NULL); /* returns when the context terminates */
    zmq_close(front);
    zmq_close(back);
    return NULL;
}

static void *sender(void *arg)
{
    (void)arg;
    void *s = zmq_socket(ctx, ZMQ_PUSH);
    zero_hwm(s);
    check(zmq_connect(s, front_ep), "connect");
    char *buf = calloc(1, size);
    for (long i = 0; i < count; i++)
        check(zmq_send(s, buf, size, 0), "send");
    int linger = -1;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(s);
    free(buf);
    return NULL;
}

static void *replier(void *arg)
{
    (void)arg;
    void *s = zmq_socket(ctx, ZMQ_REP);
    check(zmq_connect(s, back_ep), "connect");
    zmq_msg_t m;
    zmq_msg_init(&m);
    for (long i = 0; i < count + WARMUP; i++) {
        check(zmq_msg_recv(&m, s, 0), "recv");
        check(zmq_msg_send(&m, s, 0), "send");
    }
    zmq_msg_close(&m);
    int linger = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(s);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s lat|thr tcp|ipc|inproc SIZE COUNT\n", argv[0]);
        return 2;
    }
    latency = strcmp(argv[1], "lat") == 0;
    transport = argv[2];
    size = (size_t)atol(argv[3]);
    count = atol(argv[4]);
    if (count < 2)
        return 2;
    ctx = zmq_ctx_new();
    pthread_t proxy_thread, peer;
    pthread_create(&proxy_thread, NULL, proxy, NULL);
    while (!__atomic_load_n(&proxy_ready, __ATOMIC_SEQ_CST))
        ;
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (!latency) {
        void *r = zmq_socket(ctx, ZMQ_PULL);
        zero_hwm(r);
        check(zmq_connect(r, back_ep), "connect");
        pthread_create(&peer, NULL, sender, NULL);
        double t0 = 0;
        for (long i = 0; i < count; i++) {
            check(zmq_msg_recv(&m, r, 0), "recv");
            if (i == 0)
                t0 = now_s();
        }
        printf("proxy thr %s %zu: %.0f msg/s\n", transport, size, (count - 1) / (now_s() - t0));
        pthread_join(peer, NULL);
        zmq_close(r);
    } else {
        pthread_create(&peer, NULL, replier, NULL);
        void *q = zmq_socket(ctx, ZMQ_REQ);
        check(zmq_connect(q, front_ep), "connect");
        char *buf = calloc(1, size);
        double t0 = 0;
        for (long i = 0; i < count + WARMUP; i++) {
            if (i == WARMUP)
                t0 = now_s();
            check(zmq_send(q, buf, size, 0), "send");
            check(zmq_msg_recv(&m, q, 0), "recv");
        }
        double elapsed = now_s() - t0;
        printf("proxy lat %s %zu: %.2f us one-way\n", transport, size, elapsed * 1e6 / count / 2);
        pthread_join(peer, NULL);
        zmq_close(q);
        free(buf);
    }
    zmq_msg_close(&m);
    /* The proxy thread runs until the context terminates; leave without waiting. */
    fflush(stdout);
    _exit(0);
}
