/* Every socket option number 0-119 on every socket type: each value of a list set as a
 * 4-byte and as an 8-byte value, the result, and what a read gives back after it. One
 * line per (type, option, value); ZMQ_FD (its number varies) is left out. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

int main(void) {
    void *ctx = zmq_ctx_new();
    const int types[] = {ZMQ_PAIR, ZMQ_PUB,  ZMQ_SUB,  ZMQ_REQ,  ZMQ_REP,  ZMQ_DEALER,
                         ZMQ_ROUTER, ZMQ_PULL, ZMQ_PUSH, ZMQ_XPUB, ZMQ_XSUB, ZMQ_STREAM};
    const int values[] = {0, 1, -1, -2, 2, 3, 255, 256, 1000, 100000, INT_MAX, INT_MIN};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (int opt = 0; opt < 120; opt++) {
            if (opt == ZMQ_FD)
                continue;
            void *s = zmq_socket(ctx, types[t]);
            if (s == NULL) {
                printf("zmq_socket failed: %s\n", zmq_strerror(zmq_errno()));
                return 1;
            }
            for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
                int v = values[k];
                int rc4 = zmq_setsockopt(s, opt, &v, sizeof v);
                int e4 = rc4 ? zmq_errno() : 0;
                int64_t v8 = values[k];
                int rc8 = zmq_setsockopt(s, opt, &v8, sizeof v8);
                int e8 = rc8 ? zmq_errno() : 0;
                unsigned char buf[300];
                size_t n = sizeof buf;
                memset(buf, 0, sizeof buf);
                int g = zmq_getsockopt(s, opt, buf, &n);
                long long got = 0;
                if (g == 0 && n <= 8)
                    memcpy(&got, buf, n);
                printf("type=%d opt=%d value=%d set4=%d/%d set8=%d/%d get=%d/%d size=%zu got=%lld\n",
                       types[t], opt, v, rc4, e4, rc8, e8, g, g ? zmq_errno() : 0, g ? 0 : n,
                       got);
            }
            int zero = 0;
            zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
            zmq_close(s);
        }
    }
    zmq_ctx_term(ctx);
    return 0;
}
