/* ZMQ_USE_FD: a bind takes the caller's listening socket instead of making its own
 * (libzmq 4.3.4's test_use_fd), over tcp and ipc. The socket becomes the library's: it is
 * closed with the zmq socket; an ipc socket's file stays the caller's (neither removed at
 * bind, which would strand the listener, nor at close). Passes on Debian's libzmq. */
#include "testutil.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A message goes from a PUSH connected to `ep` to `pull`. */
static void exchange(void *ctx, void *pull, const char *ep) {
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(pull, ZMQ_RCVTIMEO, 3000);
    CHECK_RC(zmq_connect(push, ep));
    CHECK(zmq_send(push, "hello", 5, 0) == 5);
    char buf[8];
    CHECK(zmq_recv(pull, buf, sizeof buf, 0) == 5);
    CHECK(memcmp(buf, "hello", 5) == 0);
    CHECK_RC(zmq_close(push));
}

/* True once `fd` is closed (within 2 s: the I/O thread closes listeners). */
static int closed_soon(int fd) {
    for (int i = 0; i < 200; i++) {
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            return 1;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* A PULL adopting listener `fd` binds `bind_ep`: its endpoint is `want`, a message comes
 * in through it, and the descriptor is closed with the socket. */
static void adopted_endpoint(void *ctx, int fd, const char *bind_ep, const char *want) {
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    tu_set_int(pull, ZMQ_USE_FD, fd);
    CHECK_RC(zmq_bind(pull, bind_ep));
    char ep[256];
    tu_last_endpoint(pull, ep, sizeof ep);
    CHECK(strcmp(ep, want) == 0);
    exchange(ctx, pull, ep);
    CHECK_RC(zmq_close(pull));
    CHECK(closed_soon(fd));
}

int main(void) {
    void *ctx = zmq_ctx_new();

    /* tcp: the caller binds and listens on an ephemeral port. */
    char tcp_ep[64];
    int tfd = tu_tcp_listener(tcp_ep, sizeof tcp_ep);

    void *pull = zmq_socket(ctx, ZMQ_PULL);
    tu_set_int(pull, ZMQ_USE_FD, tfd);
    int got = 0;
    size_t len = sizeof got;
    CHECK_RC(zmq_getsockopt(pull, ZMQ_USE_FD, &got, &len));
    CHECK(got == tfd);
    CHECK_RC(zmq_close(pull));
    adopted_endpoint(ctx, tfd, tcp_ep, tcp_ep);

    /* ipc: the caller's socket file. */
    char dir[] = "/tmp/ferromq-usefd-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s/s", dir);
    int ufd = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(ufd >= 0);
    CHECK(bind(ufd, (struct sockaddr *)&sun, sizeof sun) == 0);
    CHECK(listen(ufd, 16) == 0);
    char ipc_ep[160];
    snprintf(ipc_ep, sizeof ipc_ep, "ipc://%s", sun.sun_path);

    pull = zmq_socket(ctx, ZMQ_PULL);
    tu_set_int(pull, ZMQ_USE_FD, ufd);
    CHECK_RC(zmq_bind(pull, ipc_ep));
    exchange(ctx, pull, ipc_ep);
    exchange(ctx, pull, ipc_ep);
    CHECK_RC(zmq_close(pull));
    CHECK(closed_soon(ufd));
    CHECK(access(sun.sun_path, F_OK) == 0);
    CHECK(unlink(sun.sun_path) == 0);

    /* The endpoint is the socket's own address, whatever the bind named: a file, or a
     * name in Linux's abstract namespace (as libzmq 4.3.4 reports them). */
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s/t", dir);
    ufd = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(ufd >= 0);
    CHECK(bind(ufd, (struct sockaddr *)&sun, sizeof sun) == 0);
    CHECK(listen(ufd, 16) == 0);
    snprintf(ipc_ep, sizeof ipc_ep, "ipc://%s", sun.sun_path);
    adopted_endpoint(ctx, ufd, "ipc://*", ipc_ep);
    CHECK(unlink(sun.sun_path) == 0);
    CHECK(rmdir(dir) == 0);

    struct sockaddr_un abs_sun = {.sun_family = AF_UNIX};
    int name_len = snprintf(abs_sun.sun_path + 1, sizeof abs_sun.sun_path - 1,
                            "ferromq-usefd-%d", (int)getpid());
    ufd = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(ufd >= 0);
    socklen_t abs_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + name_len);
    CHECK(bind(ufd, (struct sockaddr *)&abs_sun, abs_len) == 0);
    CHECK(listen(ufd, 16) == 0);
    snprintf(ipc_ep, sizeof ipc_ep, "ipc://@%s", abs_sun.sun_path + 1);
    adopted_endpoint(ctx, ufd, "ipc:///tmp/ferromq-usefd-not-this-path", ipc_ep);

    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_use_fd");
}
