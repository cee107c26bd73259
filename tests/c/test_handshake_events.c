/* Monitor events of a handshake between incompatible socket types, as libzmq 4.3.4
 * reports them (probed with Debian's libzmq side by side): a bare DISCONNECTED on both
 * sides, each having read the other's READY and found the types incompatible itself; no
 * HANDSHAKE_FAILED_* event. */
#include "testutil.h"

/* The events of `mon` until it has been quiet for 300 ms, into `evs` (at most `max`). */
static int events(void *mon, int *evs, int max) {
    tu_set_int(mon, ZMQ_RCVTIMEO, 300);
    int n = 0;
    int ev;
    while (n < max && (ev = tu_next_event(mon, NULL, 0)) != -1)
        evs[n++] = ev;
    return n;
}

static void incompatible_socket_types(void *ctx) {
    void *server = zmq_socket(ctx, ZMQ_PULL);
    void *client = zmq_socket(ctx, ZMQ_PULL);
    void *smon = tu_monitor(ctx, server, "inproc://types-server", ZMQ_EVENT_ALL);
    void *cmon = tu_monitor(ctx, client, "inproc://types-client", ZMQ_EVENT_ALL);
    /* One attempt: the interval is longer than the test. */
    tu_set_int(client, ZMQ_RECONNECT_IVL, 60000);
    CHECK_RC(zmq_bind(server, "tcp://127.0.0.1:*"));
    char ep[64];
    tu_last_endpoint(server, ep, sizeof ep);
    CHECK_RC(zmq_connect(client, ep));
    int evs[16];
    int n = events(smon, evs, 16);
    CHECK(n == 3);
    if (n == 3) {
        CHECK(evs[0] == ZMQ_EVENT_LISTENING);
        CHECK(evs[1] == ZMQ_EVENT_ACCEPTED);
        CHECK(evs[2] == ZMQ_EVENT_DISCONNECTED);
    }
    n = events(cmon, evs, 16);
    /* CONNECT_DELAYED, CONNECTED, DISCONNECTED. */
    CHECK(n == 3);
    if (n == 3) {
        CHECK(evs[1] == ZMQ_EVENT_CONNECTED);
        CHECK(evs[2] == ZMQ_EVENT_DISCONNECTED);
    }
    tu_set_int(client, ZMQ_LINGER, 0);
    zmq_close(client);
    zmq_close(server);
    zmq_close(smon);
    zmq_close(cmon);
}

int main(void) {
    void *ctx = zmq_ctx_new();
    incompatible_socket_types(ctx);
    CHECK(zmq_ctx_term(ctx) == 0);
    return tu_finish("test_handshake_events");
}
