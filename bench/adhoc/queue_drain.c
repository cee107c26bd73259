/*
 * queue_drain.c -- the per-call cost of zmq_send and zmq_msg_recv on one thread,
 * without a second core in the picture.  (Not a cell of the suite; used for
 * docs/results/2026-11-29-receive-moves.md.)  Over inproc at HWM 0, the thread
 * queues 256 messages of SIZE bytes, then receives them (every frame: a
 * ROUTER's messages have two), COUNT/256 times; the queue stays in cache.
 * Prints "RECV_NS SEND_NS": nanoseconds per message of each loop.  Host noise
 * only ever slows a run, so compare minimums over several runs.  QUEUE_DRAIN_HWM=N
 * in the environment sets that HWM instead of 0 (N >= 256: the batch must fit);
 * QUEUE_DRAIN_RECV=buf receives with zmq_recv into a buffer instead of zmq_msg_recv.
 *
 *   gcc -O2 -o queue_drain bench/adhoc/queue_drain.c -ldl
 *   ./queue_drain LIBZMQ_PATH pair|pushpull|dealer_dealer|dealer_router|router_dealer COUNT SIZE
 *
 * router_dealer: a ROUTER (ROUTER_MANDATORY) sends each message as the DEALER's routing
 * id then the body.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { unsigned char opaque[64]; } msg_t;

enum { BATCH = 256, PAIR = 0, DEALER = 5, ROUTER = 6, PULL = 7, PUSH = 8 };
enum { SNDHWM = 23, RCVHWM = 24, ROUTING_ID = 5, ROUTER_MANDATORY = 33, SNDMORE = 2 };

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "queue_drain: %s missing\n", name);
        exit(1);
    }
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s LIB PATTERN COUNT SIZE\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "queue_drain: %s\n", dlerror());
        return 1;
    }
    const char *pattern = argv[2];
    long count = atol(argv[3]);
    size_t size = (size_t)atol(argv[4]);
    int sender_type, receiver_type;
    if (!strcmp(pattern, "pair")) {
        sender_type = PAIR; receiver_type = PAIR;
    } else if (!strcmp(pattern, "pushpull")) {
        sender_type = PUSH; receiver_type = PULL;
    } else if (!strcmp(pattern, "dealer_dealer")) {
        sender_type = DEALER; receiver_type = DEALER;
    } else if (!strcmp(pattern, "router_dealer")) {
        sender_type = ROUTER; receiver_type = DEALER;
    } else if (!strcmp(pattern, "dealer_router")) {
        sender_type = DEALER; receiver_type = ROUTER;
    } else {
        fprintf(stderr, "queue_drain: unknown pattern %s\n", pattern);
        return 2;
    }

    void *(*ctx_new)(void) = sym(lib, "zmq_ctx_new");
    void *(*socket)(void *, int) = sym(lib, "zmq_socket");
    int (*setsockopt)(void *, int, const void *, size_t) = sym(lib, "zmq_setsockopt");
    int (*bind)(void *, const char *) = sym(lib, "zmq_bind");
    int (*connect)(void *, const char *) = sym(lib, "zmq_connect");
    int (*send)(void *, const void *, size_t, int) = sym(lib, "zmq_send");
    int (*msg_init)(msg_t *) = sym(lib, "zmq_msg_init");
    int (*msg_recv)(msg_t *, void *, int) = sym(lib, "zmq_msg_recv");
    int (*msg_more)(msg_t *) = sym(lib, "zmq_msg_more");
    int (*recv_buf)(void *, void *, size_t, int) = sym(lib, "zmq_recv");
    const char *recv_env = getenv("QUEUE_DRAIN_RECV");
    int into_buffer = recv_env && !strcmp(recv_env, "buf");

    void *ctx = ctx_new();
    void *receiver = socket(ctx, receiver_type);
    void *sender = socket(ctx, sender_type);
    const char *hwm_env = getenv("QUEUE_DRAIN_HWM");
    int hwm = hwm_env ? atoi(hwm_env) : 0;
    setsockopt(receiver, RCVHWM, &hwm, sizeof hwm);
    setsockopt(receiver, SNDHWM, &hwm, sizeof hwm);
    setsockopt(sender, SNDHWM, &hwm, sizeof hwm);
    setsockopt(sender, RCVHWM, &hwm, sizeof hwm);
    int routed = sender_type == ROUTER, one = 1;
    if (routed) {
        setsockopt(receiver, ROUTING_ID, "R", 1);
        setsockopt(sender, ROUTER_MANDATORY, &one, sizeof one);
    }
    if (bind(receiver, "inproc://queue-drain") || connect(sender, "inproc://queue-drain")) {
        fprintf(stderr, "queue_drain: bind/connect failed\n");
        return 1;
    }

    char *body = calloc(1, size ? size : 1);
    msg_t msg;
    msg_init(&msg);
    static char rbuf[65536];
    double send_s = 0, recv_s = 0;
    long rounds = count / BATCH;
    for (long r = 0; r < rounds; r++) {
        double t0 = seconds();
        for (int i = 0; i < BATCH; i++)
            if ((routed && send(sender, "R", 1, SNDMORE) < 0) || send(sender, body, size, 0) < 0) {
                fprintf(stderr, "queue_drain: send failed\n");
                return 1;
            }
        double t1 = seconds();
        for (int i = 0; i < BATCH; i++) {
            if (into_buffer) {
                /* A ROUTER's messages are two frames (id, body), the others one. */
                for (int f = receiver_type == ROUTER ? 2 : 1; f > 0; f--) {
                    if (recv_buf(receiver, rbuf, sizeof rbuf, 0) < 0) {
                        fprintf(stderr, "queue_drain: receive failed\n");
                        return 1;
                    }
                }
                continue;
            }
            do {
                if (msg_recv(&msg, receiver, 0) < 0) {
                    fprintf(stderr, "queue_drain: receive failed\n");
                    return 1;
                }
            } while (msg_more(&msg));
        }
        recv_s += seconds() - t1;
        send_s += t1 - t0;
    }
    double n = (double)(rounds * BATCH);
    printf("%.1f %.1f\n", recv_s * 1e9 / n, send_s * 1e9 / n);
    return 0;
}
