/* ZMQ_TCP_ACCEPT_FILTER (deprecated in libzmq but still honoured by 4.3.4, and so here;
 * this program passes on Debian's libzmq too): a listener with masks takes connections
 * only from addresses inside one of them, closing the others at accept with
 * ACCEPT_FAILED; NULL empties the list; a malformed mask is EINVAL. */
#include "testutil.h"
#include <errno.h>

/* A PULL on 127.0.0.1 with these masks (ZMQ_IPV6 as given; "" = empty the list with
 * NULL), a PUSH from 127.0.0.1: whether its message got through. */
static int delivered(int ipv6, const char **masks, int n) {
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(pull, ZMQ_IPV6, ipv6);
    tu_set_int(push, ZMQ_LINGER, 0);
    tu_set_int(push, ZMQ_RECONNECT_IVL, 20);
    for (int i = 0; i < n; i++) {
        if (masks[i][0] == 0) {
            CHECK_RC(zmq_setsockopt(pull, ZMQ_TCP_ACCEPT_FILTER, NULL, 0));
        } else {
            CHECK_RC(zmq_setsockopt(pull, ZMQ_TCP_ACCEPT_FILTER, masks[i], strlen(masks[i])));
        }
    }
    void *mon = tu_monitor(ctx, pull, "inproc://accept-filter-mon", ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_ACCEPT_FAILED);
    CHECK_RC(zmq_bind(pull, "tcp://127.0.0.1:*"));
    char ep[256];
    tu_last_endpoint(pull, ep, sizeof ep);
    CHECK_RC(zmq_connect(push, ep));
    CHECK_RC(zmq_send(push, "x", 1, ZMQ_DONTWAIT));
    /* Refused at every try, nothing gets through; or accepted and delivered. */
    int got = tu_accept_verdict(pull, mon, NULL);
    zmq_close(push);
    zmq_close(pull);
    zmq_close(mon);
    CHECK_RC(zmq_ctx_term(ctx));
    return got;
}

#define DELIVERED(ipv6, ...)                                                    \
    delivered(ipv6, (const char *[]){__VA_ARGS__},                              \
              (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)))

int main(void) {
    CHECK(DELIVERED(0, "127.0.0.1"));
    CHECK(!DELIVERED(0, "127.0.0.2"));
    CHECK(DELIVERED(0, "127.0.0.2", "127.0.0.1"));
    CHECK(DELIVERED(0, "127.0.0.0/8"));
    CHECK(!DELIVERED(0, "128.0.0.0/1"));
    CHECK(DELIVERED(0, "0.0.0.0/0"));
    CHECK(!DELIVERED(0, "127.0.0.2/31"));
    CHECK(DELIVERED(0, "127.0.0.2/30"));
    CHECK(DELIVERED(0, "::ffff:127.0.0.1"));
    CHECK(DELIVERED(0, "127.0.0.2", ""));
    /* With ZMQ_IPV6, libzmq counts an IPv4 mask's bits on the IPv4-mapped address. */
    CHECK(DELIVERED(1, "127.0.0.1"));
    CHECK(DELIVERED(1, "10.0.0.0/8"));
    CHECK(!DELIVERED(1, "10.0.0.0/104"));
    CHECK(DELIVERED(1, "127.0.0.0/104"));
    CHECK(!DELIVERED(1, "::1/96"));

    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_PULL);
    const char *bad[] = {"127.0.0.1/33", "127.0.0.1/", "127.0.0.1/x", "::1",
                         "localhost", "*", " 127.0.0.1", "256.1.1.1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_ERR(zmq_setsockopt(s, ZMQ_TCP_ACCEPT_FILTER, bad[i], strlen(bad[i])), EINVAL);
    }
    CHECK_ERR(zmq_setsockopt(s, ZMQ_TCP_ACCEPT_FILTER, "127.0.0.1", 0), EINVAL);
    char v[64];
    size_t len = sizeof v;
    CHECK_ERR(zmq_getsockopt(s, ZMQ_TCP_ACCEPT_FILTER, v, &len), EINVAL);
    zmq_close(s);
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_tcp_accept_filter");
}
