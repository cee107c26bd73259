/* A STREAM socket's connect, as libzmq 4.3.4 has it (its test_connect_rid): the pipe and
 * routing id exist from zmq_connect on, so data sent at once waits for the connection;
 * the id stays across reconnects, each connection announced when it is up and when it
 * ends (after the data it brought); an empty frame closes the connection for good; and
 * ZMQ_CONNECT_ROUTING_ID names the peer of one connect only.
 * Against a plain TCP listener. Passes on Debian's libzmq. */
#include "testutil.h"
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

/* The next connection on listener `lfd` within `ms` ms, or -1. */
static int accept_within(int lfd, int ms) {
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    if (poll(&p, 1, ms) != 1) {
        return -1;
    }
    return accept(lfd, NULL, NULL);
}

/* read() on `fd` once it has something (or its end) within 3 s; -2 if nothing came. */
static int read_within(int fd, char *buf, size_t len) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 3000) != 1) {
        return -2;
    }
    return (int)read(fd, buf, len);
}

/* Receives [id][data] from `stream`, checks the id is `id`; returns the data's size. */
static int recv_from(void *stream, const char *id, char *buf, size_t len) {
    char got[64];
    int n = zmq_recv(stream, got, sizeof got, 0);
    CHECK(n == (int)strlen(id) && memcmp(got, id, (size_t)n) == 0);
    return zmq_recv(stream, buf, len, 0);
}

int main(void) {
    char ep[64];
    int lfd = tu_tcp_listener(ep, sizeof ep);

    void *ctx = zmq_ctx_new();
    void *stream = zmq_socket(ctx, ZMQ_STREAM);
    tu_set_int(stream, ZMQ_RCVTIMEO, 3000);
    tu_set_int(stream, ZMQ_LINGER, 0);
    CHECK_RC(zmq_setsockopt(stream, ZMQ_CONNECT_ROUTING_ID, "conn1", 5));
    CHECK_RC(zmq_connect(stream, ep));
    /* At once: the pipe is there. */
    CHECK(zmq_send(stream, "conn1", 5, ZMQ_SNDMORE) == 5);
    CHECK(zmq_send(stream, "hello", 5, 0) == 5);

    int fd = accept_within(lfd, 3000);
    CHECK(fd >= 0);
    char buf[64];
    CHECK(read_within(fd, buf, sizeof buf) == 5 && memcmp(buf, "hello", 5) == 0);
    CHECK(recv_from(stream, "conn1", buf, sizeof buf) == 0); /* connected */

    /* The peer's last words, then its end: in that order. */
    CHECK(write(fd, "bye", 3) == 3);
    close(fd);
    CHECK(recv_from(stream, "conn1", buf, sizeof buf) == 3);
    CHECK(memcmp(buf, "bye", 3) == 0);
    CHECK(recv_from(stream, "conn1", buf, sizeof buf) == 0); /* disconnected */

    /* It reconnects under the same id. */
    fd = accept_within(lfd, 3000);
    CHECK(fd >= 0);
    CHECK(recv_from(stream, "conn1", buf, sizeof buf) == 0);
    CHECK(zmq_send(stream, "conn1", 5, ZMQ_SNDMORE) == 5);
    CHECK(zmq_send(stream, "again", 5, 0) == 5);
    CHECK(read_within(fd, buf, sizeof buf) == 5 && memcmp(buf, "again", 5) == 0);

    /* An empty frame closes it for good: the peer sees the end, nothing reconnects, and
     * the id is gone. */
    CHECK(zmq_send(stream, "conn1", 5, ZMQ_SNDMORE) == 5);
    CHECK(zmq_send(stream, "", 0, 0) == 0);
    /* (libzmq closes it once the socket is used again: its pipe's end is a command the
     * socket takes in its next call.) */
    zmq_pollitem_t item = {stream, 0, ZMQ_POLLIN, 0};
    CHECK(zmq_poll(&item, 1, 200) == 0);
    CHECK(read_within(fd, buf, sizeof buf) == 0);
    close(fd);
    CHECK(accept_within(lfd, 500) == -1);
    CHECK(zmq_send(stream, "conn1", 5, ZMQ_SNDMORE) == -1 && zmq_errno() == EHOSTUNREACH);

    /* Without CONNECT_ROUTING_ID the id is made at connect, and reads back at once. */
    CHECK_RC(zmq_connect(stream, ep));
    char id[256];
    size_t id_len = sizeof id;
    CHECK_RC(zmq_getsockopt(stream, ZMQ_ROUTING_ID, id, &id_len));
    CHECK(id_len == 5 && id[0] == 0);
    CHECK(zmq_send(stream, id, id_len, ZMQ_SNDMORE) == (int)id_len);
    CHECK(zmq_send(stream, "x", 1, 0) == 1);
    fd = accept_within(lfd, 3000);
    CHECK(fd >= 0);
    CHECK(read_within(fd, buf, sizeof buf) == 1 && buf[0] == 'x');
    close(fd);

    /* A connect that never got a connection is not announced, not even when it goes. */
    void *lone = zmq_socket(ctx, ZMQ_STREAM);
    tu_set_int(lone, ZMQ_LINGER, 0);
    char closed_ep[64];
    close(tu_tcp_listener(closed_ep, sizeof closed_ep));
    CHECK_RC(zmq_connect(lone, closed_ep));
    zmq_pollitem_t lone_item = {lone, 0, ZMQ_POLLIN, 0};
    CHECK(zmq_poll(&lone_item, 1, 300) == 0);
    CHECK_RC(zmq_disconnect(lone, closed_ep));
    CHECK(zmq_poll(&lone_item, 1, 300) == 0);
    CHECK_RC(zmq_close(lone));

    CHECK_RC(zmq_close(stream));
    CHECK_RC(zmq_ctx_term(ctx));
    close(lfd);
    return tu_finish("test_stream_connect");
}
