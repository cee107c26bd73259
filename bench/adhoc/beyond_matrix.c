/*
 * beyond_matrix.c -- throughput of uses the suite's matrix does not cover, to look for
 * a case where a program swapping libzmq for ferromq would get slower.  Link against
 * libzmq and pick the library with LD_LIBRARY_PATH.  One process, two threads.
 *
 *   gcc -O2 -o beyond_matrix bench/adhoc/beyond_matrix.c -lzmq -lpthread
 *   ./beyond_matrix MODE TRANSPORT SIZE COUNT [N]
 *
 * MODE:
 *   fanout     one PUB, N SUBs; the receiving thread polls all SUBs (zmq_poll) and
 *              drains each; msg/s counts deliveries (COUNT sent, N*COUNT delivered)
 *   multipart  PUSH -> PULL, each message N frames of SIZE bytes; msg/s counts messages
 *   manypeers  N DEALERs (one sending thread, round robin) -> one ROUTER; the receiver
 *              takes [id, body]; msg/s counts messages
 *   pollmany   PUSH -> PULL plus N-1 idle PULL sockets; the receiver polls all N before
 *              each drain; msg/s counts messages
 *   subtopics  one PUB, N SUBs each subscribed to a topic of its own ("topic-%05d" k);
 *              the PUB sends each message to the next topic in turn, so each reaches
 *              one SUB; msg/s counts deliveries
 *   topics     PUB -> one SUB subscribed to N topics ("topic-00000"...); the PUB sends
 *              each message to the next topic in turn (SIZE bytes, topic first); msg/s
 *              counts messages
 * Prints "MODE TRANSPORT SIZE N: X msg/s".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define MAXN 100000

static void *ctx;
static const char *mode;
static size_t size;
static long count;
static int n;
static char endpoints[512][256];
static int nend;

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

static void bind_any(void *s, const char *transport, int k)
{
    char ep[256];
    if (strcmp(transport, "tcp") == 0)
        snprintf(ep, sizeof ep, "tcp://127.0.0.1:*");
    else if (strcmp(transport, "ipc") == 0)
        snprintf(ep, sizeof ep, "ipc:///tmp/beyond-%d-%d.ipc", (int)getpid(), k);
    else
        snprintf(ep, sizeof ep, "inproc://beyond-%d", k);
    check(zmq_bind(s, ep), "bind");
    size_t len = sizeof endpoints[k];
    check(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, endpoints[k], &len), "last endpoint");
}

static void zero_hwm(void *s)
{
    int zero = 0;
    zmq_setsockopt(s, ZMQ_SNDHWM, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_RCVHWM, &zero, sizeof zero);
}

static void *sender(void *arg)
{
    (void)arg;
    char *buf = calloc(1, size + 1);
    static void *socks[512];
    int ns = 0;
    if (strcmp(mode, "fanout") == 0 || strcmp(mode, "topics") == 0 ||
        strcmp(mode, "subtopics") == 0) {
        socks[ns++] = zmq_socket(ctx, ZMQ_PUB);
        zero_hwm(socks[0]);
        check(zmq_connect(socks[0], endpoints[0]), "connect");
        for (int k = 1; k < nend; k++)
            check(zmq_connect(socks[0], endpoints[k]), "connect");
    } else if (strcmp(mode, "manypeers") == 0) {
        for (int k = 0; k < n; k++) {
            socks[ns] = zmq_socket(ctx, ZMQ_DEALER);
            char id[16];
            int len = snprintf(id, sizeof id, "peer-%d", k);
            zmq_setsockopt(socks[ns], ZMQ_ROUTING_ID, id, len);
            check(zmq_connect(socks[ns], endpoints[0]), "connect");
            ns++;
        }
    } else {
        socks[ns++] = zmq_socket(ctx, ZMQ_PUSH);
        check(zmq_connect(socks[0], endpoints[0]), "connect");
    }
    /* Subscriptions and connections settle before the timed part: a PUB drops what it
       sends before a SUB's subscription has arrived, so send a probe until one lands. */
    if (strcmp(mode, "fanout") == 0 || strcmp(mode, "topics") == 0 ||
        strcmp(mode, "subtopics") == 0) {
        struct timespec d = {0, 200 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    for (long i = 0; i < count; i++) {
        if (strcmp(mode, "topics") == 0 || strcmp(mode, "subtopics") == 0) {
            /* "topic-%05d" then the rest of the body (SIZE >= 11). */
            char t[24];
            snprintf(t, sizeof t, "topic-%05ld", i % n);
            memcpy(buf, t, 11);
            check(zmq_send(socks[0], buf, size, 0), "send");
        } else if (strcmp(mode, "multipart") == 0) {
            for (int f = 0; f < n - 1; f++)
                check(zmq_send(socks[0], buf, size, ZMQ_SNDMORE), "send");
            check(zmq_send(socks[0], buf, size, 0), "send");
        } else {
            check(zmq_send(socks[i % ns], buf, size, 0), "send");
        }
    }
    for (int k = 0; k < ns; k++) {
        int linger = -1;
        zmq_setsockopt(socks[k], ZMQ_LINGER, &linger, sizeof linger);
        zmq_close(socks[k]);
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s fanout|multipart|manypeers|pollmany|topics|subtopics tcp|ipc|inproc SIZE COUNT [N]\n",
                argv[0]);
        return 2;
    }
    mode = argv[1];
    const char *transport = argv[2];
    size = (size_t)atol(argv[3]);
    count = atol(argv[4]);
    n = argc > 5 ? atoi(argv[5]) : 8;
    if (n < 1 || n > MAXN || (strcmp(mode, "topics") != 0 && n > 512))
        return 2;
    if ((strcmp(mode, "topics") == 0 || strcmp(mode, "subtopics") == 0) && size < 11)
        size = 11;
    ctx = zmq_ctx_new();
    static void *recv[512];
    int nrecv;
    if (strcmp(mode, "fanout") == 0 || strcmp(mode, "subtopics") == 0) {
        nrecv = n;
        for (int k = 0; k < n; k++) {
            recv[k] = zmq_socket(ctx, ZMQ_SUB);
            zero_hwm(recv[k]);
            char t[24];
            snprintf(t, sizeof t, "topic-%05d", k);
            if (strcmp(mode, "fanout") == 0)
                zmq_setsockopt(recv[k], ZMQ_SUBSCRIBE, "", 0);
            else
                zmq_setsockopt(recv[k], ZMQ_SUBSCRIBE, t, 11);
            bind_any(recv[k], transport, k);
        }
        nend = n;
    } else if (strcmp(mode, "topics") == 0) {
        nrecv = 1;
        recv[0] = zmq_socket(ctx, ZMQ_SUB);
        zero_hwm(recv[0]);
        for (int k = 0; k < n; k++) {
            char t[24];
            snprintf(t, sizeof t, "topic-%05d", k);
            zmq_setsockopt(recv[0], ZMQ_SUBSCRIBE, t, 11);
        }
        bind_any(recv[0], transport, 0);
        nend = 1;
    } else if (strcmp(mode, "manypeers") == 0) {
        nrecv = 1;
        recv[0] = zmq_socket(ctx, ZMQ_ROUTER);
        bind_any(recv[0], transport, 0);
        nend = 1;
    } else {
        nrecv = strcmp(mode, "pollmany") == 0 ? n : 1;
        for (int k = 0; k < nrecv; k++) {
            recv[k] = zmq_socket(ctx, ZMQ_PULL);
            bind_any(recv[k], transport, k);
        }
        nend = 1;
    }
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    zmq_msg_t m;
    zmq_msg_init(&m);
    long expect = strcmp(mode, "fanout") == 0 ? count * n : count;
    long got = 0;
    double t0 = 0;
    static zmq_pollitem_t items[512];
    while (got < expect) {
        if (strcmp(mode, "fanout") == 0 || strcmp(mode, "pollmany") == 0 ||
            strcmp(mode, "subtopics") == 0) {
            for (int k = 0; k < nrecv; k++) {
                items[k].socket = recv[k];
                items[k].fd = 0;
                items[k].events = ZMQ_POLLIN;
                items[k].revents = 0;
            }
            check(zmq_poll(items, nrecv, -1), "poll");
            for (int k = 0; k < nrecv; k++)
                while ((items[k].revents & ZMQ_POLLIN) &&
                       zmq_msg_recv(&m, recv[k], ZMQ_DONTWAIT) >= 0) {
                    if (got++ == 0)
                        t0 = now_s();
                }
        } else {
            /* Whole messages: every frame of one. */
            do {
                check(zmq_msg_recv(&m, recv[0], 0), "recv");
            } while (zmq_msg_more(&m));
            if (got++ == 0)
                t0 = now_s();
        }
    }
    double rate = (got - 1) / (now_s() - t0);
    printf("%s %s %zu %d: %.0f msg/s\n", mode, transport, size, n, rate);
    pthread_join(t, NULL);
    zmq_msg_close(&m);
    for (int k = 0; k < nrecv; k++)
        zmq_close(recv[k]);
    zmq_ctx_term(ctx);
    return 0;
}
