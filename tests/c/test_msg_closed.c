/* A message after zmq_msg_close, as libzmq 4.3.4 treats it (probed side by side with
 * Debian's libzmq): closing it again, receiving into it, copying or moving it (either
 * side) fail with EFAULT; zmq_msg_init makes it usable again. (libzmq aborts on
 * zmq_msg_send, zmq_msg_size and zmq_msg_data of a closed message, so those are checked
 * only where the library is not libzmq: send fails with EFAULT.) */
#include "testutil.h"
#include <string.h>

int main(void) {
    void *ctx = zmq_ctx_new();
    void *a = zmq_socket(ctx, ZMQ_PAIR), *b = zmq_socket(ctx, ZMQ_PAIR);
    CHECK_RC(zmq_bind(b, "inproc://closed"));
    CHECK_RC(zmq_connect(a, "inproc://closed"));
    tu_set_int(b, ZMQ_RCVTIMEO, 2000);

    zmq_msg_t m, other;
    for (int sized = 0; sized < 2; sized++) {
        if (sized)
            CHECK_RC(zmq_msg_init_size(&m, 100));
        else
            CHECK_RC(zmq_msg_init(&m));
        CHECK_RC(zmq_msg_close(&m));
        CHECK_ERR(zmq_msg_close(&m), EFAULT);
        CHECK_RC(zmq_send(a, "x", 1, 0));
        CHECK_ERR(zmq_msg_recv(&m, b, 0), EFAULT);
        CHECK_RC(zmq_msg_init(&other));
        CHECK_ERR(zmq_msg_copy(&other, &m), EFAULT);
        CHECK_ERR(zmq_msg_copy(&m, &other), EFAULT);
        CHECK_ERR(zmq_msg_move(&other, &m), EFAULT);
        CHECK_ERR(zmq_msg_move(&m, &other), EFAULT);
        CHECK_RC(zmq_msg_close(&other));
        /* The refused receive left the frame queued; an init makes the message usable. */
        CHECK_RC(zmq_msg_init(&m));
        CHECK(zmq_msg_recv(&m, b, 0) == 1);
        CHECK(memcmp(zmq_msg_data(&m), "x", 1) == 0);
        CHECK_RC(zmq_msg_close(&m));
    }
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
    /* ferromq reports 4.3.5; Debian's libzmq (which aborts here) 4.3.4. */
    if (major == 4 && minor == 3 && patch == 5) {
        CHECK_RC(zmq_msg_init_size(&m, 3));
        CHECK_RC(zmq_msg_close(&m));
        CHECK_ERR(zmq_msg_send(&m, a, ZMQ_DONTWAIT), EFAULT);
        CHECK(zmq_msg_size(&m) == 0);
    }
    zmq_close(a);
    zmq_close(b);
    zmq_ctx_term(ctx);
    return tu_finish("test_msg_closed");
}
