/* CURVE through the C ABI: key generation and derivation, key options in both
 * encodings, bad arguments with libzmq's errno, and an encrypted REQ/REP round trip. */
#include "testutil.h"
#include <string.h>

int main(void) {
    CHECK(zmq_has("curve") == 1);

    char pub[41], sec[41], derived[41];
    CHECK_RC(zmq_curve_keypair(pub, sec));
    CHECK(strlen(pub) == 40 && strlen(sec) == 40);
    CHECK_RC(zmq_curve_public(derived, sec));
    CHECK(strcmp(derived, pub) == 0);
    CHECK_ERR(zmq_curve_public(derived, "not z85 at all"), EINVAL);

    void *ctx = zmq_ctx_new();
    void *server = zmq_socket(ctx, ZMQ_REP);
    void *client = zmq_socket(ctx, ZMQ_REQ);
    int one = 1;
    CHECK_RC(zmq_setsockopt(server, ZMQ_CURVE_SERVER, &one, sizeof one));
    CHECK_RC(zmq_setsockopt(server, ZMQ_CURVE_SECRETKEY, sec, 40));
    int mech = -1;
    size_t len = sizeof mech;
    CHECK_RC(zmq_getsockopt(server, ZMQ_MECHANISM, &mech, &len));
    CHECK(mech == ZMQ_CURVE);
    /* Keys read back as 32 raw bytes or 40 Z85 characters + NUL; other sizes fail. */
    char text[41];
    len = sizeof text;
    CHECK_RC(zmq_getsockopt(server, ZMQ_CURVE_SECRETKEY, text, &len));
    CHECK(len == 41 && strcmp(text, sec) == 0);
    unsigned char raw[32], decoded[32];
    len = sizeof raw;
    CHECK_RC(zmq_getsockopt(server, ZMQ_CURVE_SECRETKEY, raw, &len));
    CHECK(zmq_z85_decode(decoded, sec) != NULL && memcmp(raw, decoded, 32) == 0);
    len = 20;
    CHECK_ERR(zmq_getsockopt(server, ZMQ_CURVE_SECRETKEY, raw, &len), EINVAL);
    CHECK_ERR(zmq_setsockopt(server, ZMQ_CURVE_PUBLICKEY, "short", 5), EINVAL);
    CHECK_ERR(zmq_setsockopt(server, ZMQ_CURVE_SERVER, &one, 2), EINVAL);

    char cpub[41], csec[41];
    CHECK_RC(zmq_curve_keypair(cpub, csec));
    CHECK_RC(zmq_setsockopt(client, ZMQ_CURVE_SERVERKEY, pub, 41));
    CHECK_RC(zmq_setsockopt(client, ZMQ_CURVE_PUBLICKEY, cpub, 41));
    CHECK_RC(zmq_setsockopt(client, ZMQ_CURVE_SECRETKEY, csec, 41));
    CHECK_RC(zmq_bind(server, "tcp://127.0.0.1:*"));
    char ep[256];
    tu_last_endpoint(server, ep, sizeof ep);
    CHECK_RC(zmq_connect(client, ep));
    CHECK(zmq_send(client, "secret", 6, 0) == 6);
    char buf[16];
    CHECK(zmq_recv(server, buf, sizeof buf, 0) == 6 && memcmp(buf, "secret", 6) == 0);
    CHECK(zmq_send(server, "ok", 2, 0) == 2);
    CHECK(zmq_recv(client, buf, sizeof buf, 0) == 2);

    tu_set_int(server, ZMQ_LINGER, 0);
    tu_set_int(client, ZMQ_LINGER, 0);
    zmq_close(server);
    zmq_close(client);
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_curve");
}
