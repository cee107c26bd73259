/* Which socket types may talk to which: for every pair over tcp, the connecting side's
 * first outcome as its monitor reports it (handshake succeeded, or which failure and its
 * value, or the connection ended), within 2 s. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

/* The first handshake or disconnection event on monitor `mon` ("none" if 2 s pass
 * without one). */
static void print_handshake(void *mon) {
    for (;;) {
        zmq_msg_t head, ep;
        zmq_msg_init(&head);
        zmq_msg_init(&ep);
        if (zmq_msg_recv(&head, mon, 0) == -1) {
            printf("none\n");
            return;
        }
        zmq_msg_recv(&ep, mon, 0);
        uint16_t ev;
        uint32_t value;
        memcpy(&ev, zmq_msg_data(&head), 2);
        memcpy(&value, (const char *)zmq_msg_data(&head) + 2, 4);
        zmq_msg_close(&head);
        zmq_msg_close(&ep);
        if (ev == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
            printf("succeeded\n");
            return;
        }
        if (ev == ZMQ_EVENT_DISCONNECTED) {
            printf("disconnected\n");
            return;
        }
        if (ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
            ev == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
            printf("failed event=0x%x value=0x%x\n", ev, value);
            return;
        }
    }
}

int main(void) {
    void *ctx = zmq_ctx_new();
    const int types[] = {ZMQ_PAIR, ZMQ_PUB,  ZMQ_SUB,  ZMQ_REQ,  ZMQ_REP,  ZMQ_DEALER,
                         ZMQ_ROUTER, ZMQ_PULL, ZMQ_PUSH, ZMQ_XPUB, ZMQ_XSUB};
    const size_t n = sizeof types / sizeof types[0];
    int zero = 0, timeout = 2000;
    for (size_t a = 0; a < n; a++) {
        for (size_t b = 0; b < n; b++) {
            void *server = zmq_socket(ctx, types[a]);
            void *client = zmq_socket(ctx, types[b]);
            zmq_setsockopt(server, ZMQ_LINGER, &zero, sizeof zero);
            zmq_setsockopt(client, ZMQ_LINGER, &zero, sizeof zero);
            char name[64];
            snprintf(name, sizeof name, "inproc://peers-%zu-%zu", a, b);
            zmq_socket_monitor(client, name, ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                                                 ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                                 ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                                 ZMQ_EVENT_DISCONNECTED);
            void *mon = zmq_socket(ctx, ZMQ_PAIR);
            zmq_setsockopt(mon, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
            zmq_connect(mon, name);
            zmq_bind(server, "tcp://127.0.0.1:*");
            char ep[64];
            size_t len = sizeof ep;
            zmq_getsockopt(server, ZMQ_LAST_ENDPOINT, ep, &len);
            zmq_connect(client, ep);
            printf("server=%d client=%d ", types[a], types[b]);
            print_handshake(mon);
            zmq_close(client);
            zmq_close(server);
            zmq_close(mon);
        }
    }
    zmq_ctx_term(ctx);
    return 0;
}
