/* ferromq_recv_msgs: ferromq's extension (not in zmq.h) that bindings with batch receives
 * use to take many queued frames per call. Checked over tcp: frames in order with their
 * more flags, a call ending inside a message, and that ZMQ_FD / ZMQ_EVENTS behave after a
 * batch as after zmq_msg_recv with ZMQ_DONTWAIT (an event loop waiting on ZMQ_FD relies on
 * it). */
#include "testutil.h"
#include <poll.h>

int ferromq_recv_msgs(void *socket, zmq_msg_t *msgs, int count);

static int events(void *s) {
    int ev = 0;
    size_t sz = sizeof ev;
    CHECK_RC(zmq_getsockopt(s, ZMQ_EVENTS, &ev, &sz));
    return ev;
}

/* Checks that `m` holds `want` with the more flag `more`, then closes it. */
static void expect_frame(zmq_msg_t *m, const char *want, int more) {
    size_t n = strlen(want);
    CHECK(zmq_msg_size(m) == n && memcmp(zmq_msg_data(m), want, n) == 0);
    CHECK(zmq_msg_more(m) == more);
    CHECK_RC(zmq_msg_close(m));
}

int main(void) {
    void *ctx = zmq_ctx_new();
    zmq_msg_t msgs[8];

    void *lone = zmq_socket(ctx, ZMQ_PULL);
    CHECK_ERR(ferromq_recv_msgs(NULL, msgs, 8), ENOTSOCK);
    CHECK_ERR(ferromq_recv_msgs(lone, msgs, 0), EINVAL);
    CHECK_ERR(ferromq_recv_msgs(lone, NULL, 8), EFAULT);
    CHECK_ERR(ferromq_recv_msgs(lone, msgs, 8), EAGAIN);
    zmq_close(lone);

    void *pull, *push;
    tu_push_pull(ctx, "tcp://127.0.0.1:*", &pull, &push);
    int fd;
    size_t fdsz = sizeof fd;
    CHECK_RC(zmq_getsockopt(pull, ZMQ_FD, &fd, &fdsz));

    /* "one" | "t","w","o" (three frames) | "four" */
    CHECK(zmq_send(push, "one", 3, 0) == 3);
    CHECK(zmq_send(push, "t", 1, ZMQ_SNDMORE) == 1);
    CHECK(zmq_send(push, "w", 1, ZMQ_SNDMORE) == 1);
    CHECK(zmq_send(push, "o", 1, 0) == 1);
    CHECK(zmq_send(push, "four", 4, 0) == 4);

    /* three slots at a time, polling ZMQ_FD while nothing is there */
    int got = 0;
    for (int tries = 0; tries < 500 && got < 5; tries++) {
        struct pollfd p = {fd, POLLIN, 0};
        if (!(events(pull) & ZMQ_POLLIN)) poll(&p, 1, 10);
        int want = 5 - got < 3 ? 5 - got : 3;
        int n = ferromq_recv_msgs(pull, msgs + got, want);
        if (n < 0) {
            CHECK(zmq_errno() == EAGAIN);
            continue;
        }
        CHECK(n <= want);
        got += n;
    }
    CHECK(got == 5);
    expect_frame(&msgs[0], "one", 0);
    expect_frame(&msgs[1], "t", 1);
    expect_frame(&msgs[2], "w", 1);
    expect_frame(&msgs[3], "o", 0);
    expect_frame(&msgs[4], "four", 0);

    /* nothing left: EAGAIN, ZMQ_EVENTS without POLLIN */
    CHECK_ERR(ferromq_recv_msgs(pull, msgs, 8), EAGAIN);
    CHECK(!(events(pull) & ZMQ_POLLIN));

    /* a new message makes ZMQ_FD readable (the EAGAIN above armed it) */
    CHECK(zmq_send(push, "five", 4, 0) == 4);
    struct pollfd p = {fd, POLLIN, 0};
    CHECK(poll(&p, 1, 5000) == 1);
    int ready = 0;
    for (int tries = 0; tries < 500 && !ready; tries++) {
        ready = events(pull) & ZMQ_POLLIN;
        if (!ready) poll(NULL, 0, 10);
    }
    CHECK(ready);
    CHECK(ferromq_recv_msgs(pull, msgs, 8) == 1);
    expect_frame(&msgs[0], "five", 0);

    tu_set_int(push, ZMQ_LINGER, 0);
    zmq_close(push);
    zmq_close(pull);
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_recv_msgs");
}
