/* tcp binds with ZMQ_IPV6 on, met by real peers: for each bind endpoint, which connect
 * endpoints (from a client with and without ZMQ_IPV6) get a message through, the
 * Peer-Address the server sees, and whether a TCP_ACCEPT_FILTER naming the client's
 * IPv4 or IPv6 loopback address lets it in. Ports are masked (PORT). */
#include <stdio.h>
#include <string.h>
#include <zmq.h>

/* The port of `last` (after its last ':'). */
static const char *port_of(const char *last) {
    const char *c = strrchr(last, ':');
    return c ? c + 1 : "";
}

/* Receives one message on `s` and prints its Peer-Address, or that nothing came;
 * returns whether one came. */
static int print_arrival(void *s) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    int got = zmq_msg_recv(&m, s, 0) == 2;
    if (got) {
        const char *peer = zmq_msg_gets(&m, "Peer-Address");
        printf("got peer=%s", peer ? peer : "(none)");
    } else {
        printf("nothing errno=%d", zmq_errno());
    }
    zmq_msg_close(&m);
    return got;
}

/* Binds a PAIR (ZMQ_IPV6 on, optional accept filter) at `bind_ep`; a PAIR (ZMQ_IPV6 as
 * `client6`) connects to `host`:port and sends, the server answers; prints what arrived
 * on each side and from where. */
static void probe(void *ctx, const char *bind_ep, const char *filter, const char *host,
                  int client6) {
    void *server = zmq_socket(ctx, ZMQ_PAIR);
    int one = 1, zero = 0, wait_ms = 500;
    zmq_setsockopt(server, ZMQ_IPV6, &one, sizeof one);
    zmq_setsockopt(server, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(server, ZMQ_RCVTIMEO, &wait_ms, sizeof wait_ms);
    if (filter)
        zmq_setsockopt(server, ZMQ_TCP_ACCEPT_FILTER, filter, strlen(filter));
    printf("bind6 [%s] filter=%s connect%s [%s]: ", bind_ep, filter ? filter : "-",
           client6 ? "6" : "", host);
    if (zmq_bind(server, bind_ep) != 0) {
        printf("bind errno=%d\n", zmq_errno());
        zmq_close(server);
        return;
    }
    char last[256] = "";
    size_t n = sizeof last;
    zmq_getsockopt(server, ZMQ_LAST_ENDPOINT, last, &n);
    char ep[300];
    snprintf(ep, sizeof ep, "tcp://%s:%s", host, port_of(last));
    void *client = zmq_socket(ctx, ZMQ_PAIR);
    zmq_setsockopt(client, ZMQ_IPV6, &client6, sizeof client6);
    zmq_setsockopt(client, ZMQ_RCVTIMEO, &wait_ms, sizeof wait_ms);
    zmq_setsockopt(client, ZMQ_LINGER, &zero, sizeof zero);
    int rc = zmq_connect(client, ep);
    if (rc != 0) {
        printf("connect errno=%d\n", zmq_errno());
    } else {
        zmq_send(client, "hi", 2, ZMQ_DONTWAIT);
        if (print_arrival(server)) {
            zmq_send(server, "ok", 2, ZMQ_DONTWAIT);
            printf(", back: ");
            print_arrival(client);
        }
        putchar('\n');
    }
    zmq_close(client);
    zmq_close(server);
}

/* Binds `host` with ZMQ_IPV6 as given and unbinds it by the endpoint as written with the
 * bound port (`tcp://host:PORT`), or by ZMQ_LAST_ENDPOINT; prints the result. */
static void probe_unbind(void *ctx, const char *host, int ipv6, int by_last) {
    void *s = zmq_socket(ctx, ZMQ_PAIR);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_IPV6, &ipv6, sizeof ipv6);
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    char ep[300], last[256] = "";
    snprintf(ep, sizeof ep, "tcp://%s:*", host);
    int rc = zmq_bind(s, ep);
    size_t n = sizeof last;
    zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, last, &n);
    snprintf(ep, sizeof ep, "tcp://%s:%s", host, port_of(last));
    int un = zmq_unbind(s, by_last ? last : ep);
    printf("unbind%s [%s] by %s: bind=%d unbind=%d errno=%d\n", ipv6 ? "6" : "", host,
           by_last ? "last endpoint" : "address", rc, un, un ? zmq_errno() : 0);
    zmq_close(s);
}

int main(void) {
    void *ctx = zmq_ctx_new();
    const char *binds[] = {"tcp://127.0.0.1:*", "tcp://0.0.0.0:*", "tcp://*:*", "tcp://lo:*",
                           "tcp://[::ffff:127.0.0.1]:*", "tcp://[::1]:*"};
    const char *hosts[] = {"127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "localhost"};
    for (size_t b = 0; b < sizeof binds / sizeof binds[0]; b++)
        for (size_t h = 0; h < sizeof hosts / sizeof hosts[0]; h++)
            for (int c6 = 0; c6 <= 1; c6++)
                probe(ctx, binds[b], NULL, hosts[h], c6);
    /* Accept filters on a bind that takes IPv4 peers through an IPv6 socket. */
    const char *filters[] = {"127.0.0.1", "::1", "::ffff:127.0.0.1"};
    for (size_t b = 0; b < 3; b++)
        for (size_t f = 0; f < sizeof filters / sizeof filters[0]; f++)
            probe(ctx, binds[b], filters[f], "127.0.0.1", 0);
    const char *unbinds[] = {"127.0.0.1", "0.0.0.0", "lo", "[::ffff:127.0.0.1]", "[::1]"};
    for (size_t u = 0; u < sizeof unbinds / sizeof unbinds[0]; u++)
        for (int ipv6 = 0; ipv6 <= 1; ipv6++)
            for (int by_last = 0; by_last <= 1; by_last++)
                probe_unbind(ctx, unbinds[u], ipv6, by_last);
    zmq_ctx_term(ctx);
    return 0;
}
