/* STREAM notifications and the ZMTP greeting's first write, as libzmq 4.3.4 has them (its
 * test_stream): the id frame of a connect or disconnect notification carries the
 * connection's Peer-Address, as data does, and a ZMTP peer's first bytes are the 10-byte
 * signature alone (its major version follows once the peer's signature is in), which a
 * STREAM socket speaking ZMTP by hand reads as one chunk. Passes on Debian's libzmq. */
#include "testutil.h"
#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* Receives [id][data] from `stream`: the id into `id` (its Peer-Address checked), the
 * data into `buf`; returns the data's size. */
static int recv_chunk(void *stream, zmq_msg_t *id, unsigned char *buf, size_t len) {
    CHECK(zmq_msg_recv(id, stream, 0) > 0);
    CHECK(zmq_msg_more(id));
    const char *addr = zmq_msg_gets(id, "Peer-Address");
    CHECK(addr != NULL && strcmp(addr, "127.0.0.1") == 0);
    return zmq_recv(stream, buf, len, 0);
}

int main(void) {
    void *ctx = zmq_ctx_new();
    void *stream = zmq_socket(ctx, ZMQ_STREAM);
    tu_set_int(stream, ZMQ_RCVTIMEO, 3000);
    tu_set_int(stream, ZMQ_LINGER, 0);
    CHECK_RC(zmq_bind(stream, "tcp://127.0.0.1:*"));
    char ep[256];
    tu_last_endpoint(stream, ep, sizeof ep);
    zmq_msg_t id;
    zmq_msg_init(&id);
    unsigned char buf[256];

    /* A raw client: connected, then gone; both notifications carry Peer-Address. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_port = htons((unsigned short)atoi(strrchr(ep, ':') + 1));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(recv_chunk(stream, &id, buf, sizeof buf) == 0);
    close(fd);
    CHECK(recv_chunk(stream, &id, buf, sizeof buf) == 0);

    /* A DEALER: its first chunk is the signature alone. */
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    tu_set_int(dealer, ZMQ_LINGER, 0);
    CHECK_RC(zmq_connect(dealer, ep));
    CHECK(recv_chunk(stream, &id, buf, sizeof buf) == 0);
    int n = recv_chunk(stream, &id, buf, sizeof buf);
    CHECK(n == 10);
    CHECK(buf[0] == 0xff && buf[9] == 0x7f);
    /* Our signature in: its major version (3) comes next, alone. */
    static const unsigned char sig[10] = {0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f};
    CHECK(zmq_msg_send(&id, stream, ZMQ_SNDMORE) > 0);
    CHECK(zmq_send(stream, sig, sizeof sig, 0) == sizeof sig);
    n = recv_chunk(stream, &id, buf, sizeof buf);
    CHECK(n == 1 && buf[0] == 3);

    zmq_msg_close(&id);
    CHECK_RC(zmq_close(dealer));
    CHECK_RC(zmq_close(stream));
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_stream_notify");
}
