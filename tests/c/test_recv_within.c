/* ferromq_msg_recv_within: ferromq's extension (not in zmq.h) that bindings with an event
 * loop use to wait microseconds for a reply before they fall back to polling ZMQ_FD. */
#include "testutil.h"
#include <pthread.h>
#include <unistd.h>

int ferromq_msg_recv_within(zmq_msg_t *msg, void *socket, int flags, int timeout_us);

static void *late_sender(void *push) {
    usleep(2000);
    CHECK(zmq_send(push, "late", 4, 0) == 4);
    return NULL;
}

int main(void) {
    void *ctx = zmq_ctx_new();
    void *pull, *push;
    tu_push_pull(ctx, "tcp://127.0.0.1:*", &pull, &push);
    zmq_msg_t m;
    zmq_msg_init(&m);

    /* nothing queued: EAGAIN once the wait is over, with or without a wait */
    CHECK_ERR(ferromq_msg_recv_within(&m, pull, 0, 0), EAGAIN);
    CHECK_ERR(ferromq_msg_recv_within(&m, pull, 0, 200), EAGAIN);
    /* bad arguments: libzmq's errno conventions */
    CHECK_ERR(ferromq_msg_recv_within(&m, pull, 0, -1), EINVAL);
    CHECK_ERR(ferromq_msg_recv_within(&m, NULL, 0, 10), ENOTSOCK);

    /* a message already there comes at once, and RCVTIMEO (0 here) does not apply */
    tu_set_int(pull, ZMQ_RCVTIMEO, 0);
    CHECK(zmq_send(push, "now", 3, 0) == 3);
    CHECK(ferromq_msg_recv_within(&m, pull, 0, 5000000) == 3);
    CHECK(memcmp(zmq_msg_data(&m), "now", 3) == 0);

    /* a message sent during the wait ends it (the wait is 10 s, the sender waits 2 ms) */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, late_sender, push) == 0);
    CHECK(ferromq_msg_recv_within(&m, pull, 0, 10000000) == 4);
    CHECK(memcmp(zmq_msg_data(&m), "late", 4) == 0);
    pthread_join(t, NULL);

    /* after a timed-out wait ZMQ_FD signals the next message, as after EAGAIN */
    CHECK_ERR(ferromq_msg_recv_within(&m, pull, 0, 100), EAGAIN);
    int fd;
    size_t len = sizeof fd;
    CHECK_RC(zmq_getsockopt(pull, ZMQ_FD, &fd, &len));
    CHECK(zmq_send(push, "fd", 2, 0) == 2);
    zmq_pollitem_t fditem = {NULL, fd, ZMQ_POLLIN, 0};
    CHECK(zmq_poll(&fditem, 1, 5000) == 1);
    CHECK(zmq_msg_recv(&m, pull, ZMQ_DONTWAIT) == 2);

    zmq_msg_close(&m);
    tu_set_int(push, ZMQ_LINGER, 0);
    zmq_close(push);
    zmq_close(pull);
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_recv_within");
}
