/* How a connect ends, as libzmq 4.3.4 has it (its test_spec_pushpull, test_reconnect_ivl
 * and test_iov rely on each): zmq_disconnect drops what came over that connection and was
 * not read yet; with RECONNECT_IVL -1 a connection the peer ended ends the connect too (a
 * PAIR may connect again; zmq_disconnect then gives ENOENT); zmq_recviov returns the
 * number of frames. ferromq kept the unread messages, kept the dead connect (a PAIR's
 * second connect was refused) and returned the bytes. Passes on Debian's libzmq. */
#include "testutil.h"
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

static int wait_in(void *s, int ms) {
    zmq_pollitem_t it = {s, 0, ZMQ_POLLIN, 0};
    return zmq_poll(&it, 1, ms) == 1;
}

static int wait_event(void *mon, int want) {
    for (;;) {
        int ev = tu_next_event(mon, NULL, 0);
        if (ev == -1 || ev == want) {
            return ev == want;
        }
    }
}

int main(void) {
    void *ctx = zmq_ctx_new();
    char ep[256];

    /* Unread input goes with zmq_disconnect. */
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(push, ZMQ_LINGER, 0);
    CHECK_RC(zmq_bind(push, "tcp://127.0.0.1:*"));
    tu_last_endpoint(push, ep, sizeof ep);
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    tu_set_int(pull, ZMQ_LINGER, 0);
    CHECK_RC(zmq_connect(pull, ep));
    CHECK(zmq_send(push, "1", 1, 0) == 1);
    CHECK(wait_in(pull, 2000));
    CHECK_RC(zmq_disconnect(pull, ep));
    char buf[16];
    CHECK_ERR(zmq_recv(pull, buf, sizeof buf, ZMQ_DONTWAIT), EAGAIN);

    /* zmq_recviov counts frames. */
    void *a = zmq_socket(ctx, ZMQ_PAIR), *b = zmq_socket(ctx, ZMQ_PAIR);
    CHECK_RC(zmq_bind(a, "inproc://iov"));
    CHECK_RC(zmq_connect(b, "inproc://iov"));
    CHECK(zmq_send(a, "one", 3, ZMQ_SNDMORE) == 3);
    CHECK(zmq_send(a, "three", 5, 0) == 5);
    struct iovec iov[4];
    size_t count = 4;
    CHECK(zmq_recviov(b, iov, &count, 0) == 2);
    CHECK(count == 2 && iov[0].iov_len == 3 && iov[1].iov_len == 5);
    for (size_t i = 0; i < count; i++) {
        free(iov[i].iov_base);
    }

    /* RECONNECT_IVL -1: the ended connection ends the connect. */
    void *sb = zmq_socket(ctx, ZMQ_PAIR), *sc = zmq_socket(ctx, ZMQ_PAIR);
    tu_set_int(sb, ZMQ_LINGER, 0);
    tu_set_int(sc, ZMQ_LINGER, 0);
    tu_set_int(sc, ZMQ_RECONNECT_IVL, -1);
    tu_set_int(sb, ZMQ_RCVTIMEO, 2000);
    tu_set_int(sc, ZMQ_RCVTIMEO, 2000);
    CHECK_RC(zmq_bind(sb, "tcp://127.0.0.1:*"));
    tu_last_endpoint(sb, ep, sizeof ep);
    void *mon = tu_monitor(ctx, sc, "inproc://connect-end-mon", ZMQ_EVENT_DISCONNECTED);
    CHECK_RC(zmq_connect(sc, ep));
    CHECK(zmq_send(sc, "x", 1, 0) == 1);
    CHECK(zmq_recv(sb, buf, sizeof buf, 0) == 1);
    CHECK_RC(zmq_unbind(sb, ep));
    CHECK(wait_event(mon, ZMQ_EVENT_DISCONNECTED));
    /* The connect ends just after the event: look for up to 2 s. */
    int ended = 0;
    for (int i = 0; i < 200 && !ended; i++) {
        ended = zmq_disconnect(sc, ep) == -1 && zmq_errno() == ENOENT;
        if (!ended) {
            usleep(10 * 1000);
        }
    }
    CHECK(ended);
    CHECK_RC(zmq_bind(sb, ep));
    CHECK_RC(zmq_connect(sc, ep));
    CHECK(zmq_send(sc, "y", 1, 0) == 1);
    CHECK(zmq_recv(sb, buf, sizeof buf, 0) == 1 && buf[0] == 'y');

    void *all[] = {push, pull, a, b, sb, sc, mon};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        tu_set_int(all[i], ZMQ_LINGER, 0);
        CHECK_RC(zmq_close(all[i]));
    }
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_connect_end");
}
