/* SNDHWM and RCVHWM set after the pipes exist re-size them, as in libzmq 4.3.4 (its
 * test_sockopt_hwm): an inproc queue holds the writer's SNDHWM plus the reader's RCVHWM,
 * whichever side changes its option, before or after the connect. Passes on Debian's
 * libzmq. */
#include "testutil.h"
#include <errno.h>
#include <time.h>

/* libzmq hands a changed mark and the reader's progress to the writer as commands, which
 * its writer takes at most about once a millisecond: give them time. */
static void settle(void) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* How many empty messages `s` takes with ZMQ_DONTWAIT before EAGAIN. */
static int sends_until_full(void *s) {
    int n = 0;
    while (n < 10000 && zmq_send(s, NULL, 0, ZMQ_DONTWAIT) == 0) {
        n++;
    }
    if (n < 10000) {
        CHECK(zmq_errno() == EAGAIN);
    }
    return n;
}

int main(void) {
    void *ctx = zmq_ctx_new();

    /* Connect first, then bind: both parts known at the bind; then the writer grows. */
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    tu_set_int(push, ZMQ_SNDHWM, 1);
    tu_set_int(pull, ZMQ_RCVHWM, 1);
    CHECK_RC(zmq_connect(pull, "inproc://hwm-a"));
    CHECK_RC(zmq_bind(push, "inproc://hwm-a"));
    tu_set_int(push, ZMQ_SNDHWM, 5);
    CHECK(sends_until_full(push) == 6);
    CHECK_RC(zmq_close(push));
    CHECK_RC(zmq_close(pull));

    /* The reader's part grows. */
    push = zmq_socket(ctx, ZMQ_PUSH);
    pull = zmq_socket(ctx, ZMQ_PULL);
    tu_set_int(push, ZMQ_SNDHWM, 1);
    tu_set_int(pull, ZMQ_RCVHWM, 1);
    CHECK_RC(zmq_bind(push, "inproc://hwm-r"));
    CHECK_RC(zmq_connect(pull, "inproc://hwm-r"));
    tu_set_int(pull, ZMQ_RCVHWM, 3);
    settle();
    CHECK(sends_until_full(push) == 4);
    CHECK_RC(zmq_close(push));
    CHECK_RC(zmq_close(pull));

    /* Bind first, then connect (the connecting side is the writer); the writer's part
     * shrinks below what is queued: nothing queued is lost, and sends resume once the
     * reader has taken enough. */
    pull = zmq_socket(ctx, ZMQ_PULL);
    push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(pull, ZMQ_RCVHWM, 2);
    tu_set_int(push, ZMQ_SNDHWM, 8);
    CHECK_RC(zmq_bind(pull, "inproc://hwm-b"));
    CHECK_RC(zmq_connect(push, "inproc://hwm-b"));
    CHECK(sends_until_full(push) == 10);
    tu_set_int(push, ZMQ_SNDHWM, 2);
    int got = 0;
    while (zmq_recv(pull, NULL, 0, ZMQ_DONTWAIT) == 0) {
        got++;
    }
    CHECK(got == 10);
    settle();
    CHECK(sends_until_full(push) == 4);
    CHECK_RC(zmq_close(push));
    CHECK_RC(zmq_close(pull));

    /* 0 (no limit) on one side makes the queue unlimited. */
    push = zmq_socket(ctx, ZMQ_PUSH);
    pull = zmq_socket(ctx, ZMQ_PULL);
    CHECK_RC(zmq_bind(pull, "inproc://hwm-c"));
    CHECK_RC(zmq_connect(push, "inproc://hwm-c"));
    tu_set_int(push, ZMQ_SNDHWM, 0);
    settle();
    CHECK(sends_until_full(push) == 10000);
    CHECK_RC(zmq_close(push));
    CHECK_RC(zmq_close(pull));

    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_hwm_change");
}
