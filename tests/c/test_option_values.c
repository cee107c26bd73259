/* Socket option values as libzmq 4.3.4 takes them (each probed on Debian's libzmq side by
 * side with ferromq): the patterns' boolean options refuse negative values, string
 * options keep the bytes given (not necessarily UTF-8, up to each option's own limit,
 * emptied by NULL but not by a pointer with no bytes), and the ZAP domain reaches the
 * ZAP handler byte for byte. */
#include "testutil.h"

#ifndef ZMQ_SOCKS_USERNAME /* in zmq.h's draft part */
#define ZMQ_SOCKS_USERNAME 99
#define ZMQ_SOCKS_PASSWORD 100
#endif
#ifndef ZMQ_RECONNECT_STOP
#define ZMQ_RECONNECT_STOP 109 /* in zmq.h's draft part */
#endif

/* Sets `opt` to `len` bytes of `val` and reads it back: 1 if the same bytes come back. */
static int round_trips(void *s, int opt, const char *val, size_t len) {
    char buf[512];
    size_t got = sizeof buf;
    CHECK_RC(zmq_setsockopt(s, opt, val, len));
    CHECK_RC(zmq_getsockopt(s, opt, buf, &got));
    /* A string option comes back with its NUL. */
    return got == len + 1 && memcmp(buf, val, len) == 0 && buf[len] == 0;
}

static void pattern_booleans(void *ctx) {
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    void *xpub = zmq_socket(ctx, ZMQ_XPUB);
    void *req = zmq_socket(ctx, ZMQ_REQ);
    void *stream = zmq_socket(ctx, ZMQ_STREAM);
    int minus = -1, two = 2;
    const int router_opts[] = {ZMQ_ROUTER_MANDATORY, ZMQ_ROUTER_HANDOVER, ZMQ_PROBE_ROUTER};
    for (int i = 0; i < 3; i++) {
        CHECK_ERR(zmq_setsockopt(router, router_opts[i], &minus, sizeof minus), EINVAL);
        CHECK_RC(zmq_setsockopt(router, router_opts[i], &two, sizeof two));
    }
    CHECK_ERR(zmq_setsockopt(dealer, ZMQ_PROBE_ROUTER, &minus, sizeof minus), EINVAL);
    const int xpub_opts[] = {ZMQ_XPUB_VERBOSE, ZMQ_XPUB_VERBOSER, ZMQ_XPUB_NODROP,
                             ZMQ_XPUB_MANUAL};
    for (int i = 0; i < 4; i++) {
        CHECK_ERR(zmq_setsockopt(xpub, xpub_opts[i], &minus, sizeof minus), EINVAL);
        CHECK_RC(zmq_setsockopt(xpub, xpub_opts[i], &two, sizeof two));
    }
    CHECK_ERR(zmq_setsockopt(req, ZMQ_REQ_RELAXED, &minus, sizeof minus), EINVAL);
    CHECK_ERR(zmq_setsockopt(req, ZMQ_REQ_CORRELATE, &minus, sizeof minus), EINVAL);
    /* STREAM_NOTIFY is 0 or 1 only. */
    CHECK_ERR(zmq_setsockopt(stream, ZMQ_STREAM_NOTIFY, &two, sizeof two), EINVAL);
    /* RECONNECT_STOP is a set of bits: any int. */
    CHECK_RC(zmq_setsockopt(dealer, ZMQ_RECONNECT_STOP, &minus, sizeof minus));
    zmq_close(router);
    zmq_close(dealer);
    zmq_close(xpub);
    zmq_close(req);
    zmq_close(stream);
}

