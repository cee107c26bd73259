/* zmq_poll over sockets and plain fds; ZMQ_FD/ZMQ_EVENTS; zmq_msg_t life cycle. */
#include "testutil.h"
#include <unistd.h>

static int freed = 0;
static void free_fn(void *data, void *hint) {
    CHECK(hint == (void *)0x1234);
    free(data);
    freed++;
}

int main(void) {
    void *ctx = zmq_ctx_new();
    void *pull, *push;
    tu_push_pull(ctx, "tcp://127.0.0.1:*", &pull, &push);

    int fds[2];
    CHECK(pipe(fds) == 0);
    zmq_pollitem_t items[2] = {{pull, 0, ZMQ_POLLIN, 0}, {NULL, fds[0], ZMQ_POLLIN, 0}};
    CHECK(zmq_poll(items, 2, 0) == 0);
    CHECK(write(fds[1], "x", 1) == 1);
    CHECK(zmq_poll(items, 2, 1000) == 1);
    CHECK(items[1].revents & ZMQ_POLLIN);

    /* zero-copy message with a free function */
    char *payload = malloc(1000);
    memset(payload, 'z', 1000);
    zmq_msg_t m;
    CHECK_RC(zmq_msg_init_data(&m, payload, 1000, free_fn, (void *)0x1234));
    CHECK(zmq_msg_size(&m) == 1000);
    CHECK(zmq_msg_send(&m, push, 0) == 1000);
    CHECK(zmq_poll(items, 1, 5000) == 1);
    CHECK(items[0].revents & ZMQ_POLLIN);
    zmq_msg_t r;
    zmq_msg_init(&r);
    CHECK(zmq_msg_recv(&r, pull, 0) == 1000);
    CHECK(((char *)zmq_msg_data(&r))[999] == 'z');
    CHECK(zmq_msg_gets(&r, "Socket-Type") != NULL &&
          strcmp(zmq_msg_gets(&r, "Socket-Type"), "PUSH") == 0);
    zmq_msg_t c;
    zmq_msg_init(&c);
    CHECK_RC(zmq_msg_copy(&c, &r));
    CHECK(zmq_msg_size(&c) == 1000);
    zmq_msg_close(&r);
    zmq_msg_close(&c);

    /* ZMQ_FD + ZMQ_EVENTS: readable fd after a message arrives, POLLIN in EVENTS */
    int fd;
    size_t len = sizeof fd;
    CHECK_RC(zmq_getsockopt(pull, ZMQ_FD, &fd, &len));
    int ev;
    len = sizeof ev;
    CHECK_RC(zmq_getsockopt(pull, ZMQ_EVENTS, &ev, &len));
    CHECK((ev & ZMQ_POLLIN) == 0);
    CHECK(zmq_send(push, "y", 1, 0) == 1);
    zmq_pollitem_t fditem = {NULL, fd, ZMQ_POLLIN, 0};
    CHECK(zmq_poll(&fditem, 1, 5000) == 1);
    len = sizeof ev;
    CHECK_RC(zmq_getsockopt(pull, ZMQ_EVENTS, &ev, &len));
    CHECK(ev & ZMQ_POLLIN);
    /* A ready socket and a ready plain fd are both reported (the pipe still holds "x"). */
    items[0].revents = items[1].revents = 0;
    CHECK(zmq_poll(items, 2, 0) == 2);
    CHECK((items[0].revents & ZMQ_POLLIN) && (items[1].revents & ZMQ_POLLIN));
    /* More items than fit on the stack (16), the ready socket last. */
    zmq_pollitem_t many[20];
    for (int i = 0; i < 19; i++) many[i] = (zmq_pollitem_t){NULL, fds[0], ZMQ_POLLIN, 0};
    many[19] = (zmq_pollitem_t){pull, 0, ZMQ_POLLIN, 0};
    CHECK(zmq_poll(many, 20, 0) == 20);
    CHECK(many[19].revents == ZMQ_POLLIN);
    close(fds[0]);
    close(fds[1]);

    tu_set_int(push, ZMQ_LINGER, 0);
    zmq_close(push);
    zmq_close(pull);
    CHECK_RC(zmq_ctx_term(ctx));
    CHECK(freed == 1);
    return tu_finish("test_poll_msg");
}
