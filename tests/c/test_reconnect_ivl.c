/* Reconnects as Debian's libzmq 4.3.4 makes them (this program passes on it too): each
 * waits (CONNECT_RETRIED's value) the current interval (RECONNECT_IVL, doubled per try up
 * to RECONNECT_IVL_MAX when that is set) plus a random part below RECONNECT_IVL, so that
 * peers that lost the same server do not all come back at once; a failed ipc attempt is
 * reported as its socket CLOSED before the retry. */
#include "testutil.h"

#define TRIES 8

/* The first TRIES CONNECT_RETRIED values of a PUSH connecting to a path nobody binds. */
static void retries(int ivl, int ivl_max, unsigned *out) {
    void *ctx = zmq_ctx_new();
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(push, ZMQ_RECONNECT_IVL, ivl);
    tu_set_int(push, ZMQ_RECONNECT_IVL_MAX, ivl_max);
    tu_set_int(push, ZMQ_LINGER, 0);
    void *mon = tu_monitor(ctx, push, "inproc://retry-ivl-mon", ZMQ_EVENT_CONNECT_RETRIED);
    CHECK_RC(zmq_connect(push, "ipc:///tmp/ferromq-test-nobody-binds-this"));
    for (int i = 0; i < TRIES; i++) {
        out[i] = 0;
        CHECK(tu_next_event_value(mon, &out[i], NULL, 0) == ZMQ_EVENT_CONNECT_RETRIED);
    }
    zmq_close(push);
    zmq_close(mon);
    CHECK_RC(zmq_ctx_term(ctx));
}

/* A failed ipc connect (nobody bound, a path or an abstract name): libzmq reports the
 * attempt's socket CLOSED, then CONNECT_RETRIED; no CONNECT_DELAYED (a Unix socket
 * connects or fails at once). */
static void failed_ipc_events(const char *ep) {
    void *ctx = zmq_ctx_new();
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(push, ZMQ_RECONNECT_IVL, 20);
    tu_set_int(push, ZMQ_LINGER, 0);
    void *mon = tu_monitor(ctx, push, "inproc://failed-ipc-mon", ZMQ_EVENT_ALL);
    CHECK_RC(zmq_connect(push, ep));
    char evep[256];
    for (int i = 0; i < 3; i++) {
        CHECK(tu_next_event(mon, evep, sizeof evep) == ZMQ_EVENT_CLOSED);
        CHECK(strcmp(evep, ep) == 0);
        CHECK(tu_next_event(mon, NULL, 0) == ZMQ_EVENT_CONNECT_RETRIED);
    }
    zmq_close(push);
    zmq_close(mon);
    CHECK_RC(zmq_ctx_term(ctx));
}

int main(void) {
    failed_ipc_events("ipc:///tmp/ferromq-test-nobody-binds-this");
    failed_ipc_events("ipc://@ferromq-test-nobody-binds-this");

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
