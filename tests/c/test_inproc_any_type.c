/* Over inproc any two socket types connect, as with libzmq 4.3.4: it checks types only in
 * the ZMTP handshake, which inproc does not have (libzmq's own test_inproc_connect has
 * thirty PAIRs connect to a PULL, before and after it binds, and counts on their
 * messages). ferromq refused a connect to an already bound socket of a type the ZMTP
 * rules do not pair with ENOCOMPATPROTO. Passes on Debian's libzmq. */
#include "testutil.h"

static void *sock(void *ctx, int type) {
    void *s = zmq_socket(ctx, type);
    tu_set_int(s, ZMQ_LINGER, 0);
    tu_set_int(s, ZMQ_RCVTIMEO, 2000);
    tu_set_int(s, ZMQ_SNDTIMEO, 2000);
    return s;
}

int main(void) {
    void *ctx = zmq_ctx_new();
    /* A PAIR connecting before the PULL binds, and one after. */
    void *early = sock(ctx, ZMQ_PAIR);
    CHECK_RC(zmq_connect(early, "inproc://sink"));
    CHECK(zmq_send(early, "early", 5, 0) == 5);
    void *pull = sock(ctx, ZMQ_PULL);
    CHECK_RC(zmq_bind(pull, "inproc://sink"));
    void *late = sock(ctx, ZMQ_PAIR);
    CHECK_RC(zmq_connect(late, "inproc://sink"));
    CHECK(zmq_send(late, "late", 4, 0) == 4);
    char buf[16];
    int got_early = 0, got_late = 0;
    for (int i = 0; i < 2; i++) {
        int n = zmq_recv(pull, buf, sizeof buf, 0);
        got_early += n == 5 && memcmp(buf, "early", 5) == 0;
        got_late += n == 4 && memcmp(buf, "late", 4) == 0;
    }
    CHECK(got_early == 1 && got_late == 1);
    /* Other pairs ZMTP would refuse connect too. */
    void *pub = sock(ctx, ZMQ_PUB);
    CHECK_RC(zmq_connect(pub, "inproc://sink"));
    void *req = sock(ctx, ZMQ_REQ);
    CHECK_RC(zmq_bind(req, "inproc://req"));
    void *sub = sock(ctx, ZMQ_SUB);
    CHECK_RC(zmq_connect(sub, "inproc://req"));
    void *all[] = {early, pull, late, pub, req, sub};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        CHECK_RC(zmq_close(all[i]));
    }
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_inproc_any_type");
}
