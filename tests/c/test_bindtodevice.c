/* ZMQ_BINDTODEVICE on tcp, as Debian's libzmq 4.3.4 behaves (this program passes on it
 * too): sockets bound to the loopback device talk over 127.0.0.1; a device that does not
 * exist fails zmq_bind with ENODEV, and a connect through it is accepted by zmq_connect
 * but never gets through; a listener or a connecting socket bound to another device does
 * not reach or see 127.0.0.1. */
#include "testutil.h"
#include <errno.h>
#include <net/if.h>

/* A PULL and a PUSH over tcp on 127.0.0.1, each bound to a device (NULL: none): 1 if a
 * message got through, 0 if not, -1 if zmq_bind failed (errno kept). */
static int delivered(const char *pull_dev, const char *push_dev) {
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(push, ZMQ_LINGER, 0);
    tu_set_int(push, ZMQ_RECONNECT_IVL, 20);
    if (pull_dev) {
        CHECK_RC(zmq_setsockopt(pull, ZMQ_BINDTODEVICE, pull_dev, strlen(pull_dev)));
    }
    if (push_dev) {
        CHECK_RC(zmq_setsockopt(push, ZMQ_BINDTODEVICE, push_dev, strlen(push_dev)));
    }
    int got = -1;
    if (zmq_bind(pull, "tcp://127.0.0.1:*") == 0) {
        char ep[256];
        tu_last_endpoint(pull, ep, sizeof ep);
        CHECK_RC(zmq_connect(push, ep));
        CHECK_RC(zmq_send(push, "x", 1, ZMQ_DONTWAIT));
        tu_set_int(pull, ZMQ_RCVTIMEO, 500);
        char buf[2];
        got = zmq_recv(pull, buf, sizeof buf, 0) == 1;
    }
    int err = zmq_errno();
    zmq_close(push);
    zmq_close(pull);
    CHECK_RC(zmq_ctx_term(ctx));
    errno = err;
    return got;
}

int main(void) {
    CHECK(delivered(NULL, NULL) == 1);
    CHECK(delivered("lo", "lo") == 1);
    CHECK(delivered("nosuchdev0", NULL) == -1 && errno == ENODEV);
    CHECK(delivered(NULL, "nosuchdev0") == 0);

    /* Another device than loopback, if this host has one. */
    struct if_nameindex *ifs = if_nameindex();
    const char *other = NULL;
    for (struct if_nameindex *i = ifs; i && i->if_index != 0; i++) {
        if (strcmp(i->if_name, "lo") != 0) {
            other = i->if_name;
            break;
        }
    }
    if (other) {
        CHECK(delivered(other, NULL) == 0);
        CHECK(delivered(NULL, other) == 0);
    } else {
        printf("test_bindtodevice: no device but lo here; other-device checks not run\n");
    }
    if (ifs) {
        if_freenameindex(ifs);
    }

    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_PULL);
    CHECK_RC(zmq_setsockopt(s, ZMQ_BINDTODEVICE, "lo", 2));
    char name[32];
    size_t len = sizeof name;
    CHECK_RC(zmq_getsockopt(s, ZMQ_BINDTODEVICE, name, &len));
    CHECK(len == 3 && strcmp(name, "lo") == 0);
    zmq_close(s);
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_bindtodevice");
}
