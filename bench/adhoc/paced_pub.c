/*
 * paced_pub.c -- latency of a PUB that publishes at a steady pace to N SUBs over tcp:
 * the case where the streaming rule of inline writes now leaves the first subscriber's
 * copy to the I/O thread (docs/results/2026-12-05-streaming-by-output.md, "Left
 * alone").  Link against libzmq and pick the library with LD_LIBRARY_PATH.  One process:
 * the publishing thread (busy-waits between messages) and one thread per SUB.
 *
 *   gcc -O2 -o paced_pub bench/adhoc/paced_pub.c -lzmq -lpthread
 *   ./paced_pub N GAP_US COUNT
 *
 * Each 64-byte message carries its send time; each SUB prints the mean, p50 and p99 of
 * receive time minus send time in µs.  With more threads than cores the tail is the
 * scheduler's: read the p50.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define MAX_SUBS 16

static void *ctx;
static char endpoint[256];
static long count;
static int ready;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *subscriber(void *arg)
{
    long k = (long)arg;
    void *s = zmq_socket(ctx, ZMQ_SUB);
    zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
    if (zmq_connect(s, endpoint) < 0) {
        fprintf(stderr, "connect: %s\n", zmq_strerror(zmq_errno()));
        exit(1);
    }
    __atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
    double *lat = malloc(sizeof(double) * count);
    long got = 0;
    char buf[64];
    while (got < count) {
        int n = zmq_recv(s, buf, sizeof buf, 0);
        if (n < 8)
            continue;
        double sent;
        memcpy(&sent, buf, sizeof sent);
        lat[got++] = now_us() - sent;
    }
    qsort(lat, got, sizeof(double), by_value);
    double sum = 0;
    for (long i = 0; i < got; i++)
        sum += lat[i];
    printf("sub %ld: n=%ld mean %.1f p50 %.1f p99 %.1f us\n", k, got, sum / got, lat[got / 2],
           lat[got * 99 / 100]);
    free(lat);
    zmq_close(s);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s N GAP_US COUNT\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]);
    double gap = atof(argv[2]);
    count = atol(argv[3]);
    if (n < 1 || n > MAX_SUBS || count < 1)
        return 2;
    ctx = zmq_ctx_new();
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    if (zmq_bind(pub, "tcp://127.0.0.1:*") < 0) {
        fprintf(stderr, "bind: %s\n", zmq_strerror(zmq_errno()));
        return 1;
    }
    size_t len = sizeof endpoint;
    zmq_getsockopt(pub, ZMQ_LAST_ENDPOINT, endpoint, &len);
    pthread_t subs[MAX_SUBS];
    for (long k = 0; k < n; k++)
        pthread_create(&subs[k], NULL, subscriber, (void *)k);
    while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < n)
        ;
    usleep(300000); /* subscriptions reach the PUB */
    char buf[64] = {0};
    double next = now_us();
    for (long i = 0; i < count; i++) {
        while (now_us() < next)
            ;
        next += gap;
        double sent = now_us();
        memcpy(buf, &sent, sizeof sent);
        zmq_send(pub, buf, sizeof buf, 0);
    }
    for (int k = 0; k < n; k++)
        pthread_join(subs[k], NULL);
    fflush(stdout);
    _exit(0);
}
