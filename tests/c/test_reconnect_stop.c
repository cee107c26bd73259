/* ZMQ_RECONNECT_STOP with ZMQ_RECONNECT_STOP_CONN_REFUSED, as libzmq 4.3.4 applies it
 * (probed with Debian's libzmq side by side): a tcp connect that nobody accepts ends at
 * the first refusal (CONNECT_DELAYED, CLOSED, no CONNECT_RETRIED), its queue goes (a PUSH
 * has no peer to send to), and zmq_disconnect no longer knows the endpoint. Without the
 * option the connect is retried. With ZMQ_RECONNECT_STOP_HANDSHAKE_FAILED a peer that
 * drops the connection before the handshake is done (not ZMTP) is not tried again, nor is
 * a STREAM connection that ended (libzmq 4.3.4 and 4.3.5 alike). */
#include "testutil.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef ZMQ_RECONNECT_STOP /* in zmq.h's draft part */
#define ZMQ_RECONNECT_STOP 109
#define ZMQ_RECONNECT_STOP_CONN_REFUSED 0x1
#define ZMQ_RECONNECT_STOP_HANDSHAKE_FAILED 0x2
#endif

/* A tcp endpoint where nobody listens: a port the kernel gave a socket that is closed
 * again (a zmq socket's close would leave its listener open a moment longer). */
static void closed_endpoint(char *ep, size_t len) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof addr;
    CHECK(bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0);
    CHECK(getsockname(fd, (struct sockaddr *)&addr, &alen) == 0);
    close(fd);
    snprintf(ep, len, "tcp://127.0.0.1:%u", ntohs(addr.sin_port));
}

/* Connects a PUSH with ZMQ_RECONNECT_STOP = `stop` to a closed port and returns the events
 * seen in 600 ms as a bit set. */
static int events_of_refused_connect(void *ctx, int stop, const char *name) {
    char ep[64];
    closed_endpoint(ep, sizeof ep);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(push, ZMQ_RECONNECT_STOP, stop);
    void *mon = tu_monitor(ctx, push, name, ZMQ_EVENT_ALL);
    CHECK_RC(zmq_connect(push, ep));
    /* Let it try for 600 ms (retries come every 100-200 ms), then read what it saw. */
    zmq_sleep(0);
    void *watch = zmq_stopwatch_start();
    while (zmq_stopwatch_intermediate(watch) < 600000)
        zmq_poll(NULL, 0, 50);
    zmq_stopwatch_stop(watch);
    tu_set_int(mon, ZMQ_RCVTIMEO, 0);
    int seen = 0, ev;
    while ((ev = tu_next_event(mon, NULL, 0)) != -1)
        seen |= ev;
    if (stop) {
        CHECK(zmq_send(push, "x", 1, ZMQ_DONTWAIT) == -1 && zmq_errno() == EAGAIN);
        /* The connect is forgotten. */
        CHECK(zmq_disconnect(push, ep) == -1 && zmq_errno() == ENOENT);
    } else {
        CHECK_RC(zmq_disconnect(push, ep));
    }
    tu_set_int(push, ZMQ_LINGER, 0);
    zmq_close(push);
    zmq_close(mon);
    return seen;
}

/* Connects a socket of `type` with ZMQ_RECONNECT_STOP = `stop` (retries every 50 ms) to a
 * listener that closes every connection at once; returns how many it accepted in 600 ms. */
static int accepts_of_dropped_connections(void *ctx, int type, int stop) {
    char ep[64];
    int lfd = tu_tcp_listener(ep, sizeof ep);
    void *dealer = zmq_socket(ctx, type);
    tu_set_int(dealer, ZMQ_RECONNECT_STOP, stop);
    tu_set_int(dealer, ZMQ_RECONNECT_IVL, 50);
    tu_set_int(dealer, ZMQ_LINGER, 0);
    CHECK_RC(zmq_connect(dealer, ep));
    int accepted = 0;
    for (int i = 0; i < 60; i++) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        if (poll(&p, 1, 10) == 1) {
            close(accept(lfd, NULL, NULL));
            accepted++;
        }
    }
    zmq_close(dealer);
    close(lfd);
    return accepted;
}

int main(void) {
    void *ctx = zmq_ctx_new();
    int seen = events_of_refused_connect(ctx, ZMQ_RECONNECT_STOP_CONN_REFUSED, "inproc://stop");
    CHECK(seen & ZMQ_EVENT_CLOSED);
    CHECK(!(seen & ZMQ_EVENT_CONNECT_RETRIED));
    seen = events_of_refused_connect(ctx, 0, "inproc://retry");
    CHECK(seen & ZMQ_EVENT_CLOSED);
    CHECK(seen & ZMQ_EVENT_CONNECT_RETRIED);
    CHECK(accepts_of_dropped_connections(ctx, ZMQ_DEALER, ZMQ_RECONNECT_STOP_HANDSHAKE_FAILED) == 1);
    CHECK(accepts_of_dropped_connections(ctx, ZMQ_DEALER, 0) > 1);
    /* A STREAM connection has no handshake to finish, and libzmq counts its every end as
     * one that ended before the handshake: with the bit it is never tried again. */
    CHECK(accepts_of_dropped_connections(ctx, ZMQ_STREAM, ZMQ_RECONNECT_STOP_HANDSHAKE_FAILED) == 1);
    CHECK(accepts_of_dropped_connections(ctx, ZMQ_STREAM, 0) > 1);
    CHECK(zmq_ctx_term(ctx) == 0);
    return tu_finish("test_reconnect_stop");
}
