/*
 * send_copy_vs_zero_copy.c -- does the sender's copy keep large messages
 * below the raw socket's rate?  (Not a cell of the suite; used for
 * docs/results/2026-11-26-send-copy-bound.md.)  A PUSH thread streams COUNT
 * messages of SIZE bytes to a PULL in the main thread at the default HWM,
 * either with zmq_send (the library copies the buffer) or, with MODE 1,
 * with zmq_msg_init_data over one static buffer and no free function (no
 * copy).  Prints msg/s from the first message received.
 *
 *   gcc -O2 -o send_copy_vs_zero_copy send_copy_vs_zero_copy.c -lzmq -lpthread
 *   LD_LIBRARY_PATH=dir-with-libzmq.so.5 ./send_copy_vs_zero_copy ENDPOINT SIZE COUNT MODE
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

static size_t size;
static long count;
static int zero_copy;
static void *ctx;

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
    for (long i = 0; i < count; i++) {
        if (zero_copy) {
            zmq_msg_t m;
            zmq_msg_init_data(&m, buf, size, NULL, NULL);
            zmq_msg_send(&m, s, 0);
        } else {
            zmq_send(s, buf, size, 0);
        }
    }
    int linger = -1;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(s); /* waits for the queued messages, so buf may go after it */
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s ENDPOINT SIZE COUNT 0|1\n", argv[0]);
        return 2;
    }
    size = (size_t)atol(argv[2]);
    count = atol(argv[3]);
    zero_copy = atoi(argv[4]);
    ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    zmq_bind(pull, argv[1]);
    pthread_t t;
    pthread_create(&t, NULL, sender, argv[1]);
    zmq_msg_t m;
    zmq_msg_init(&m);
    zmq_msg_recv(&m, pull, 0);
    double t0 = now_s();
    for (long i = 1; i < count; i++)
        zmq_msg_recv(&m, pull, 0);
    printf("%s %s %zu: %.1fK msg/s\n", argv[1], zero_copy ? "zero-copy" : "copy", size,
           (count - 1) / (now_s() - t0) / 1e3);
    pthread_join(t, NULL);
    zmq_msg_close(&m);
    zmq_close(pull);
    zmq_ctx_term(ctx);
    return 0;
}
