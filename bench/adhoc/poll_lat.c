/*
 * poll_lat.c -- REQ/REP round trips where the REP thread waits with zmq_poll on
 * two sockets (its REP and an idle PULL), as a broker's loop does; the REQ
 * thread uses a plain blocking receive.  Not a cell of the suite; used for
 * docs/results/2026-11-27-poll-several-spin.md.  Prints the mean one-way
 * latency in microseconds (elapsed / 2N) after WARMUP round trips.
 *
 *   gcc -O2 -o poll_lat poll_lat.c -lzmq -lpthread
 *   LD_LIBRARY_PATH=dir-with-libzmq.so.5 ./poll_lat tcp|ipc|inproc SIZE COUNT
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
static char endpoint[64], idle_endpoint[64];
enum { WARMUP = 1000 };

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", what, zmq_strerror(zmq_errno()));
        exit(1);
    }
}

static void *server(void *arg)
{
    void *rep = arg;
    void *idle = zmq_socket(ctx, ZMQ_PULL);
    check(zmq_bind(idle, idle_endpoint), "bind idle");
    char *buf = malloc(size);
    zmq_pollitem_t items[2] = {{rep, 0, ZMQ_POLLIN, 0}, {idle, 0, ZMQ_POLLIN, 0}};
    for (long i = 0; i < count + WARMUP; i++) {
        check(zmq_poll(items, 2, -1), "poll");
        if (!(items[0].revents & ZMQ_POLLIN)) {
            i--;
            continue;
        }
        int n = zmq_recv(rep, buf, size, 0);
        check(n, "server recv");
        check(zmq_send(rep, buf, (size_t)n, 0), "server send");
    }
    zmq_close(idle);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s tcp|ipc|inproc SIZE COUNT\n", argv[0]);
        return 2;
    }
    size = strtoul(argv[2], NULL, 10);
    count = strtol(argv[3], NULL, 10);
    ctx = zmq_ctx_new();
    void *rep = zmq_socket(ctx, ZMQ_REP);
    if (strcmp(argv[1], "tcp") == 0) {
        check(zmq_bind(rep, "tcp://127.0.0.1:*"), "bind");
        size_t len = sizeof endpoint;
        zmq_getsockopt(rep, ZMQ_LAST_ENDPOINT, endpoint, &len);
        snprintf(idle_endpoint, sizeof idle_endpoint, "tcp://127.0.0.1:*");
    } else if (strcmp(argv[1], "ipc") == 0) {
        snprintf(endpoint, sizeof endpoint, "ipc:///tmp/poll_lat_%d", getpid());
        snprintf(idle_endpoint, sizeof idle_endpoint, "ipc:///tmp/poll_lat_idle_%d", getpid());
        check(zmq_bind(rep, endpoint), "bind");
    } else {
        snprintf(endpoint, sizeof endpoint, "inproc://poll_lat");
        snprintf(idle_endpoint, sizeof idle_endpoint, "inproc://poll_lat_idle");
        check(zmq_bind(rep, endpoint), "bind");
    }
    void *req = zmq_socket(ctx, ZMQ_REQ);
    check(zmq_connect(req, endpoint), "connect");
    pthread_t t;
    pthread_create(&t, NULL, server, rep);
    char *buf = calloc(1, size);
    double start = 0;
    for (long i = 0; i < count + WARMUP; i++) {
        if (i == WARMUP)
            start = now_s();
        check(zmq_send(req, buf, size, 0), "client send");
        check(zmq_recv(req, buf, size, 0), "client recv");
    }
    double elapsed = now_s() - start;
    pthread_join(t, NULL);
    printf("%.2f\n", elapsed / (2.0 * count) * 1e6);
    zmq_close(req);
    zmq_close(rep);
    zmq_ctx_term(ctx);
    free(buf);
    return 0;
}
