/* A message sent right after the peer dropped the connection (with our bytes unread:
 * MAXMSGSIZE) waits in the queue for the reconnect instead of vanishing into the dead
 * connection. Real libzmq 4.3 delivers all 24 here (checked by building this file
 * against it); ferromq lost 1-4 of them before its pre-write check also counted a
 * pending reset as a closed peer. */
#include "testutil.h"
#include <stdint.h>

/* Waits up to ms for event `want` on the monitor; 0 if it came. */
static int wait_event(void *mon, int want, int ms) {
    tu_set_int(mon, ZMQ_RCVTIMEO, ms);
    for (;;) {
        int ev = tu_next_event(mon, NULL, 0);
        if (ev == -1 || ev == want)
            return ev == -1 ? -1 : 0;
    }
}

int main(void) {
    const char *eps[2] = {"ipc://@ferromq-c-send-after-drop", "tcp://127.0.0.1:*"};
    const size_t lens[3] = {3, 16 * 1024, 64 * 1024};
    static char oversized[100001], body[65536], got[70000];
    for (int e = 0; e < 2; e++) {
        void *ctx = zmq_ctx_new();
        void *pull = zmq_socket(ctx, ZMQ_PULL);
        int64_t max = 100000;
        CHECK_RC(zmq_setsockopt(pull, ZMQ_MAXMSGSIZE, &max, sizeof max));
        tu_set_int(pull, ZMQ_RCVTIMEO, 2000);
        tu_set_int(pull, ZMQ_LINGER, 0);
        CHECK_RC(zmq_socket_monitor(pull, "inproc://mon-drop", ZMQ_EVENT_ALL));
        void *mon = zmq_socket(ctx, ZMQ_PAIR);
        CHECK_RC(zmq_connect(mon, "inproc://mon-drop"));
        CHECK_RC(zmq_bind(pull, eps[e]));
        char ep[256];
        tu_last_endpoint(pull, ep, sizeof ep);
        void *push = zmq_socket(ctx, ZMQ_PUSH);
        tu_set_int(push, ZMQ_RECONNECT_IVL, 10);
        tu_set_int(push, ZMQ_LINGER, 0);
        CHECK_RC(zmq_connect(push, ep));
        for (int round = 0; round < 4; round++) {
            for (int l = 0; l < 3; l++) {
                CHECK(wait_event(mon, ZMQ_EVENT_HANDSHAKE_SUCCEEDED, 2000) == 0);
                CHECK_RC(zmq_send(push, oversized, sizeof oversized, 0));
                CHECK(wait_event(mon, ZMQ_EVENT_DISCONNECTED, 2000) == 0);
                memset(body, round ^ (int)lens[l], lens[l]);
                CHECK_RC(zmq_send(push, body, lens[l], 0));
                int n = zmq_recv(pull, got, sizeof got, 0);
                if (n != (int)lens[l] || memcmp(got, body, lens[l]) != 0) {
                    fprintf(stderr, "%s round %d: %zu bytes sent after the drop: got %d\n",
                            ep, round, lens[l], n);
                    tu_failures++;
                }
            }
        }
        zmq_close(push);
        zmq_close(pull);
        zmq_close(mon);
        zmq_ctx_term(ctx);
    }
    return tu_finish("test_send_after_drop");
}
