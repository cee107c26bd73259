/* A tcp connect address goes through libzmq 4.3.4's quick syntax check only: first an
 * alphanumeric, `[` or `:`, then alphanumerics and `.-:%;[]_*`, and the part after the
 * last `:` starting with a digit. What passes is taken (zmq_connect returns 0) even if it
 * can never be reached (port 0 or past 65535, no host, no port after an IPv6 literal):
 * the connect is then retried, each failed try reported as CONNECT_RETRIED (ferromq used
 * to refuse these with EINVAL). Passes on Debian's libzmq. */
#include "testutil.h"

int main(void) {
    void *ctx = zmq_ctx_new();
    const char *taken[] = {"tcp://127.0.0.1:0",     "tcp://127.0.0.1:65536", "tcp://:5555",
                           "tcp://[::1]",           "tcp://host:12a",        "tcp://[::1]:0",
                           "tcp://eth0;:1",         "tcp://127.0.0.1:5x"};
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++) {
        void *s = zmq_socket(ctx, ZMQ_DEALER);
        tu_set_int(s, ZMQ_LINGER, 0);
        if (zmq_connect(s, taken[i]) != 0) {
            fprintf(stderr, "refused: %s\n", taken[i]);
            CHECK(0);
        }
        CHECK_RC(zmq_close(s));
    }
    const char *refused[] = {"tcp://*:5555", "tcp://127.0.0.1:*", "tcp://127.0.0.1:-1",
                             "tcp://host", "tcp://;:1", "tcp://bad!host:1", "tcp://-x:1"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        void *s = zmq_socket(ctx, ZMQ_DEALER);
        if (!(zmq_connect(s, refused[i]) == -1 && zmq_errno() == EINVAL)) {
            fprintf(stderr, "not refused with EINVAL: %s\n", refused[i]);
            CHECK(0);
        }
        CHECK_RC(zmq_close(s));
    }

    /* An unreachable port: retried, and each try reported. */
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    tu_set_int(s, ZMQ_LINGER, 0);
    tu_set_int(s, ZMQ_RECONNECT_IVL, 50);
    CHECK_RC(zmq_socket_monitor(s, "inproc://connect-syntax-mon", ZMQ_EVENT_CONNECT_RETRIED));
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    tu_set_int(mon, ZMQ_RCVTIMEO, 3000);
    CHECK_RC(zmq_connect(mon, "inproc://connect-syntax-mon"));
    CHECK_RC(zmq_connect(s, "tcp://127.0.0.1:65536"));
    char ep[64];
    for (int i = 0; i < 2; i++) {
        CHECK(tu_next_event(mon, ep, sizeof ep) == ZMQ_EVENT_CONNECT_RETRIED);
        CHECK(strcmp(ep, "tcp://127.0.0.1:65536") == 0);
    }
    CHECK_RC(zmq_close(s));
    CHECK_RC(zmq_close(mon));

    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_connect_syntax");
}
