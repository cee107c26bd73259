/*
 * poll_two.c -- zmq_poll on two sockets (not a cell of the suite; used for
 * docs/results/2026-11-26-poll-several.md).  Two PUSH threads each stream
 * COUNT messages of SIZE bytes to their own PULL socket; the main thread
 * waits on both PULLs with one zmq_poll and drains whichever is ready with
 * ZMQ_DONTWAIT.  Prints msg/s over both, from the first message received.
 *
 *   gcc -O2 -o poll_two poll_two.c -lzmq -lpthread
 *   LD_LIBRARY_PATH=dir-with-libzmq.so.5 ./poll_two tcp|ipc SIZE COUNT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

static size_t size;
static long count;
static void *ctx;
static char endpoints[2][64];

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *sender(void *endpoint)
{
    void *s = zmq_socket(ctx, ZMQ_PUSH);
    zmq_connect(s, endpoint);
    char *buf = malloc(size);
    memset(buf, 'x', size);
    for (long i = 0; i < count; i++)
        zmq_send(s, buf, size, 0);
    int linger = -1;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(s);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s tcp|ipc SIZE COUNT\n", argv[0]);
        return 2;
    }
    size = (size_t)atol(argv[2]);
    count = atol(argv[3]);
    ctx = zmq_ctx_new();
    void *pull[2];
    for (int k = 0; k < 2; k++) {
        pull[k] = zmq_socket(ctx, ZMQ_PULL);
        if (strcmp(argv[1], "tcp") == 0) {
            zmq_bind(pull[k], "tcp://127.0.0.1:*");
            size_t n = sizeof endpoints[k];
            zmq_getsockopt(pull[k], ZMQ_LAST_ENDPOINT, endpoints[k], &n);
        } else {
            snprintf(endpoints[k], sizeof endpoints[k], "ipc:///tmp/poll-two-%d-%d.ipc",
                     (int)getpid(), k);
            zmq_bind(pull[k], endpoints[k]);
        }
    }
    pthread_t threads[2];
    for (int k = 0; k < 2; k++)
        pthread_create(&threads[k], NULL, sender, endpoints[k]);
    zmq_msg_t m;
    zmq_msg_init(&m);
    long got = 0;
    double t0 = 0;
    while (got < 2 * count) {
        zmq_pollitem_t items[2] = {{pull[0], 0, ZMQ_POLLIN, 0}, {pull[1], 0, ZMQ_POLLIN, 0}};
        if (zmq_poll(items, 2, -1) < 0)
            return 1;
        for (int k = 0; k < 2; k++)
            while ((items[k].revents & ZMQ_POLLIN) && zmq_msg_recv(&m, pull[k], ZMQ_DONTWAIT) >= 0) {
                if (got++ == 0)
                    t0 = now_s();
            }
    }
    printf("%s %zu: %.1fK msg/s\n", argv[1], size, (got - 1) / (now_s() - t0) / 1e3);
    for (int k = 0; k < 2; k++)
        pthread_join(threads[k], NULL);
    zmq_msg_close(&m);
    zmq_close(pull[0]);
    zmq_close(pull[1]);
    zmq_ctx_term(ctx);
    return 0;
}
