/* A bound PUSH closes with LINGER -1 and messages its peer has not read; the peer then
 * ends its stream (shutdown of its sending side, or close). Real libzmq 4.3 reads that
 * end of stream and drops the connection, so zmq_ctx_term returns (checked by building
 * this file against it); ferromq's lingering connection stopped reading and waited for
 * room forever after a half-close. A 10 s alarm turns a hang into a failure. */
#include "testutil.h"
#include <arpa/inet.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "test_linger_peer_end: zmq_ctx_term did not return\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    _exit(1);
}

/* A raw ZMTP 3.1 NULL PULL peer connected to `port`, past the server's greeting. */
static int raw_pull(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int rcvbuf = 4096;
    CHECK(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) == 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    unsigned char greeting[64] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 1, 'N', 'U', 'L', 'L'};
    static const unsigned char ready[] = {0x04, 26, 5, 'R', 'E', 'A', 'D', 'Y', 11, 'S',
                                          'o', 'c', 'k', 'e', 't', '-', 'T', 'y', 'p', 'e',
                                          0, 0, 0, 4, 'P', 'U', 'L', 'L'};
    CHECK(write(fd, greeting, sizeof greeting) == (ssize_t)sizeof greeting);
    CHECK(write(fd, ready, sizeof ready) == (ssize_t)sizeof ready);
    unsigned char theirs[64];
    size_t got = 0;
    while (got < sizeof theirs) {
        ssize_t n = read(fd, theirs + got, sizeof theirs - got);
        if (n <= 0) {
            CHECK(!"the server's greeting");
            break;
        }
        got += (size_t)n;
    }
    return fd;
}

int main(void) {
    static char body[65536];
    memset(body, 'x', sizeof body);
    signal(SIGALRM, on_alarm);
    for (int half = 1; half >= 0; half--) {
        void *ctx = zmq_ctx_new();
        void *push = zmq_socket(ctx, ZMQ_PUSH);
        tu_set_int(push, ZMQ_SNDBUF, 4096);
        CHECK_RC(zmq_bind(push, "tcp://127.0.0.1:*"));
        char ep[256];
        tu_last_endpoint(push, ep, sizeof ep);
        int fd = raw_pull(atoi(strrchr(ep, ':') + 1));
        for (int i = 0; i < 200; i++) {
            CHECK_RC(zmq_send(push, body, sizeof body, 0));
        }
        CHECK_RC(zmq_close(push));
        usleep(50 * 1000);
        if (half) {
            CHECK(shutdown(fd, SHUT_WR) == 0);
        } else {
            close(fd);
        }
        alarm(10);
        CHECK_RC(zmq_ctx_term(ctx));
        alarm(0);
        if (half) {
            close(fd);
        }
    }
    return tu_finish("test_linger_peer_end");
}
