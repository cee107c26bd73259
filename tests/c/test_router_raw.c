/* ZMQ_ROUTER_RAW, as libzmq 4.3.4 and 4.3.5 have it (probed with both): a ROUTER with it
 * set talks to plain TCP peers like a STREAM socket (no greeting; [id][empty] when a
 * connection comes or its peer ends it; [id][data] per chunk; an empty data frame
 * closes the connection, unannounced), while ZMQ_TYPE stays ROUTER and a routing id
 * nobody has is dropped unless ZMQ_ROUTER_MANDATORY, then EHOSTUNREACH. The option
 * is write-only and ROUTER's alone. Passes on Debian's libzmq. */
#include "testutil.h"
#include <poll.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

/* A plain TCP client whose reads give up after 3 s. */
static int raw_connect(const char *ep) {
    int fd = tu_raw_connect(ep);
    struct timeval tv = {3, 0};
    CHECK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0);
    return fd;
}

/* Receives [id][data]: the id into `id` (its length returned), the data into `buf`
 * (NUL-terminated, its length in *len). */
static int recv_pair(void *s, unsigned char *id, char *buf, int *len) {
    int id_len = zmq_recv(s, id, 255, 0);
    CHECK(id_len > 0);
    int more = 0;
    size_t ml = sizeof more;
    CHECK_RC(zmq_getsockopt(s, ZMQ_RCVMORE, &more, &ml));
    CHECK(more == 1);
    *len = zmq_recv(s, buf, 255, 0);
    CHECK(*len >= 0 && *len < 255);
    buf[*len < 0 ? 0 : *len] = 0;
    return id_len;
}

static int readable_within(int fd, int ms) {
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, ms) == 1;
}

int main(void) {
    void *ctx = zmq_ctx_new();
    int one = 1, minus = -1;

    /* Only a ROUTER takes it, only as a non-negative int; nobody reads it back. */
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    CHECK_ERR(zmq_setsockopt(dealer, ZMQ_ROUTER_RAW, &one, sizeof one), EINVAL);
    CHECK_RC(zmq_close(dealer));
    void *stream = zmq_socket(ctx, ZMQ_STREAM);
    CHECK_ERR(zmq_setsockopt(stream, ZMQ_ROUTER_RAW, &one, sizeof one), EINVAL);
    CHECK_RC(zmq_close(stream));
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    CHECK_ERR(zmq_setsockopt(router, ZMQ_ROUTER_RAW, &minus, sizeof minus), EINVAL);
    CHECK_RC(zmq_setsockopt(router, ZMQ_ROUTER_RAW, &one, sizeof one));
    int v = 0;
    size_t vl = sizeof v;
    CHECK_ERR(zmq_getsockopt(router, ZMQ_ROUTER_RAW, &v, &vl), EINVAL);
    vl = sizeof v;
    CHECK_RC(zmq_getsockopt(router, ZMQ_TYPE, &v, &vl));
    CHECK(v == ZMQ_ROUTER);
    int zero = 0; /* its connections are always announced: no ZMQ_STREAM_NOTIFY */
    CHECK_ERR(zmq_setsockopt(router, ZMQ_STREAM_NOTIFY, &zero, sizeof zero), EINVAL);
    tu_set_int(router, ZMQ_RCVTIMEO, 3000);
    tu_set_int(router, ZMQ_LINGER, 0);
    CHECK_RC(zmq_bind(router, "tcp://127.0.0.1:*"));
    char ep[256];
    tu_last_endpoint(router, ep, sizeof ep);

    /* A plain TCP client: announced, sent no greeting, its bytes arrive as [id][data],
     * [id][data] goes back as bytes. */
    int fd = raw_connect(ep);
    unsigned char id[256];
    char buf[256];
    int len = -1;
    int id_len = recv_pair(router, id, buf, &len);
    CHECK(len == 0);
    /* Unlike a STREAM, it does not take the id it made up as its own ZMQ_ROUTING_ID. */
    size_t own_len = sizeof buf;
    CHECK_RC(zmq_getsockopt(router, ZMQ_ROUTING_ID, buf, &own_len));
    CHECK(own_len == 0);
    CHECK(!readable_within(fd, 100));
    CHECK(write(fd, "hello raw", 9) == 9);
    unsigned char id2[256];
    CHECK(recv_pair(router, id2, buf, &len) == id_len && memcmp(id, id2, (size_t)id_len) == 0);
    CHECK(len == 9 && strcmp(buf, "hello raw") == 0);
    CHECK(zmq_send(router, id, (size_t)id_len, ZMQ_SNDMORE) == id_len);
    CHECK(zmq_send(router, "back", 4, 0) == 4);
    char got[64] = {0};
    CHECK(read(fd, got, sizeof got) == 4 && memcmp(got, "back", 4) == 0);

    /* A routing id nobody has: dropped, or EHOSTUNREACH under ROUTER_MANDATORY. */
    CHECK(zmq_send(router, "nobody", 6, ZMQ_SNDMORE) == 6);
    CHECK(zmq_send(router, "lost", 4, 0) == 4);
    tu_set_int(router, ZMQ_ROUTER_MANDATORY, 1);
    CHECK_ERR(zmq_send(router, "nobody", 6, ZMQ_SNDMORE), EHOSTUNREACH);
    tu_set_int(router, ZMQ_ROUTER_MANDATORY, 0);

    /* A reply then an empty frame: the reply arrives, then the stream ends once the
     * socket is used again, and that end is not announced. */
    CHECK(zmq_send(router, id, (size_t)id_len, ZMQ_SNDMORE) == id_len);
    CHECK(zmq_send(router, "bye", 3, 0) == 3);
    CHECK(zmq_send(router, id, (size_t)id_len, ZMQ_SNDMORE) == id_len);
    CHECK(zmq_send(router, NULL, 0, 0) == 0);
    zmq_pollitem_t it = {router, 0, ZMQ_POLLIN, 0};
    CHECK(zmq_poll(&it, 1, 50) == 0);
    memset(got, 0, sizeof got);
    CHECK(read(fd, got, sizeof got) == 3 && memcmp(got, "bye", 3) == 0);
    CHECK(read(fd, got, sizeof got) == 0);
    close(fd);
    CHECK(zmq_poll(&it, 1, 200) == 0);

    /* A client that ends its connection is announced: [id][empty]. */
    fd = raw_connect(ep);
    id_len = recv_pair(router, id, buf, &len);
    CHECK(len == 0);
    close(fd);
    CHECK(recv_pair(router, id2, buf, &len) == id_len && memcmp(id, id2, (size_t)id_len) == 0);
    CHECK(len == 0);

    /* A connect of its own to a plain TCP server: announced once up, no greeting. */
    char lep[64];
    int lfd = tu_tcp_listener(lep, sizeof lep);
    CHECK_RC(zmq_connect(router, lep));
    int sfd = accept(lfd, NULL, NULL);
    CHECK(sfd >= 0);
    id_len = recv_pair(router, id, buf, &len);
    CHECK(len == 0);
    CHECK(!readable_within(sfd, 100));
    CHECK(write(sfd, "from server", 11) == 11);
    CHECK(recv_pair(router, id2, buf, &len) == id_len && memcmp(id, id2, (size_t)id_len) == 0);
    CHECK(len == 11 && strcmp(buf, "from server") == 0);
    close(sfd);
    close(lfd);

    CHECK_RC(zmq_close(router));
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_router_raw");
}
