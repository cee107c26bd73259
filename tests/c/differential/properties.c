/* Message properties (zmq_msg_gets, zmq_msg_get) of the first message each of four socket
 * pairs passes over tcp, ipc and inproc, the connecting side carrying a routing id. This
 * process's pid (in an ipc peer's address) is printed as PID. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

int main(void) {
    void *ctx = zmq_ctx_new();
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    char eps[3][64];
    snprintf(eps[0], sizeof eps[0], "tcp://127.0.0.1:*");
    snprintf(eps[1], sizeof eps[1], "ipc://@differential-properties-%s", pid);
    snprintf(eps[2], sizeof eps[2], "inproc://differential-properties");
    const int pairs[][2] = {{ZMQ_DEALER, ZMQ_ROUTER}, {ZMQ_PUSH, ZMQ_PULL}, {ZMQ_REQ, ZMQ_REP},
                            {ZMQ_PAIR, ZMQ_PAIR}};
    const char *names[] = {"Socket-Type", "Identity", "Routing-Id", "Peer-Address",
                           "User-Id",     "X-Foo",    "socket-type"};
    int zero = 0, timeout = 3000;
    for (int e = 0; e < 3; e++) {
        for (int p = 0; p < 4; p++) {
            void *rx = zmq_socket(ctx, pairs[p][1]);
            void *tx = zmq_socket(ctx, pairs[p][0]);
            zmq_setsockopt(rx, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
            zmq_setsockopt(tx, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
            zmq_setsockopt(tx, ZMQ_ROUTING_ID, "cid", 3);
            char ep[96];
            /* A fresh name per pair: libzmq frees an ipc or inproc name only once the
             * closed socket is reaped. */
            if (e == 0)
                snprintf(ep, sizeof ep, "%.63s", eps[e]);
            else
                snprintf(ep, sizeof ep, "%.63s-%d", eps[e], p);
            zmq_bind(rx, ep);
            size_t len = sizeof ep;
            zmq_getsockopt(rx, ZMQ_LAST_ENDPOINT, ep, &len);
            zmq_connect(tx, ep);
            zmq_send(tx, "x", 1, 0);
            zmq_msg_t m;
            zmq_msg_init(&m);
            int more = 1;
            while (more && zmq_msg_recv(&m, rx, 0) >= 0)
                more = zmq_msg_more(&m);
            printf("%.3s %d->%d:", eps[e], pairs[p][0], pairs[p][1]);
            for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
                const char *v = zmq_msg_gets(&m, names[i]);
                char shown[128] = "(none)";
                if (v != NULL) {
                    const char *at = strstr(v, pid);
                    if (at != NULL)
                        snprintf(shown, sizeof shown, "%.*sPID%s", (int)(at - v), v,
                                 at + strlen(pid));
                    else
                        snprintf(shown, sizeof shown, "%s", v);
                }
                printf(" %s=%s", names[i], shown);
            }
            printf(" srcfd=%s more=%d shared=%d\n", zmq_msg_get(&m, ZMQ_SRCFD) >= 0 ? "yes" : "no",
                   zmq_msg_get(&m, ZMQ_MORE), zmq_msg_get(&m, ZMQ_SHARED));
            zmq_msg_close(&m);
            zmq_setsockopt(tx, ZMQ_LINGER, &zero, sizeof zero);
            zmq_setsockopt(rx, ZMQ_LINGER, &zero, sizeof zero);
            zmq_close(tx);
            zmq_close(rx);
        }
    }
    zmq_ctx_term(ctx);
    return 0;
}
