/* STREAM, as libzmq 4.3.4 has it (its test_stream, test_stream_disconnect): a reply sent
 * right before the empty frame that closes the connection reaches the peer whole (ferromq
 * closed first and dropped the reply when both were taken in one batch), a connection
 * closed that way is not announced as a disconnect (ferromq announced it), and
 * ZMQ_ROUTING_ID reads back the id the socket made up for its last peer. Passes on
 * Debian's libzmq. */
#include "testutil.h"
#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int main(void) {
    void *ctx = zmq_ctx_new();
    void *server = zmq_socket(ctx, ZMQ_STREAM);
    tu_set_int(server, ZMQ_RCVTIMEO, 3000);
    CHECK_RC(zmq_bind(server, "tcp://127.0.0.1:*"));
    char ep[256];
    tu_last_endpoint(server, ep, sizeof ep);

    for (int round = 0; round < 20; round++) {
        int fd = tu_raw_connect(ep);
        unsigned char id[256], buf[256];
        int id_len = zmq_recv(server, id, sizeof id, 0);
        CHECK(id_len > 0);
        CHECK(zmq_recv(server, buf, sizeof buf, 0) == 0); /* the connect notification */
        /* ZMQ_ROUTING_ID: the id made up for this peer. */
        unsigned char own[256];
        size_t own_len = sizeof own;
        CHECK_RC(zmq_getsockopt(server, ZMQ_ROUTING_ID, own, &own_len));
        CHECK((int)own_len == id_len && memcmp(own, id, own_len) == 0);
        /* A reply, then the close, sent back to back. */
        static const char reply[] = "HTTP/1.0 200 OK\r\n\r\nHello";
        CHECK(zmq_send(server, id, (size_t)id_len, ZMQ_SNDMORE) == id_len);
        CHECK(zmq_send(server, reply, sizeof reply, ZMQ_SNDMORE) == (int)sizeof reply);
        CHECK(zmq_send(server, id, (size_t)id_len, ZMQ_SNDMORE) == id_len);
        CHECK(zmq_send(server, NULL, 0, 0) == 0);
        /* Read until the whole reply is in, the stream ends, or 3 s pass. */
        struct timeval tv = {3, 0};
        CHECK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0);
        size_t got = 0;
        while (got < sizeof reply) {
            ssize_t n = read(fd, buf + got, sizeof buf - got);
            if (n <= 0) {
                break;
            }
            got += (size_t)n;
        }
        CHECK(got == sizeof reply && memcmp(buf, reply, sizeof reply) == 0);
        /* Then the stream ends. libzmq closes the connection only when the socket is used
         * again (it handles its commands there): an event loop polls it. */
        zmq_pollitem_t it = {server, 0, ZMQ_POLLIN, 0};
        CHECK(zmq_poll(&it, 1, 50) == 0);
        CHECK(read(fd, buf, sizeof buf) == 0);
        close(fd);
        /* A connection closed from this side is not announced. */
        CHECK(zmq_poll(&it, 1, round == 19 ? 500 : 50) == 0);
    }
    CHECK_RC(zmq_close(server));
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_stream_close");
}
