/* Monitor events with libzmq's codes and two-frame layout. */
#include "testutil.h"

int main(void) {
    void *ctx = zmq_ctx_new();
    void *server = zmq_socket(ctx, ZMQ_PULL);
    CHECK_RC(zmq_socket_monitor(server, "inproc://mon-server", ZMQ_EVENT_ALL));
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    tu_set_int(mon, ZMQ_RCVTIMEO, 5000);
    CHECK_RC(zmq_connect(mon, "inproc://mon-server"));
    CHECK_RC(zmq_bind(server, "tcp://127.0.0.1:*"));
    char ep[256], evep[256];
    tu_last_endpoint(server, ep, sizeof ep);
    CHECK(tu_next_event(mon, evep, sizeof evep) == ZMQ_EVENT_LISTENING);
    CHECK(strcmp(evep, ep) == 0);

    void *client = zmq_socket(ctx, ZMQ_PUSH);
    CHECK_RC(zmq_connect(client, ep));
    CHECK(tu_next_event(mon, evep, sizeof evep) == ZMQ_EVENT_ACCEPTED);
    CHECK(tu_next_event(mon, evep, sizeof evep) == ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
    zmq_close(client);
    CHECK(tu_next_event(mon, evep, sizeof evep) == ZMQ_EVENT_DISCONNECTED);
    zmq_close(server);
    int ev;
    do {
        ev = tu_next_event(mon, evep, sizeof evep);
    } while (ev != -1 && ev != ZMQ_EVENT_MONITOR_STOPPED);
    CHECK(ev == ZMQ_EVENT_MONITOR_STOPPED);
    zmq_close(mon);
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_monitor");
}
