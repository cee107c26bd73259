/* Version, capabilities, errno values and bad-argument handling of the C ABI. */
#include "testutil.h"
#include <errno.h>

int main(void) {
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
    CHECK(major == 4 && minor == 3 && patch == 5);
    CHECK(zmq_has("ipc") == 1);
    CHECK(zmq_has("pgm") == 0);
    CHECK(zmq_has("nonsense") == 0);
    CHECK(sizeof(zmq_msg_t) == 64);

    void *ctx = zmq_ctx_new();
    CHECK(ctx != NULL);
    CHECK(zmq_ctx_get(ctx, ZMQ_IO_THREADS) == 1);
    CHECK(zmq_ctx_get(ctx, ZMQ_MAX_SOCKETS) == 1023);
    CHECK(zmq_ctx_get(ctx, ZMQ_MSG_T_SIZE) == 64);

    /* Bad arguments: -1 with libzmq's errno, never a crash. */
    CHECK_ERR(zmq_bind(NULL, "tcp://127.0.0.1:*"), ENOTSOCK);
    CHECK_ERR(zmq_send(NULL, "x", 1, 0), ENOTSOCK);
    CHECK(zmq_socket(ctx, 999) == NULL && zmq_errno() == EINVAL);

    void *s = zmq_socket(ctx, ZMQ_DEALER);
    CHECK(s != NULL);
    int v = 0;
    size_t len = 2;
    CHECK_ERR(zmq_getsockopt(s, ZMQ_LINGER, &v, &len), EINVAL);
    CHECK_ERR(zmq_setsockopt(s, ZMQ_LINGER, &v, 2), EINVAL);
    CHECK_ERR(zmq_setsockopt(s, 9999, &v, sizeof v), EINVAL);
    CHECK_ERR(zmq_setsockopt(s, ZMQ_SUBSCRIBE, "a", 1), EINVAL);
    CHECK_ERR(zmq_bind(s, "nonsense"), EINVAL);
    CHECK_ERR(zmq_bind(s, "pgm://eth0;239.1.1.1:5555"), EPROTONOSUPPORT);
    /* A bind's host, and the source part of one, name local addresses (libzmq 4.3.4:
     * an empty or unknown interface is ENODEV, a source without a port EINVAL); a valid
     * source is resolved and then ignored. */
    CHECK_ERR(zmq_bind(s, "tcp://:5599"), ENODEV);
    CHECK_ERR(zmq_bind(s, "tcp://;127.0.0.1:5598"), EINVAL);
    CHECK_ERR(zmq_bind(s, "tcp://127.0.0.1;127.0.0.1:5598"), EINVAL);
    CHECK_ERR(zmq_bind(s, "tcp://nosuchif0:0;127.0.0.1:5598"), ENODEV);
    void *src = zmq_socket(ctx, ZMQ_PULL);
    CHECK_RC(zmq_bind(src, "tcp://127.0.0.1:0;127.0.0.1:*"));
    char srcep[64];
    tu_last_endpoint(src, srcep, sizeof srcep);
    CHECK(strncmp(srcep, "tcp://127.0.0.1:", 16) == 0 && strchr(srcep, ';') == NULL);
    CHECK_RC(zmq_close(src));
    /* A wildcard port is no connect address (port 0 is taken: test_connect_syntax). */
    CHECK_ERR(zmq_connect(s, "tcp://127.0.0.1:*"), EINVAL);
    CHECK_ERR(zmq_unbind(s, "tcp://127.0.0.1:5999"), ENOENT);
    CHECK_ERR(zmq_recv(s, &v, sizeof v, ZMQ_DONTWAIT), EAGAIN);

    /* Defaults match libzmq. */
    len = sizeof v;
    CHECK_RC(zmq_getsockopt(s, ZMQ_LINGER, &v, &len));
    CHECK(v == -1);
    CHECK_RC(zmq_getsockopt(s, ZMQ_SNDHWM, &v, &len));
    CHECK(v == 1000);
    CHECK_RC(zmq_getsockopt(s, ZMQ_TYPE, &v, &len));
    CHECK(v == ZMQ_DEALER);
    char ep[256];
    len = sizeof ep;
    CHECK_RC(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &len));
    CHECK(len == 1 && ep[0] == 0);

    /* REQ out of turn is EFSM. */
    void *req = zmq_socket(ctx, ZMQ_REQ);
    CHECK_ERR(zmq_recv(req, &v, sizeof v, 0), EFSM);
    CHECK(strlen(zmq_strerror(EFSM)) > 0);

    CHECK_RC(zmq_close(req));
    CHECK_RC(zmq_close(s));
    CHECK_RC(zmq_ctx_term(ctx));

    /* libzmq looks at the context before the socket type: a full context gives EMFILE,
     * an ended one ETERM, whatever type was asked for (probed against libzmq 4.3.4). */
    void *small = zmq_ctx_new();
    CHECK_RC(zmq_ctx_set(small, ZMQ_MAX_SOCKETS, 1));
    void *only = zmq_socket(small, ZMQ_PAIR);
    CHECK(only != NULL);
    CHECK(zmq_socket(small, 999) == NULL && zmq_errno() == EMFILE);
    CHECK(zmq_socket(small, -1) == NULL && zmq_errno() == EMFILE);
    CHECK(zmq_socket(small, ZMQ_PAIR) == NULL && zmq_errno() == EMFILE);
    CHECK_RC(zmq_close(only));
    CHECK_RC(zmq_ctx_shutdown(small));
    CHECK(zmq_socket(small, 999) == NULL && zmq_errno() == ETERM);
    CHECK(zmq_socket(small, ZMQ_PAIR) == NULL && zmq_errno() == ETERM);
    CHECK_RC(zmq_ctx_term(small));
    return tu_finish("test_api");
}
