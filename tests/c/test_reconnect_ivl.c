/* Reconnect intervals as libzmq 4.3.4 waits them (CONNECT_RETRIED's value): the current
 * interval (RECONNECT_IVL, doubled per try up to RECONNECT_IVL_MAX when that is set) plus
 * a random part below RECONNECT_IVL, so that peers that lost the same server do not all
 * come back at once. Passes on Debian's libzmq too. */
#include "testutil.h"

#define TRIES 8

/* The first TRIES CONNECT_RETRIED values of a PUSH connecting to a path nobody binds. */
static void retries(int ivl, int ivl_max, unsigned *out) {
    void *ctx = zmq_ctx_new();
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(push, ZMQ_RECONNECT_IVL, ivl);
    tu_set_int(push, ZMQ_RECONNECT_IVL_MAX, ivl_max);
    tu_set_int(push, ZMQ_LINGER, 0);
    CHECK_RC(zmq_socket_monitor(push, "inproc://retry-ivl-mon", ZMQ_EVENT_CONNECT_RETRIED));
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    tu_set_int(mon, ZMQ_RCVTIMEO, 5000);
    CHECK_RC(zmq_connect(mon, "inproc://retry-ivl-mon"));
    CHECK_RC(zmq_connect(push, "ipc:///tmp/ferromq-test-nobody-binds-this"));
    for (int i = 0; i < TRIES; i++) {
        out[i] = 0;
        CHECK(tu_next_event_value(mon, &out[i], NULL, 0) == ZMQ_EVENT_CONNECT_RETRIED);
    }
    zmq_close(push);
    zmq_close(mon);
    CHECK_RC(zmq_ctx_term(ctx));
}

int main(void) {
    unsigned v[TRIES];
    retries(20, 0, v);
    int all_equal = 1;
    for (int i = 0; i < TRIES; i++) {
        CHECK(v[i] >= 20 && v[i] < 40);
        all_equal &= v[i] == v[0];
    }
    /* Eight equal draws from 20 values: once in 20^7 runs. */
    CHECK(!all_equal);

    retries(10, 200, v);
    unsigned base = 10;
    for (int i = 0; i < TRIES; i++) {
        CHECK(v[i] >= base && v[i] < base + 10);
        base = base * 2 > 200 ? 200 : base * 2;
    }
    return tu_finish("test_reconnect_ivl");
}
