/*
 * inproc_windows.c -- where a one-process inproc stream spends its time, window by
 * window.  (Not a cell of the suite; used for docs/results/2026-12-07-inproc-windows.md.)
 * A DEALER thread sends COUNT 64-byte messages to a ROUTER (or, with RECEIVER=dealer, a
 * DEALER) on the main thread; with SENDER=router the sender is a ROUTER (ROUTER_MANDATORY)
 * sending each message as the receiver's routing id and the body (receiver: ROUTER).  Every WINDOW messages the receiver prints the window's
 * ns per message and the mean queue depth it saw (messages the sender had handed to
 * the library minus messages received, sampled every 1,024), so a run that changes
 * regime shows where.  Before the stream, two threads bounce a cache line 200,000
 * times and the round trip is printed: it tells the host's placement of the two vCPUs
 * (on the 2-vCPU EPYC guest: ~110 ns in most minutes, ~520 ns in some).
 *
 *   gcc -O2 -o inproc_windows bench/adhoc/inproc_windows.c -ldl -lpthread
 *   ./inproc_windows LIBZMQ_PATH [COUNT [HWM]]     (HWM: both sides; default: the library's)
 *
 * Output: "rtt NS  msg/s  ns/depth ns/depth ..." on one line.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { unsigned char opaque[64]; } msg_t;

enum { DEALER = 5, ROUTER = 6, SNDHWM = 23, RCVHWM = 24, ROUTING_ID = 5, ROUTER_MANDATORY = 33 };
enum { SNDMORE = 2, DONTWAIT = 1 };
enum { WINDOW = 100000, SAMPLE_EVERY = 1024, PINGS = 200000 };

static void *(*ctx_new)(void);
static int (*ctx_term)(void *);
static void *(*socket_)(void *, int);
static int (*close_)(void *);
static int (*setsockopt_)(void *, int, const void *, size_t);
static int (*bind_)(void *, const char *);
static int (*connect_)(void *, const char *);
static int (*send_)(void *, const void *, size_t, int);
static int (*msg_init)(msg_t *);
static int (*msg_recv)(msg_t *, void *, int);
static int (*msg_close)(msg_t *);

static void *ctx;
static long count, hwm = -1;
static int router_sender;
/* Each shared counter fills a line pair of its own: a neighbour written per message
 * would itself be the contention this program looks for. */
typedef struct { _Alignas(128) atomic_long v; char pad[128 - sizeof(atomic_long)]; } counter_t;
static counter_t sent_c, ping_c, pong_c;
#define sent sent_c.v
#define ping ping_c.v
#define pong pong_c.v

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "missing %s\n", name);
        exit(2);
    }
    return p;
}

static void set_hwm(void *s)
{
    if (hwm >= 0) {
        int h = (int)hwm;
        setsockopt_(s, SNDHWM, &h, sizeof h);
        setsockopt_(s, RCVHWM, &h, sizeof h);
    }
}

static void *ponger(void *unused)
{
    (void)unused;
    for (long i = 1; i <= PINGS; i++) {
        while (atomic_load_explicit(&ping, memory_order_acquire) != i)
            ;
        atomic_store_explicit(&pong, i, memory_order_release);
    }
    return NULL;
}

static double round_trip_ns(void)
{
    pthread_t t;
    pthread_create(&t, NULL, ponger, NULL);
    double t0 = now_ns();
    for (long i = 1; i <= PINGS; i++) {
        atomic_store_explicit(&ping, i, memory_order_release);
        while (atomic_load_explicit(&pong, memory_order_acquire) != i)
            ;
    }
    double rtt = (now_ns() - t0) / PINGS;
    pthread_join(t, NULL);
    return rtt;
}

static void *sender(void *unused)
{
    (void)unused;
    void *s = socket_(ctx, router_sender ? ROUTER : DEALER);
    set_hwm(s);
    if (router_sender) {
        int on = 1;
        setsockopt_(s, ROUTER_MANDATORY, &on, sizeof on);
    }
    connect_(s, "inproc://windows");
    char body[64];
    memset(body, 'x', sizeof body);
    /* A ROUTER knows its peer's id only once the pipe is attached: retry until then. */
    while (router_sender && send_(s, "rcv", 3, SNDMORE | DONTWAIT) != 3)
        ;
    for (long i = 0; i < count; i++) {
        if (router_sender && i > 0 && send_(s, "rcv", 3, SNDMORE) != 3) {
            fprintf(stderr, "send failed\n");
            exit(1);
        }
        if (send_(s, body, sizeof body, 0) != 64) {
            fprintf(stderr, "send failed\n");
            exit(1);
        }
        atomic_store_explicit(&sent, i + 1, memory_order_relaxed);
    }
    close_(s);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s LIBZMQ_PATH [COUNT [HWM]]\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    ctx_new = sym(lib, "zmq_ctx_new");
    ctx_term = sym(lib, "zmq_ctx_term");
    socket_ = sym(lib, "zmq_socket");
    close_ = sym(lib, "zmq_close");
    setsockopt_ = sym(lib, "zmq_setsockopt");
    bind_ = sym(lib, "zmq_bind");
    connect_ = sym(lib, "zmq_connect");
    send_ = sym(lib, "zmq_send");
    msg_init = sym(lib, "zmq_msg_init");
    msg_recv = sym(lib, "zmq_msg_recv");
    msg_close = sym(lib, "zmq_msg_close");
    count = argc > 2 ? atol(argv[2]) : 3000000;
    if (argc > 3)
        hwm = atol(argv[3]);
    const char *kind = getenv("RECEIVER");
    int router = !(kind && strcmp(kind, "dealer") == 0);
    kind = getenv("SENDER");
    router_sender = kind && strcmp(kind, "router") == 0;

    printf("rtt %.0f  ", round_trip_ns());
    ctx = ctx_new();
    void *r = socket_(ctx, router ? ROUTER : DEALER);
    set_hwm(r);
    setsockopt_(r, ROUTING_ID, "rcv", 3);
    bind_(r, "inproc://windows");
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    msg_t m;
    msg_init(&m);

    /* The windows are kept and printed at the end: printing would stall the receiver. */
    long windows = count / WINDOW;
    double *ns = calloc(windows + 1, sizeof *ns);
    long *depth = calloc(windows + 1, sizeof *depth);
    long n = count, depth_sum = 0, samples = 0;
    double start = now_ns(), mark = start;
    for (long i = 0; i < n; i++) {
        if (router)
            msg_recv(&m, r, 0);
        msg_recv(&m, r, 0);
        if (i % SAMPLE_EVERY == 0) {
            depth_sum += atomic_load_explicit(&sent, memory_order_relaxed) - i;
            samples++;
        }
        if (i % WINDOW == WINDOW - 1) {
            double t1 = now_ns();
            long w = i / WINDOW;
            ns[w] = (t1 - mark) / WINDOW;
            depth[w] = depth_sum / samples;
            mark = t1;
            depth_sum = samples = 0;
        }
    }
    double elapsed = now_ns() - start;
    printf("%.2fM", n / elapsed * 1e3);
    for (long w = 0; w < windows; w++)
        printf(" %.0f/%ld", ns[w], depth[w]);
    printf("\n");
    pthread_join(t, NULL);
    msg_close(&m);
    close_(r);
    ctx_term(ctx);
    free(ns);
    free(depth);
    return 0;
}
