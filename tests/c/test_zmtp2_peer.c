/* A ZMTP 2.0 peer (RFC 15: libzmq 3.2's protocol), spoken by hand over a raw tcp socket,
 * against the library's sockets, as libzmq 4.3.4 handles one (probed side by side with
 * Debian's libzmq): our greeting is the signature (padding: routing id length + 1) and
 * major version 3, then, having seen the peer's revision 1, our socket type number and our
 * routing id as the first frame; then plain frames both ways, subscriptions as messages;
 * no HANDSHAKE_SUCCEEDED event, and its end reported as HANDSHAKE_FAILED_NO_DETAIL. A
 * socket with a security mechanism closes the connection after the major version,
 * reporting a bare DISCONNECTED. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int port_of(void *s) {
    char ep[64];
    tu_last_endpoint(s, ep, sizeof ep);
    const char *colon = strrchr(ep, ':');
    return colon ? atoi(colon + 1) : -1;
}

static void set_timeout(int fd) {
    struct timeval tv = {.tv_sec = 2, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

static int raw_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    set_timeout(fd);
    return fd;
}

/* Reads exactly n bytes; returns how many came before EOF or the 2 s timeout. */
static size_t read_exact(int fd, unsigned char *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

static void write_all(int fd, const void *buf, size_t n) {
    CHECK(write(fd, buf, n) == (ssize_t)n);
}

/* A short ZMTP 2.0 frame: flags (bit 0 MORE), one length byte, the body. */
static void send_frame(int fd, const char *body, int more) {
    unsigned char f[258];
    size_t n = strlen(body);
    f[0] = more ? 1 : 0;
    f[1] = (unsigned char)n;
    memcpy(f + 2, body, n);
    write_all(fd, f, n + 2);
}

/* Reads one short frame into body (NUL-terminated); returns its flags, or -1. */
static int read_frame(int fd, char *body, size_t cap) {
    unsigned char h[2];
    if (read_exact(fd, h, 2) != 2 || (h[0] & 2) || h[1] >= cap)
        return -1;
    if (read_exact(fd, (unsigned char *)body, h[1]) != h[1])
        return -1;
    body[h[1]] = 0;
    return h[0];
}

/* Our side of the greeting as a ZMTP 2.0 peer of type `type`, in libzmq 3.2's steps
 * (the signature; the rest once the other side's signature is in), after checking the
 * library's: signature, then major version 3, then (having seen our revision 1) its
 * socket type `expect_type`, then its routing id frame `expect_id`. */
static void handshake(int fd, int type, int expect_type, const char *id, const char *expect_id) {
    const unsigned char ours[12] = {0xFF, 0, 0, 0, 0, 0, 0, 0, (unsigned char)(strlen(id) + 1),
                                    0x7F, 1, (unsigned char)type};
    write_all(fd, ours, 10);
    unsigned char g[12];
    CHECK(read_exact(fd, g, 10) == 10);
    write_all(fd, ours + 10, 2);
    CHECK(read_exact(fd, g + 10, 2) == 2);
    CHECK(g[0] == 0xFF && g[9] == 0x7F);
    /* The padding holds the routing id length + 1, as libzmq puts it. */
    CHECK(g[8] == strlen(expect_id) + 1);
    CHECK(g[10] == 3);
    CHECK(g[11] == expect_type);
    send_frame(fd, id, 0);
    char peer_id[256];
    CHECK(read_frame(fd, peer_id, sizeof peer_id) == 0);
    CHECK(strcmp(peer_id, expect_id) == 0);
}

static void *make(void *ctx, int type) {
    void *s = zmq_socket(ctx, type);
    tu_set_int(s, ZMQ_LINGER, 0);
    tu_set_int(s, ZMQ_RCVTIMEO, 2000);
    tu_set_int(s, ZMQ_SNDTIMEO, 2000);
    return s;
}

/* Binds `s` (options set before: the listener takes them at bind) and returns its port. */
static int bind_port(void *s) {
    CHECK_RC(zmq_bind(s, "tcp://127.0.0.1:*"));
    return port_of(s);
}

static void recv_is(void *s, const char *want, int more) {
    char buf[64];
    int n = zmq_recv(s, buf, sizeof buf - 1, 0);
    CHECK(n == (int)strlen(want));
    if (n >= 0) {
        buf[n] = 0;
        CHECK(strcmp(buf, want) == 0);
    }
    int m = 0;
    size_t len = sizeof m;
    CHECK_RC(zmq_getsockopt(s, ZMQ_RCVMORE, &m, &len));
    CHECK(m == more);
}

/* Monitor events until 300 ms pass without one; true if `ev` was among them. */
static int saw_event(void *mon, int ev) {
    tu_set_int(mon, ZMQ_RCVTIMEO, 300);
    int seen = 0, e;
    while ((e = tu_next_event(mon, NULL, 0)) != -1)
        seen |= e == ev;
    return seen;
}

static void pull_takes_frames(void *ctx) {
    void *pull = make(ctx, ZMQ_PULL);
    void *mon = tu_monitor(ctx, pull, "inproc://zmtp2-pull", ZMQ_EVENT_ALL);
    int fd = raw_connect(bind_port(pull));
    handshake(fd, ZMQ_PUSH, ZMQ_PULL, "", "");
    send_frame(fd, "m1", 0);
    send_frame(fd, "part-a", 1);
    send_frame(fd, "part-b", 0);
    recv_is(pull, "m1", 0);
    recv_is(pull, "part-a", 1);
    recv_is(pull, "part-b", 0);
    CHECK(!saw_event(mon, ZMQ_EVENT_HANDSHAKE_SUCCEEDED));
    close(fd);
    /* The end of a 2.0 connection is reported as a failed handshake (libzmq's monitor
     * sees no security mechanism finish on it), with the errno, then DISCONNECTED. */
    tu_set_int(mon, ZMQ_RCVTIMEO, 3000);
    unsigned value = 0;
    CHECK(tu_next_event_value(mon, &value, NULL, 0) == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    CHECK(value == EPIPE);
    CHECK(tu_next_event(mon, NULL, 0) == ZMQ_EVENT_DISCONNECTED);
    zmq_close(mon);
    zmq_close(pull);
}

static void push_sends_frames(void *ctx) {
    void *push = make(ctx, ZMQ_PUSH);
    int fd = raw_connect(bind_port(push));
    handshake(fd, ZMQ_PULL, ZMQ_PUSH, "", "");
    CHECK(zmq_send(push, "hello", 5, ZMQ_SNDMORE) == 5);
    CHECK(zmq_send(push, "x", 1, 0) == 1);
    char body[64];
    CHECK(read_frame(fd, body, sizeof body) == 1);
    CHECK(strcmp(body, "hello") == 0);
    CHECK(read_frame(fd, body, sizeof body) == 0);
    CHECK(strcmp(body, "x") == 0);
    close(fd);
    zmq_close(push);
}

static void pub_takes_a_subscription_message(void *ctx) {
    void *pub = make(ctx, ZMQ_PUB);
    int fd = raw_connect(bind_port(pub));
    handshake(fd, ZMQ_SUB, ZMQ_PUB, "", "");
    send_frame(fd, "\001t", 0);
    zmq_sleep(1);
    CHECK(zmq_send(pub, "other", 5, 0) == 5);
    CHECK(zmq_send(pub, "tx", 2, 0) == 2);
    char body[64];
    CHECK(read_frame(fd, body, sizeof body) == 0);
    CHECK(strcmp(body, "tx") == 0);
    close(fd);
    zmq_close(pub);
}

static void router_uses_the_routing_id_frame(void *ctx) {
    void *router = make(ctx, ZMQ_ROUTER);
    CHECK_RC(zmq_setsockopt(router, ZMQ_ROUTING_ID, "me", 2));
    int fd = raw_connect(bind_port(router));
    handshake(fd, ZMQ_DEALER, ZMQ_ROUTER, "abc", "me");
    send_frame(fd, "m1", 0);
    recv_is(router, "abc", 1);
    recv_is(router, "m1", 0);
    CHECK(zmq_send(router, "abc", 3, ZMQ_SNDMORE) == 3);
    CHECK(zmq_send(router, "r", 1, 0) == 1);
    char body[64];
    CHECK(read_frame(fd, body, sizeof body) == 0);
    CHECK(strcmp(body, "r") == 0);
    close(fd);
    zmq_close(router);
}

static void connecting_push_speaks_2_0(void *ctx) {
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    CHECK(bind(lfd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(lfd, 1) == 0);
    CHECK(getsockname(lfd, (struct sockaddr *)&a, &alen) == 0);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(push, ZMQ_LINGER, 0);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", ntohs(a.sin_port));
    CHECK_RC(zmq_connect(push, ep));
    int fd = accept(lfd, NULL, NULL);
    CHECK(fd >= 0);
    set_timeout(fd);
    handshake(fd, ZMQ_PULL, ZMQ_PUSH, "", "");
    CHECK(zmq_send(push, "up", 2, 0) == 2);
    char body[64];
    CHECK(read_frame(fd, body, sizeof body) == 0);
    CHECK(strcmp(body, "up") == 0);
    close(fd);
    close(lfd);
    zmq_close(push);
}

static void secured_socket_closes_the_connection(void *ctx) {
    void *pull = make(ctx, ZMQ_PULL);
    tu_set_int(pull, ZMQ_PLAIN_SERVER, 1);
    void *mon = tu_monitor(ctx, pull, "inproc://zmtp2-plain", ZMQ_EVENT_ALL);
    int fd = raw_connect(bind_port(pull));
    const unsigned char ours[12] = {0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1, ZMQ_PUSH};
    write_all(fd, ours, 10);
    unsigned char g[64];
    CHECK(read_exact(fd, g, 10) == 10);
    write_all(fd, ours + 10, 2);
    /* The major version, then the end: no socket type, no 3.x rest. */
    CHECK(read_exact(fd, g, sizeof g) == 1);
    /* LISTENING, ACCEPTED, then DISCONNECTED with no HANDSHAKE_FAILED_* before it. */
    int e;
    while ((e = tu_next_event(mon, NULL, 0)) != -1 && e != ZMQ_EVENT_DISCONNECTED)
        CHECK(e == ZMQ_EVENT_LISTENING || e == ZMQ_EVENT_ACCEPTED);
    CHECK(e == ZMQ_EVENT_DISCONNECTED);
    close(fd);
    zmq_close(mon);
    zmq_close(pull);
}

int main(void) {
    void *ctx = zmq_ctx_new();
    pull_takes_frames(ctx);
    push_sends_frames(ctx);
    pub_takes_a_subscription_message(ctx);
    router_uses_the_routing_id_frame(ctx);
    connecting_push_speaks_2_0(ctx);
    secured_socket_closes_the_connection(ctx);
    zmq_ctx_term(ctx);
    return tu_finish("test_zmtp2_peer");
}
