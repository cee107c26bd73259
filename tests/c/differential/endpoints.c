/* zmq_bind and zmq_connect of malformed, unusual and unsupported endpoints on a PAIR:
 * result, errno, and ZMQ_LAST_ENDPOINT with any port number replaced by PORT; then
 * ZMQ_EVENTS of each socket type fresh, connected without a peer (with and without
 * ZMQ_IMMEDIATE) and bound. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

/* `ep` with every run of 4-5 digits after a ':' replaced by PORT. */
static void print_masked(const char *ep) {
    for (const char *p = ep; *p; p++) {
        putchar(*p);
        if (*p == ':' && isdigit((unsigned char)p[1])) {
            size_t n = strspn(p + 1, "0123456789");
            if (n >= 4 && n <= 5) {
                fputs("PORT", stdout);
                p += n;
            }
        }
    }
}

/* Binds a fresh PAIR (ZMQ_IPV6 as given) to `ep` and prints `label [ep] rc errno last`. */
static void probe_bind(void *ctx, const char *label, const char *ep, int ipv6) {
    void *s = zmq_socket(ctx, ZMQ_PAIR);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_IPV6, &ipv6, sizeof ipv6);
    int rc = zmq_bind(s, ep);
    int e = rc ? zmq_errno() : 0;
    char last[400] = "";
    size_t n = sizeof last;
    zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, last, &n);
    printf("%s [%.40s] rc=%d errno=%d last=", label, ep, rc, e);
    print_masked(last);
    putchar('\n');
    zmq_close(s);
}

static int events_of(void *s) {
    int ev = 0;
    size_t n = sizeof ev;
    zmq_getsockopt(s, ZMQ_EVENTS, &ev, &n);
    return ev;
}

int main(void) {
    void *ctx = zmq_ctx_new();
    char long_ipc[300] = "ipc:///tmp/";
    memset(long_ipc + 11, 'a', 150);
    long_ipc[161] = 0;
    const char *eps[] = {
        "", "foo", "tcp", "tcp:/", "tcp://", "tcp://*", "tcp://:5555", "tcp://127.0.0.1",
        "tcp://127.0.0.1:", "tcp://127.0.0.1:0", "tcp://127.0.0.1:65536", "tcp://127.0.0.1:-1",
        "tcp://127.0.0.1:abc", "tcp://127.0.0.1:5x", "tcp://[::1]:*", "tcp://[::1]", "tcp://::1:*",
        "tcp://[::ffff:127.0.0.1]:*",
        "tcp://localhost:*", "tcp://lo:*", "tcp://nosuchif0:*", "tcp://nonexistent.invalid:5555",
        "tcp://127.0.0.1:*;", "tcp://;127.0.0.1:*", "tcp://eth0;:1", "tcp://host:12a",
        "tcp://0.0.0.0:*", "tcp://*:*", "tcp://[*]:*", "tcp://1.2.3:*", "tcp://256.1.1.1:*",
        "tcp://bad!host:1", "tcp://-x:1", "ipc://", "ipc://@", long_ipc, "ipc://*",
        "ipc:///nonexistent-dir/x.sock", "inproc://", "inproc://x", "udp://127.0.0.1:*",
        "pgm://eth0;239.1.1.1:5555", "epgm://eth0;239.1.1.1:5555", "norm://1.2.3.4:5",
        "tipc://{1,2}", "vmci://1:2", "ws://127.0.0.1:*", "TCP://127.0.0.1:*",
        "tcp://127.0.0.1:*x", "foo://", "://x", "://", "udp://", "pgm://", "foo://x"};
    int zero = 0;
    for (size_t i = 0; i < sizeof eps / sizeof eps[0]; i++) {
        probe_bind(ctx, "bind", eps[i], 0);
        void *s = zmq_socket(ctx, ZMQ_PAIR);
        zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
        int rc = zmq_connect(s, eps[i]);
        int e = rc ? zmq_errno() : 0;
        char last[400] = "";
        size_t n = sizeof last;
        zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, last, &n);
        printf("connect [%.40s] rc=%d errno=%d last=%s\n", eps[i], rc, e, last);
        zmq_close(s);
        /* Unbind and disconnect of the endpoint on a socket that has neither. */
        s = zmq_socket(ctx, ZMQ_PAIR);
        rc = zmq_unbind(s, eps[i]);
        e = rc ? zmq_errno() : 0;
        int rc2 = zmq_disconnect(s, eps[i]);
        printf("unbind [%.40s] rc=%d errno=%d disconnect rc=%d errno=%d\n", eps[i], rc, e, rc2,
               rc2 ? zmq_errno() : 0);
        zmq_close(s);
    }
    /* Binds with ZMQ_IPV6 on: which family each host gives, and how it is reported. */
    const char *eps6[] = {"tcp://[::ffff:127.0.0.1]:*", "tcp://127.0.0.1:*", "tcp://*:*",
                          "tcp://[::1]:*", "tcp://[::1]", "tcp://::1:*", "tcp://lo:*",
                          "tcp://localhost:*", "tcp://0.0.0.0:*", "tcp://[*]:*",
                          "tcp://127.0.0.1:0"};
    for (size_t i = 0; i < sizeof eps6 / sizeof eps6[0]; i++)
        probe_bind(ctx, "bind6", eps6[i], 1);
    const int types[] = {ZMQ_PAIR, ZMQ_PUB,  ZMQ_SUB,  ZMQ_REQ,  ZMQ_REP,  ZMQ_DEALER,
                         ZMQ_ROUTER, ZMQ_PULL, ZMQ_PUSH, ZMQ_XPUB, ZMQ_XSUB, ZMQ_STREAM};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        void *fresh = zmq_socket(ctx, types[t]);
        void *lazy = zmq_socket(ctx, types[t]);
        void *immediate = zmq_socket(ctx, types[t]);
        void *bound = zmq_socket(ctx, types[t]);
        int one = 1;
        zmq_setsockopt(immediate, ZMQ_IMMEDIATE, &one, sizeof one);
        zmq_connect(lazy, "tcp://127.0.0.1:9");
        zmq_connect(immediate, "tcp://127.0.0.1:9");
        zmq_bind(bound, "tcp://127.0.0.1:*");
        printf("events type=%d fresh=%d connected=%d immediate=%d bound=%d\n", types[t],
               events_of(fresh), events_of(lazy), events_of(immediate), events_of(bound));
        void *all[] = {fresh, lazy, immediate, bound};
        for (int i = 0; i < 4; i++) {
            zmq_setsockopt(all[i], ZMQ_LINGER, &zero, sizeof zero);
            zmq_close(all[i]);
        }
    }
    zmq_ctx_term(ctx);
    return 0;
}
