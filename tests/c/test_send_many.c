/* ferromq_send_many: ferromq's extension (not in zmq.h) that bindings with batch APIs use
 * to queue many one-frame messages in one call, their reader woken once at the end. */
#include "testutil.h"

int ferromq_send_many(void *socket, const void *const *bufs, const size_t *lens, int count);

/* Receives `n` messages on `pull` and checks each is "m<i>" for i = first, first+1, ... */
static void expect_in_order(void *pull, int first, int n) {
    char buf[16], want[16];
    for (int i = first; i < first + n; i++) {
        int len = snprintf(want, sizeof want, "m%d", i);
        CHECK(zmq_recv(pull, buf, sizeof buf, 0) == len);
        CHECK(memcmp(buf, want, (size_t)len) == 0);
    }
}

int main(void) {
    void *ctx = zmq_ctx_new();
    char text[40][16];
    const void *bufs[40];
    size_t lens[40];
    for (int i = 0; i < 40; i++) {
        lens[i] = (size_t)snprintf(text[i], sizeof text[i], "m%d", i);
        bufs[i] = text[i];
    }

    /* bad arguments: libzmq's errno conventions */
    void *lone = zmq_socket(ctx, ZMQ_PUSH);
    CHECK_ERR(ferromq_send_many(NULL, bufs, lens, 1), ENOTSOCK);
    CHECK_ERR(ferromq_send_many(lone, bufs, lens, -1), EINVAL);
    CHECK_ERR(ferromq_send_many(lone, NULL, lens, 1), EFAULT);
    CHECK_ERR(ferromq_send_many(lone, bufs, NULL, 1), EFAULT);
    CHECK(ferromq_send_many(lone, NULL, NULL, 0) == 0);
    /* no peer: the first finds no room, as zmq_send with ZMQ_DONTWAIT */
    CHECK_ERR(ferromq_send_many(lone, bufs, lens, 3), EAGAIN);
    zmq_close(lone);

    /* over tcp, with a receiver already waiting: all of them arrive, in order (the
     * connection is woken once, at the end) */
    void *pull, *push;
    tu_push_pull(ctx, "tcp://127.0.0.1:*", &pull, &push);
    tu_set_int(pull, ZMQ_RCVTIMEO, 5000);
    CHECK(ferromq_send_many(push, bufs, lens, 40) == 40);
    expect_in_order(pull, 0, 40);
    tu_set_int(push, ZMQ_LINGER, 0);
    zmq_close(push);
    zmq_close(pull);

    /* inproc at the high-water mark (SNDHWM 5 + RCVHWM 5): stops at the mark, loses
     * nothing, and the next call goes on once the reader made room */
    pull = zmq_socket(ctx, ZMQ_PULL);
    push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(pull, ZMQ_RCVHWM, 5);
    tu_set_int(push, ZMQ_SNDHWM, 5);
    tu_set_int(pull, ZMQ_RCVTIMEO, 5000);
    CHECK_RC(zmq_bind(pull, "inproc://send-many"));
    CHECK_RC(zmq_connect(push, "inproc://send-many"));
    CHECK(ferromq_send_many(push, bufs, lens, 40) == 10);
    CHECK_ERR(ferromq_send_many(push, bufs + 10, lens + 10, 30), EAGAIN);
    expect_in_order(pull, 0, 10);
    CHECK(ferromq_send_many(push, bufs + 10, lens + 10, 30) == 10);
    expect_in_order(pull, 10, 10);

    zmq_close(push);
    zmq_close(pull);
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_send_many");
}
