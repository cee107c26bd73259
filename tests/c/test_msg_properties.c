/* Message properties as libzmq 4.3.4 gives them (probed on Debian's libzmq side by side):
 * zmq_msg_gets matches names exactly and finds "Identity" only where the peer sent one
 * (REQ, DEALER and ROUTER do; a PAIR does not), ZMQ_SRCFD is the descriptor of the tcp
 * connection a message came in on, an ipc peer's Peer-Address is "localhost:UID:GID:PID",
 * ZMQ_SHARED says that zmq_msg_copy shared a body, and
 * zmq_strerror words EHOSTUNREACH as libzmq does. */
#include "testutil.h"
#include <sys/socket.h>
#include <unistd.h>

/* A message through a fresh tcp connection from a `tx_type` socket (routing id `id` if
 * not NULL) to a `rx_type` one; for a ROUTER, its body frame. */
static void received(void *ctx, int tx_type, int rx_type, const char *id, zmq_msg_t *m) {
    void *rx = zmq_socket(ctx, rx_type);
    void *tx = zmq_socket(ctx, tx_type);
    char ep[64];
    if (id != NULL)
        CHECK_RC(zmq_setsockopt(tx, ZMQ_ROUTING_ID, id, strlen(id)));
    tu_set_int(rx, ZMQ_RCVTIMEO, 5000);
    CHECK_RC(zmq_bind(rx, "tcp://127.0.0.1:*"));
    tu_last_endpoint(rx, ep, sizeof ep);
    CHECK_RC(zmq_connect(tx, ep));
    CHECK(zmq_send(tx, "hello", 5, 0) == 5);
    zmq_msg_init(m);
    CHECK(zmq_msg_recv(m, rx, 0) >= 0);
    if (rx_type == ZMQ_ROUTER)
        CHECK(zmq_msg_recv(m, rx, 0) == 5);
    /* Read while the connection is open: the descriptor is closed with it. */
    int fd = zmq_msg_get(m, ZMQ_SRCFD);
    CHECK(fd >= 0);
    if (fd >= 0) {
        int type = 0;
        socklen_t len = sizeof type;
        CHECK(getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM);
    }
    tu_set_int(tx, ZMQ_LINGER, 0);
    zmq_close(tx);
    zmq_close(rx);
}

int main(void) {
    void *ctx = zmq_ctx_new();
    zmq_msg_t m;

    received(ctx, ZMQ_PAIR, ZMQ_PAIR, NULL, &m);
    const char *v = zmq_msg_gets(&m, "Socket-Type");
    CHECK(v != NULL && strcmp(v, "PAIR") == 0);
    CHECK(zmq_msg_gets(&m, "socket-type") == NULL && zmq_errno() == EINVAL);
    CHECK(zmq_msg_gets(&m, "Identity") == NULL && zmq_errno() == EINVAL);
    v = zmq_msg_gets(&m, "Peer-Address");
    CHECK(v != NULL && strcmp(v, "127.0.0.1") == 0);
    zmq_msg_close(&m);

    received(ctx, ZMQ_DEALER, ZMQ_ROUTER, "abc", &m);
    v = zmq_msg_gets(&m, "Identity");
    CHECK(v != NULL && strcmp(v, "abc") == 0);
    CHECK(zmq_msg_gets(&m, "Routing-Id") == NULL);
    zmq_msg_close(&m);

    /* An ipc peer's address is its credentials, "localhost:UID:GID:PID" (here our own:
     * the peer is this process). */
    void *rx = zmq_socket(ctx, ZMQ_PAIR);
    void *tx = zmq_socket(ctx, ZMQ_PAIR);
    char ipc_ep[64];
    snprintf(ipc_ep, sizeof ipc_ep, "ipc://@ferromq-msg-properties-%d", (int)getpid());
    tu_set_int(rx, ZMQ_RCVTIMEO, 5000);
    tu_set_int(tx, ZMQ_RCVTIMEO, 5000);
    CHECK_RC(zmq_bind(rx, ipc_ep));
    CHECK_RC(zmq_connect(tx, ipc_ep));
    char want[64];
    snprintf(want, sizeof want, "localhost:%u:%u:%d", (unsigned)getuid(), (unsigned)getgid(),
             (int)getpid());
    void *sides[2][2] = {{tx, rx}, {rx, tx}};
    for (int i = 0; i < 2; i++) {
        CHECK(zmq_send(sides[i][0], "hello", 5, 0) == 5);
        zmq_msg_init(&m);
        CHECK(zmq_msg_recv(&m, sides[i][1], 0) == 5);
        v = zmq_msg_gets(&m, "Peer-Address");
        CHECK(v != NULL && strcmp(v, want) == 0);
        zmq_msg_close(&m);
    }
    tu_set_int(tx, ZMQ_LINGER, 0);
    zmq_close(tx);
    zmq_close(rx);

    /* Messages not from a connection have no descriptor. */
    zmq_msg_init_size(&m, 1000);
    CHECK(zmq_msg_get(&m, ZMQ_SRCFD) == -1 && zmq_errno() == EINVAL);

    /* A copy shares a body of this size (not a small one): both say so, and the original
     * still does once the copy is closed. */
    zmq_msg_t copy;
    zmq_msg_init(&copy);
    CHECK(zmq_msg_get(&m, ZMQ_SHARED) == 0);
    CHECK_RC(zmq_msg_copy(&copy, &m));
    CHECK(zmq_msg_get(&m, ZMQ_SHARED) == 1);
    CHECK(zmq_msg_get(&copy, ZMQ_SHARED) == 1);
    CHECK(zmq_msg_data(&m) == zmq_msg_data(&copy));
    zmq_msg_close(&copy);
    CHECK(zmq_msg_get(&m, ZMQ_SHARED) == 1);
    zmq_msg_close(&m);
    zmq_msg_init_size(&m, 10);
    zmq_msg_init(&copy);
    CHECK_RC(zmq_msg_copy(&copy, &m));
    CHECK(zmq_msg_get(&m, ZMQ_SHARED) == 0);
    zmq_msg_close(&copy);
    zmq_msg_close(&m);

    CHECK(strcmp(zmq_strerror(EHOSTUNREACH), "Host unreachable") == 0);

    CHECK(zmq_ctx_term(ctx) == 0);
    return tu_finish("test_msg_properties");
}
