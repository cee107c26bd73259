/* A program that sleeps on ZMQ_FD and asks zmq_poll with timeout 0 which socket is ready:
 * libzmq's zmq_poll reads ZMQ_EVENTS of each socket, so the look resets the descriptor
 * and the next message makes it readable again. */
#include "testutil.h"
#include <poll.h>

static int fd_readable(int fd, int timeout_ms) {
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

int main(void) {
    void *ctx = zmq_ctx_new();
    void *pull, *push;
    tu_push_pull(ctx, "tcp://127.0.0.1:*", &pull, &push);
    int fd;
    size_t len = sizeof fd;
    CHECK_RC(zmq_getsockopt(pull, ZMQ_FD, &fd, &len));
    zmq_pollitem_t item = {pull, 0, ZMQ_POLLIN, 0};
    char buf[16];

    for (int round = 0; round < 3; round++) {
        /* nothing there: the look leaves the descriptor waiting for the next change */
        CHECK(zmq_poll(&item, 1, 0) == 0);
        CHECK(!fd_readable(fd, 0));
        CHECK(zmq_send(push, "ping", 4, 0) == 4);
        CHECK(fd_readable(fd, 5000));
        /* readable means "look": the message may still be on its way over tcp */
        int ready = 0;
        for (int i = 0; i < 5000 && !ready; i++) {
            ready = zmq_poll(&item, 1, 0);
            if (!ready)
                poll(NULL, 0, 1);
        }
        CHECK(ready == 1);
        CHECK(zmq_recv(pull, buf, sizeof buf, ZMQ_DONTWAIT) == 4);
    }
    /* the last look found nothing: the descriptor is not left readable (no busy loop) */
    CHECK(zmq_poll(&item, 1, 0) == 0);
    CHECK(!fd_readable(fd, 0));

    tu_set_int(push, ZMQ_LINGER, 0);
    zmq_close(push);
    zmq_close(pull);
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_fd_with_poll");
}
