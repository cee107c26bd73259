/* A REP takes the ROUTER options libzmq 4.3.4 lets it have (its REP is a ROUTER inside):
 * ZMQ_ROUTER_MANDATORY, ZMQ_ROUTER_HANDOVER, ZMQ_PROBE_ROUTER and ZMQ_CONNECT_ROUTING_ID
 * are accepted (ferromq refused them with EINVAL), negative values and reads refused as
 * on a ROUTER; PROBE_ROUTER greets each new peer with an empty message ahead of any
 * reply, then requests and replies go on as usual; a requester announcing a routing id
 * another connected requester holds is not served, unless ZMQ_ROUTER_HANDOVER (then it
 * takes the id over). Passes on Debian's libzmq. */
#include "testutil.h"

int main(void) {
    void *ctx = zmq_ctx_new();
    const int opts[] = {ZMQ_ROUTER_MANDATORY, ZMQ_ROUTER_HANDOVER, ZMQ_PROBE_ROUTER};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        void *rep = zmq_socket(ctx, ZMQ_REP);
        int one = 1, minus = -1, v = 0;
        size_t len = sizeof v;
        CHECK_RC(zmq_setsockopt(rep, opts[i], &one, sizeof one));
        CHECK_ERR(zmq_setsockopt(rep, opts[i], &minus, sizeof minus), EINVAL);
        CHECK_ERR(zmq_getsockopt(rep, opts[i], &v, &len), EINVAL);
        CHECK_RC(zmq_close(rep));
    }

    /* CONNECT_ROUTING_ID: a REP's, as a ROUTER's; not a DEALER's. */
    void *rep = zmq_socket(ctx, ZMQ_REP);
    CHECK_RC(zmq_setsockopt(rep, ZMQ_CONNECT_ROUTING_ID, "peer", 4));
    CHECK_ERR(zmq_setsockopt(rep, ZMQ_CONNECT_ROUTING_ID, "", 0), EINVAL);
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    CHECK_ERR(zmq_setsockopt(dealer, ZMQ_CONNECT_ROUTING_ID, "peer", 4), EINVAL);
    CHECK_RC(zmq_close(dealer));

    /* A REP that names its connect's peer still serves it. */
    void *server = zmq_socket(ctx, ZMQ_DEALER);
    tu_set_int(server, ZMQ_RCVTIMEO, 3000);
    tu_set_int(rep, ZMQ_RCVTIMEO, 3000);
    CHECK_RC(zmq_bind(server, "inproc://rep-connect-rid"));
    CHECK_RC(zmq_connect(rep, "inproc://rep-connect-rid"));
    CHECK(zmq_send(server, "", 0, ZMQ_SNDMORE) == 0);
    CHECK(zmq_send(server, "ask", 3, 0) == 3);
    char buf[16];
    CHECK(zmq_recv(rep, buf, sizeof buf, 0) == 3);
    CHECK(zmq_send(rep, "ans", 3, 0) == 3);
    CHECK(zmq_recv(server, buf, sizeof buf, 0) == 0);
    CHECK(zmq_recv(server, buf, sizeof buf, 0) == 3 && memcmp(buf, "ans", 3) == 0);
    CHECK_RC(zmq_close(server));
    CHECK_RC(zmq_close(rep));

    /* PROBE_ROUTER: each new peer first gets an empty message (tcp and inproc). */
    const char *eps[] = {"tcp://127.0.0.1:*", "inproc://rep-probe"};
    for (size_t i = 0; i < 2; i++) {
        rep = zmq_socket(ctx, ZMQ_REP);
        tu_set_int(rep, ZMQ_PROBE_ROUTER, 1);
        tu_set_int(rep, ZMQ_RCVTIMEO, 3000);
        CHECK_RC(zmq_bind(rep, eps[i]));
        char ep[256];
        tu_last_endpoint(rep, ep, sizeof ep);
        void *client = zmq_socket(ctx, ZMQ_DEALER);
        tu_set_int(client, ZMQ_RCVTIMEO, 3000);
        CHECK_RC(zmq_connect(client, ep));
        /* The probe comes first, whenever the REP attached the peer (libzmq: when the
         * REP next handles its commands, here at its receive). */
        CHECK(zmq_send(client, "", 0, ZMQ_SNDMORE) == 0);
        CHECK(zmq_send(client, "ping", 4, 0) == 4);
        CHECK(zmq_recv(rep, buf, sizeof buf, 0) == 4 && memcmp(buf, "ping", 4) == 0);
        CHECK(zmq_send(rep, "pong", 4, 0) == 4);
        int more = -1;
        size_t len = sizeof more;
        CHECK(zmq_recv(client, buf, sizeof buf, 0) == 0);
        CHECK_RC(zmq_getsockopt(client, ZMQ_RCVMORE, &more, &len));
        CHECK(more == 0);
        CHECK(zmq_recv(client, buf, sizeof buf, 0) == 0);
        CHECK_RC(zmq_getsockopt(client, ZMQ_RCVMORE, &more, &len));
        CHECK(more == 1);
        CHECK(zmq_recv(client, buf, sizeof buf, 0) == 4 && memcmp(buf, "pong", 4) == 0);
        CHECK_RC(zmq_close(client));
        CHECK_RC(zmq_close(rep));
    }

    /* A second requester announcing a routing id a connected one holds is not served
     * (tcp); with ROUTER_HANDOVER it takes the id over and is. */
    for (int handover = 0; handover < 2; handover++) {
        rep = zmq_socket(ctx, ZMQ_REP);
        tu_set_int(rep, ZMQ_ROUTER_HANDOVER, handover);
        tu_set_int(rep, ZMQ_RCVTIMEO, handover ? 3000 : 300);
        CHECK_RC(zmq_bind(rep, "tcp://127.0.0.1:*"));
        char ep[256];
        tu_last_endpoint(rep, ep, sizeof ep);
        void *first = zmq_socket(ctx, ZMQ_REQ);
        void *second = zmq_socket(ctx, ZMQ_REQ);
        CHECK_RC(zmq_setsockopt(first, ZMQ_ROUTING_ID, "same", 4));
        CHECK_RC(zmq_setsockopt(second, ZMQ_ROUTING_ID, "same", 4));
        tu_set_int(first, ZMQ_RCVTIMEO, 3000);
        tu_set_int(second, ZMQ_RCVTIMEO, 3000);
        CHECK_RC(zmq_connect(first, ep));
        CHECK(zmq_send(first, "A", 1, 0) == 1);
        CHECK(zmq_recv(rep, buf, sizeof buf, 0) == 1 && buf[0] == 'A');
        CHECK(zmq_send(rep, "a", 1, 0) == 1);
        CHECK(zmq_recv(first, buf, sizeof buf, 0) == 1 && buf[0] == 'a');
        CHECK_RC(zmq_connect(second, ep));
        CHECK(zmq_send(second, "B", 1, 0) == 1);
        if (handover) {
            CHECK(zmq_recv(rep, buf, sizeof buf, 0) == 1 && buf[0] == 'B');
            CHECK(zmq_send(rep, "b", 1, 0) == 1);
            CHECK(zmq_recv(second, buf, sizeof buf, 0) == 1 && buf[0] == 'b');
        } else {
            CHECK_ERR(zmq_recv(rep, buf, sizeof buf, 0), EAGAIN);
        }
        tu_set_int(first, ZMQ_LINGER, 0);
        tu_set_int(second, ZMQ_LINGER, 0);
        CHECK_RC(zmq_close(first));
        CHECK_RC(zmq_close(second));
        CHECK_RC(zmq_close(rep));
    }

    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_rep_router_options");
}
