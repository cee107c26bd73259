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

/* make_pair's layout: the PUSH binds (else the PULL does); the connect comes first. */
#define PUSH_BINDS 1
#define CONNECT_FIRST 2

/* A PUSH and a PULL joined over inproc endpoint `ep` as `layout` says, with SNDHWM `snd`
 * on the PUSH and RCVHWM `rcv` on the PULL (-1: the default). */
static void make_pair(void *ctx, const char *ep, int layout, int snd, int rcv, void **push,
                      void **pull) {
    *push = zmq_socket(ctx, ZMQ_PUSH);
    *pull = zmq_socket(ctx, ZMQ_PULL);
    if (snd >= 0) {
        tu_set_int(*push, ZMQ_SNDHWM, snd);
    }
    if (rcv >= 0) {
        tu_set_int(*pull, ZMQ_RCVHWM, rcv);
    }
    void *binder = layout & PUSH_BINDS ? *push : *pull;
    void *connecter = layout & PUSH_BINDS ? *pull : *push;
    if (layout & CONNECT_FIRST) {
        CHECK_RC(zmq_connect(connecter, ep));
        CHECK_RC(zmq_bind(binder, ep));
    } else {
        CHECK_RC(zmq_bind(binder, ep));
        CHECK_RC(zmq_connect(connecter, ep));
    }
}

static void close_pair(void *push, void *pull) {
    CHECK_RC(zmq_close(push));
    CHECK_RC(zmq_close(pull));
}

int main(void) {
    void *ctx = zmq_ctx_new();

    void *push, *pull;
    /* Connect first, then bind: both parts known at the bind; then the writer grows. */
    make_pair(ctx, "inproc://hwm-a", PUSH_BINDS | CONNECT_FIRST, 1, 1, &push, &pull);
    tu_set_int(push, ZMQ_SNDHWM, 5);
    CHECK(sends_until_full(push) == 6);
    close_pair(push, pull);

    /* The reader's part grows. */
    make_pair(ctx, "inproc://hwm-r", PUSH_BINDS, 1, 1, &push, &pull);
    tu_set_int(pull, ZMQ_RCVHWM, 3);
    settle();
    CHECK(sends_until_full(push) == 4);
    close_pair(push, pull);

    /* Bind first, then connect (the connecting side is the writer); the writer's part
     * shrinks below what is queued: nothing queued is lost, and sends resume once the
     * reader has taken enough. */
    make_pair(ctx, "inproc://hwm-b", 0, 8, 2, &push, &pull);
    CHECK(sends_until_full(push) == 10);
    tu_set_int(push, ZMQ_SNDHWM, 2);
    int got = 0;
    while (zmq_recv(pull, NULL, 0, ZMQ_DONTWAIT) == 0) {
        got++;
    }
    CHECK(got == 10);
    settle();
    CHECK(sends_until_full(push) == 4);
    close_pair(push, pull);

    /* 0 (no limit) on one side makes the queue unlimited. */
    make_pair(ctx, "inproc://hwm-c", 0, -1, -1, &push, &pull);
    tu_set_int(push, ZMQ_SNDHWM, 0);
    settle();
    CHECK(sends_until_full(push) == 10000);
    close_pair(push, pull);

    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_hwm_change");
}
