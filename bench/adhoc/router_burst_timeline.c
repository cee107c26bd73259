/*
 * router_burst_timeline.c -- workload D's shape (ROUTER "r1" sends COUNT
 * two-frame messages over tcp to ROUTER "r2", received by a fresh thread per
 * iteration) with a timeline: for the last 3 iterations it prints, in µs from
 * the iteration's start, when the receiving thread began, when it received its
 * first message and when each 1000th
 * message was sent and received.  Not a cell of the suite; used for
 * docs/results/2026-11-28-router-burst-timeline.md.
 *
 *   gcc -O2 -o rbt router_burst_timeline.c -Idist/include -lzmq -lpthread
 *   LD_LIBRARY_PATH=dist/lib ./rbt COUNT ITERATIONS HWM
 */
#define _GNU_SOURCE
#include <zmq.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MARKS 64
static long count;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", what, zmq_strerror(zmq_errno()));
        exit(1);
    }
}

static uint64_t recv_at[MARKS], sent_at[MARKS], entered_at, first_at;

static void *receiver(void *sock)
{
    entered_at = now_ns();
    zmq_msg_t m;
    zmq_msg_init(&m);
    for (long i = 0; i < count; i++) {
        check(zmq_msg_recv(&m, sock, 0), "recv routing id");
        check(zmq_msg_recv(&m, sock, 0), "recv body");
        if (i == 0)
            first_at = now_ns();
        if (i % 1000 == 999 && i / 1000 < MARKS)
            recv_at[i / 1000] = now_ns();
    }
    zmq_msg_close(&m);
    return NULL;
}

static void set_hwm(void *s, int hwm)
{
    check(zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm), "SNDHWM");
    check(zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof hwm), "RCVHWM");
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s COUNT ITERATIONS HWM\n", argv[0]);
        return 2;
    }
    count = atol(argv[1]);
    int iterations = atoi(argv[2]), hwm = atoi(argv[3]), one = 1;
    long marks = count / 1000 < MARKS ? count / 1000 : MARKS;
    void *ctx = zmq_ctx_new();
    void *rcv = zmq_socket(ctx, ZMQ_ROUTER), *snd = zmq_socket(ctx, ZMQ_ROUTER);
    set_hwm(rcv, hwm);
    set_hwm(snd, hwm);
    check(zmq_setsockopt(rcv, ZMQ_ROUTING_ID, "r2", 2), "ROUTING_ID");
    check(zmq_bind(rcv, "tcp://127.0.0.1:5599"), "bind");
    check(zmq_setsockopt(snd, ZMQ_ROUTING_ID, "r1", 2), "ROUTING_ID");
    check(zmq_setsockopt(snd, ZMQ_ROUTER_MANDATORY, &one, sizeof one), "MANDATORY");
    check(zmq_connect(snd, "tcp://127.0.0.1:5599"), "connect");
    /* Until the route exists a send fails with EHOSTUNREACH. */
    while (zmq_send(snd, "r2", 2, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    check(zmq_send(snd, "x", 1, 0), "send probe");
    zmq_msg_t m;
    zmq_msg_init(&m);
    check(zmq_msg_recv(&m, rcv, 0), "recv probe");
    check(zmq_msg_recv(&m, rcv, 0), "recv probe");
    zmq_msg_close(&m);
    static char body[64];
    for (int it = 0; it < iterations; it++) {
        pthread_t th;
        uint64_t t0 = now_ns();
        pthread_create(&th, NULL, receiver, rcv);
        for (long i = 0; i < count; i++) {
            check(zmq_send(snd, "r2", 2, ZMQ_SNDMORE), "send routing id");
            check(zmq_send(snd, body, sizeof body, 0), "send body");
            if (i % 1000 == 999 && i / 1000 < MARKS)
                sent_at[i / 1000] = now_ns();
        }
        pthread_join(th, NULL);
        uint64_t t1 = now_ns();
        if (it < iterations - 3)
            continue;
        printf("total %5.0f  receiver began %4.0f, first message %4.0f\n  sent:",
               (t1 - t0) / 1e3, (entered_at - t0) / 1e3, (first_at - t0) / 1e3);
        for (long k = 0; k < marks; k++)
            printf(" %5.0f", (sent_at[k] - t0) / 1e3);
        printf("\n  recv:");
        for (long k = 0; k < marks; k++)
            printf(" %5.0f", (recv_at[k] - t0) / 1e3);
        printf("\n");
    }
    zmq_close(snd);
    zmq_close(rcv);
    zmq_ctx_term(ctx);
    return 0;
}
