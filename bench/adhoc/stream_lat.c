/*
 * stream_lat.c -- one-way latency of a PUSH -> PULL stream over inproc whose
 * sender waits GAP_US between messages (a paced stream, not a flood).  Each
 * message carries its send time; the PULL thread, which only receives,
 * records now - then.  Not a cell of the suite; used for
 * docs/results/2026-11-27-patient-watch.md (a thread that only receives
 * watches an empty queue with looks ~0.6 us apart).  Prints mean, p50, p99,
 * p99.9 and max in microseconds, and how many messages came over 1 ms late (a
 * stall of the host shows as a run of those: every message sent during it waits).
 *
 *   gcc -O2 -o stream_lat stream_lat.c -lzmq -lpthread
 *   LD_LIBRARY_PATH=dir-with-libzmq.so.5 ./stream_lat GAP_US COUNT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

static long count;
static double gap_ns;
static void *ctx;

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "stream_lat: %s: %s\n", what, zmq_strerror(zmq_errno()));
        exit(1);
    }
}

static void *sender(void *arg)
{
    (void)arg;
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    check(push != NULL, "socket");
    check(zmq_connect(push, "inproc://stream_lat") == 0, "connect");
    for (long i = 0; i < count; i++) {
        long long start = now_ns();
        while (now_ns() - start < gap_ns) {
        }
        long long t = now_ns();
        check(zmq_send(push, &t, sizeof t, 0) == sizeof t, "send");
    }
    zmq_close(push);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: stream_lat GAP_US COUNT\n");
        return 2;
    }
    gap_ns = atof(argv[1]) * 1000.0;
    count = atol(argv[2]);
    ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    check(pull != NULL, "socket");
    check(zmq_bind(pull, "inproc://stream_lat") == 0, "bind");
    long long *lat = calloc(count, sizeof *lat);
    check(lat != NULL, "calloc");
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    for (long i = 0; i < count; i++) {
        long long sent;
        check(zmq_recv(pull, &sent, sizeof sent, 0) == sizeof sent, "recv");
        lat[i] = now_ns() - sent;
    }
    pthread_join(t, NULL);
    double sum = 0;
    for (long i = 0; i < count; i++)
        sum += lat[i];
    qsort(lat, count, sizeof *lat, cmp);
    long over_1ms = 0;
    for (long i = 0; i < count; i++)
        over_1ms += lat[i] > 1000000;
    printf("gap %.1f us: mean %.3f us, p50 %.3f us, p99 %.3f us, p99.9 %.1f us, max %.1f us, "
           "over 1 ms %ld\n",
           gap_ns / 1000.0, sum / count / 1000.0, lat[count / 2] / 1000.0,
           lat[count * 99 / 100] / 1000.0, lat[count * 999 / 1000] / 1000.0,
           lat[count - 1] / 1000.0, over_1ms);
    zmq_close(pull);
    zmq_ctx_term(ctx);
    free(lat);
    return 0;
}
