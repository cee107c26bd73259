/* Monitor events with libzmq's codes and two-frame layout. */
#include "testutil.h"
#include <stdint.h>

static int next_event(void *mon, char *endpoint, size_t eplen) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, mon, 0) == -1)
        return -1;
    CHECK(zmq_msg_size(&m) == 6);
    uint16_t ev;
    memcpy(&ev, zmq_msg_data(&m), 2);
    CHECK(zmq_msg_more(&m));
    zmq_msg_close(&m);
    zmq_msg_init(&m);
    int n = zmq_msg_recv(&m, mon, 0);
    if (n >= 0 && (size_t)n < eplen) {
        memcpy(endpoint, zmq_msg_data(&m), (size_t)n);
        endpoint[n] = 0;
    }
    zmq_msg_close(&m);
    return ev;
}

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
    CHECK(next_event(mon, evep, sizeof evep) == ZMQ_EVENT_LISTENING);
    CHECK(strcmp(evep, ep) == 0);

    void *client = zmq_socket(ctx, ZMQ_PUSH);
    CHECK_RC(zmq_connect(client, ep));
    CHECK(next_event(mon, evep, sizeof evep) == ZMQ_EVENT_ACCEPTED);
    CHECK(next_event(mon, evep, sizeof evep) == ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
    zmq_close(client);
    CHECK(next_event(mon, evep, sizeof evep) == ZMQ_EVENT_DISCONNECTED);
    zmq_close(server);
    int ev;
    do {
        ev = next_event(mon, evep, sizeof evep);
    } while (ev != -1 && ev != ZMQ_EVENT_MONITOR_STOPPED);
    CHECK(ev == ZMQ_EVENT_MONITOR_STOPPED);
    zmq_close(mon);
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_monitor");
}
