/* Tiny assertion helpers for the C ABI tests (each test is its own program). */
#ifndef FERROMQ_TESTUTIL_H
#define FERROMQ_TESTUTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static int tu_failures __attribute__((unused)) = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s (errno %d: %s)\n",        \
                    __FILE__, __LINE__, #cond, zmq_errno(),                    \
                    zmq_strerror(zmq_errno()));                                \
            tu_failures++;                                                     \
        }                                                                      \
    } while (0)

#define CHECK_RC(expr) CHECK((expr) != -1)
#define CHECK_ERR(expr, err) CHECK((expr) == -1 && zmq_errno() == (err))

static inline int tu_finish(const char *name) {
    if (tu_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, tu_failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

static inline void tu_last_endpoint(void *s, char *buf, size_t len) {
    size_t l = len;
    CHECK_RC(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, buf, &l));
}

static inline void tu_set_int(void *s, int opt, int v) {
    CHECK_RC(zmq_setsockopt(s, opt, &v, sizeof v));
}

/* The next event on a monitor socket (libzmq's layout: a 6-byte frame with the 16-bit
 * event code first and the 32-bit value after it, then the endpoint), its value stored
 * in `*value` and its endpoint copied into `endpoint` if it fits (either may be NULL);
 * -1 if nothing came within the socket's RCVTIMEO. */
static inline int tu_next_event_value(void *mon, unsigned *value, char *endpoint,
                                      size_t eplen) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, mon, 0) == -1) {
        zmq_msg_close(&m);
        return -1;
    }
    CHECK(zmq_msg_size(&m) == 6);
    unsigned short ev;
    memcpy(&ev, zmq_msg_data(&m), 2);
    if (value != NULL) {
        memcpy(value, (const char *)zmq_msg_data(&m) + 2, 4);
    }
    CHECK(zmq_msg_more(&m));
    zmq_msg_close(&m);
    zmq_msg_init(&m);
    int n = zmq_msg_recv(&m, mon, 0);
    if (endpoint != NULL && n >= 0 && (size_t)n < eplen) {
        memcpy(endpoint, zmq_msg_data(&m), (size_t)n);
        endpoint[n] = 0;
    }
    zmq_msg_close(&m);
    return ev;
}

/* A PAIR reading the monitor of socket `s` (events `events`, published on inproc `ep`),
 * with a 3 s receive timeout. */
static inline void *tu_monitor(void *ctx, void *s, const char *ep, int events) {
    CHECK_RC(zmq_socket_monitor(s, ep, events));
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    tu_set_int(mon, ZMQ_RCVTIMEO, 3000);
    CHECK_RC(zmq_connect(mon, ep));
    return mon;
}

/* tu_next_event_value without the value. */
static inline int tu_next_event(void *mon, char *endpoint, size_t eplen) {
    return tu_next_event_value(mon, NULL, endpoint, eplen);
}

/* Once a PUSH connected to `pull` and sent one 1-byte message: the listener's verdict,
 * from `mon` (pull's monitor, past LISTENING). Refused (ACCEPT_FAILED, and again at the
 * next try): checks that nothing got through and returns 0. Accepted: receives the
 * message and returns 1. The first event's value goes to `*value` (may be NULL). */
static inline int tu_accept_verdict(void *pull, void *mon, unsigned *value) {
    int ev = tu_next_event_value(mon, value, NULL, 0);
    char buf[4];
    if (ev == ZMQ_EVENT_ACCEPT_FAILED) {
        CHECK(tu_next_event(mon, NULL, 0) == ZMQ_EVENT_ACCEPT_FAILED);
        CHECK(zmq_recv(pull, buf, sizeof buf, ZMQ_DONTWAIT) == -1 && zmq_errno() == EAGAIN);
        return 0;
    }
    CHECK(ev == ZMQ_EVENT_ACCEPTED);
    tu_set_int(pull, ZMQ_RCVTIMEO, 3000);
    int got = zmq_recv(pull, buf, sizeof buf, 0) == 1;
    CHECK(got);
    return got;
}

/* A PULL bound to bind_ep and a PUSH connected to it (through ZMQ_LAST_ENDPOINT, so
 * wildcard ports work). */
static inline void tu_push_pull(void *ctx, const char *bind_ep, void **pull, void **push) {
    *pull = zmq_socket(ctx, ZMQ_PULL);
    *push = zmq_socket(ctx, ZMQ_PUSH);
    CHECK(*pull != NULL && *push != NULL);
    CHECK_RC(zmq_bind(*pull, bind_ep));
    char ep[256];
    tu_last_endpoint(*pull, ep, sizeof ep);
    CHECK_RC(zmq_connect(*push, ep));
}

/* A plain TCP socket listening on 127.0.0.1 at a port the kernel picks (backlog 64), its
 * endpoint written to `ep` as "tcp://127.0.0.1:PORT"; -1 on failure. */
static inline int tu_tcp_listener(char *ep, size_t len) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        CHECK(!"a listening tcp socket");
        return -1;
    }
    snprintf(ep, len, "tcp://127.0.0.1:%u", ntohs(a.sin_port));
    return fd;
}
/* A plain TCP connection to "tcp://127.0.0.1:PORT" (the port is all it reads of `ep`). */
static inline int tu_raw_connect(const char *ep) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_port = htons((unsigned short)atoi(strrchr(ep, ':') + 1));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    return fd;
}
#endif
