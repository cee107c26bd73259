/* A tcp connect from a given local address (`tcp://source:port;host:port`), as Debian's
 * libzmq 4.3.4 makes it (this program passes on it too): the peer sees the source
 * address (the message's Peer-Address); a source without a port is never connected
 * from (every attempt fails and is retried). */
#include "testutil.h"

/* Connects a PUSH to a PULL on 127.0.0.1 through `source` and sends one message:
 * 1 and the peer's address in `peer` if it arrived, 0 if not. */
static int delivered(const char *source, char *peer, size_t peer_len) {
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(push, ZMQ_LINGER, 0);
    tu_set_int(push, ZMQ_RECONNECT_IVL, 20);
    CHECK_RC(zmq_bind(pull, "tcp://127.0.0.1:*"));
    char ep[256], connect_ep[320];
    tu_last_endpoint(pull, ep, sizeof ep);
    snprintf(connect_ep, sizeof connect_ep, "tcp://%s;%s", source, ep + strlen("tcp://"));
    CHECK_RC(zmq_connect(push, connect_ep));
    CHECK_RC(zmq_send(push, "x", 1, ZMQ_DONTWAIT));
    tu_set_int(pull, ZMQ_RCVTIMEO, 500);
    zmq_msg_t m;
    zmq_msg_init(&m);
    int got = zmq_msg_recv(&m, pull, 0) == 1;
    if (got) {
        const char *a = zmq_msg_gets(&m, "Peer-Address");
        CHECK(a != NULL);
        snprintf(peer, peer_len, "%s", a ? a : "");
    }
    zmq_msg_close(&m);
    zmq_close(push);
    zmq_close(pull);
    CHECK_RC(zmq_ctx_term(ctx));
    return got;
}

int main(void) {
    char peer[64] = "";
    CHECK(delivered("127.0.0.2:0", peer, sizeof peer));
    CHECK(strcmp(peer, "127.0.0.2") == 0);
    CHECK(delivered("127.0.0.3:*", peer, sizeof peer));
    CHECK(strcmp(peer, "127.0.0.3") == 0);
    CHECK(delivered("127.0.0.1:0", peer, sizeof peer));
    CHECK(strcmp(peer, "127.0.0.1") == 0);
    CHECK(!delivered("127.0.0.2", peer, sizeof peer));
    return tu_finish("test_connect_source");
}
