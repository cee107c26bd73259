/* zmq_poll at its edges: no items, a negative item count, NULL items, a plain
 * descriptor (a pipe, readable or not), events nobody asked for, and sockets that
 * are readable, writable or neither; each line the result, errno and revents. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

static void show_poll(const char *what, zmq_pollitem_t *items, int n, long timeout) {
    int rc = zmq_poll(items, n, timeout);
    printf("%s rc=%d errno=%d revents=", what, rc, rc < 0 ? zmq_errno() : 0);
    for (int i = 0; items && i < n; i++)
        printf("%s%d", i ? "," : "", items[i].revents);
    putchar('\n');
}

int main(void) {
    void *ctx = zmq_ctx_new();
    show_poll("no items", NULL, 0, 0);
    show_poll("no items, 10 ms", NULL, 0, 10);
    show_poll("NULL items, count 1", NULL, 1, 0);

    void *a = zmq_socket(ctx, ZMQ_PAIR);
    void *b = zmq_socket(ctx, ZMQ_PAIR);
    zmq_bind(a, "inproc://differential-poll");
    zmq_connect(b, "inproc://differential-poll");
    zmq_pollitem_t items[2];
    memset(items, 0, sizeof items);
    items[0].socket = a;
    items[0].events = ZMQ_POLLIN;
    show_poll("idle PAIR, POLLIN", items, 1, 0);
    show_poll("count -1", items, -1, 0);
    items[0].events = ZMQ_POLLIN | ZMQ_POLLOUT;
    show_poll("idle PAIR, POLLIN|POLLOUT", items, 1, 0);
    items[0].events = ZMQ_POLLERR | ZMQ_POLLPRI;
    show_poll("idle PAIR, POLLERR|POLLPRI", items, 1, 0);
    items[0].events = 0;
    show_poll("idle PAIR, no events", items, 1, 0);
    zmq_send(b, "x", 1, 0);
    items[0].events = ZMQ_POLLIN | ZMQ_POLLOUT;
    show_poll("PAIR with a message, POLLIN|POLLOUT", items, 1, 100);
    items[1] = items[0];
    show_poll("the same socket twice", items, 2, 0);

    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    zmq_pollitem_t fd_items[2];
    memset(fd_items, 0, sizeof fd_items);
    fd_items[0].fd = fds[0];
    fd_items[0].events = ZMQ_POLLIN;
    fd_items[1].fd = fds[1];
    fd_items[1].events = ZMQ_POLLIN | ZMQ_POLLOUT;
    show_poll("pipe, nothing written", fd_items, 2, 0);
    if (write(fds[1], "x", 1) != 1)
        return 1;
    show_poll("pipe, a byte written", fd_items, 2, 0);
    fd_items[0].fd = -1;
    show_poll("fd -1 beside the write end", fd_items, 2, 0);
    close(fds[0]);
    close(fds[1]);

    zmq_close(b);
    zmq_close(a);
    zmq_ctx_term(ctx);
    return 0;
}