static void string_options(void *ctx) {
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    const char bytes[] = "\xff\xfe\x80 not utf-8";
    const int opts[] = {ZMQ_PLAIN_USERNAME, ZMQ_PLAIN_PASSWORD, ZMQ_ZAP_DOMAIN,
                        ZMQ_SOCKS_PROXY};
    for (int i = 0; i < 4; i++)
        CHECK(round_trips(s, opts[i], bytes, sizeof bytes - 1));
    /* Limits: 255 bytes for most, none for the SOCKS proxy, 16 for a device name. */
    char big[300];
    memset(big, 'a', sizeof big);
    CHECK(round_trips(s, ZMQ_ZAP_DOMAIN, big, 255));
    CHECK_ERR(zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, big, 256), EINVAL);
    CHECK_ERR(zmq_setsockopt(s, ZMQ_PLAIN_USERNAME, big, 256), EINVAL);
    CHECK(round_trips(s, ZMQ_SOCKS_PROXY, big, 300));
    CHECK_ERR(zmq_setsockopt(s, ZMQ_BINDTODEVICE, big, 17), EINVAL);
    CHECK(round_trips(s, ZMQ_BINDTODEVICE, big, 16));
    /* Emptied by NULL only; the ZAP domain not at all. */
    CHECK_ERR(zmq_setsockopt(s, ZMQ_SOCKS_PROXY, "", 0), EINVAL);
    CHECK_RC(zmq_setsockopt(s, ZMQ_SOCKS_PROXY, NULL, 0));
    char buf[8];
    size_t len = sizeof buf;
    CHECK_RC(zmq_getsockopt(s, ZMQ_SOCKS_PROXY, buf, &len));
    CHECK(len == 1);
    CHECK_ERR(zmq_setsockopt(s, ZMQ_BINDTODEVICE, "", 0), EINVAL);
    CHECK_ERR(zmq_setsockopt(s, ZMQ_PLAIN_USERNAME, "", 0), EINVAL);
    CHECK_ERR(zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, "", 0), EINVAL);
    CHECK_ERR(zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, NULL, 0), EINVAL);
    /* The SOCKS credentials may be emptied either way. */
    CHECK_RC(zmq_setsockopt(s, ZMQ_SOCKS_USERNAME, "", 0));
    CHECK_RC(zmq_setsockopt(s, ZMQ_SOCKS_PASSWORD, NULL, 0));
    zmq_close(s);
}

/* A ZAP handler on inproc://zeromq.zap.01 sees the server's domain as set. */
static void zap_domain_on_the_wire(void *ctx) {
    void *handler = zmq_socket(ctx, ZMQ_REP);
    CHECK_RC(zmq_bind(handler, "inproc://zeromq.zap.01"));
    tu_set_int(handler, ZMQ_RCVTIMEO, 5000);
    void *server = zmq_socket(ctx, ZMQ_PULL);
    const char domain[] = "\xff\xfe-domain";
    CHECK_RC(zmq_setsockopt(server, ZMQ_ZAP_DOMAIN, domain, sizeof domain - 1));
    CHECK_RC(zmq_bind(server, "tcp://127.0.0.1:*"));
    char ep[64];
    tu_last_endpoint(server, ep, sizeof ep);
    void *client = zmq_socket(ctx, ZMQ_PUSH);
    CHECK_RC(zmq_connect(client, ep));

    /* The request: version, request id, domain, address, routing id, mechanism. */
    zmq_msg_t part[6];
    int n = 0;
    for (; n < 6; n++) {
        zmq_msg_init(&part[n]);
        if (zmq_msg_recv(&part[n], handler, 0) == -1 || !zmq_msg_more(&part[n]))
            break;
    }
    CHECK(n == 5);
    if (n == 5) {
        CHECK(zmq_msg_size(&part[2]) == sizeof domain - 1);
        CHECK(memcmp(zmq_msg_data(&part[2]), domain, sizeof domain - 1) == 0);
        CHECK(zmq_msg_size(&part[5]) == 4 && memcmp(zmq_msg_data(&part[5]), "NULL", 4) == 0);
        /* Let it through. */
        CHECK(zmq_send(handler, "1.0", 3, ZMQ_SNDMORE) == 3);
        CHECK(zmq_msg_send(&part[1], handler, ZMQ_SNDMORE) >= 0);
        CHECK(zmq_send(handler, "200", 3, ZMQ_SNDMORE) == 3);
        CHECK(zmq_send(handler, "OK", 2, ZMQ_SNDMORE) == 2);
        CHECK(zmq_send(handler, "", 0, ZMQ_SNDMORE) == 0);
        CHECK(zmq_send(handler, "", 0, 0) == 0);
        char buf[8];
        tu_set_int(server, ZMQ_RCVTIMEO, 5000);
        CHECK(zmq_send(client, "hello", 5, 0) == 5);
        CHECK(zmq_recv(server, buf, sizeof buf, 0) == 5);
    }
    for (int i = 0; i <= n && i < 6; i++)
        zmq_msg_close(&part[i]);
    tu_set_int(client, ZMQ_LINGER, 0);
    zmq_close(client);
    zmq_close(server);
    zmq_close(handler);
}

int main(void) {
    void *ctx = zmq_ctx_new();
    pattern_booleans(ctx);
    string_options(ctx);
    zap_domain_on_the_wire(ctx);
    CHECK(zmq_ctx_term(ctx) == 0);
    return tu_finish("test_option_values");
}
