/* ZMQ_CONNECT_TIMEOUT as Debian's libzmq 4.3.4 applies it (this program passes on it
 * too): a tcp connect that has not completed within the timeout is closed (CLOSED) and
 * retried after the reconnect interval (CONNECT_RETRIED, then CONNECT_DELAYED again).
 * The peer is a listener whose accept queue is full, so that the kernel drops our SYN
 * and the connect hangs (without the timeout, for the kernel's SYN retries). */
#include "testutil.h"
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(l, 0) == 0);
    socklen_t alen = sizeof a;
    CHECK(getsockname(l, (struct sockaddr *)&a, &alen) == 0);
    /* One connection fills a backlog of 0; the ones after it wait for SYN retries. */
    int fillers[2];
    for (int i = 0; i < 2; i++) {
        fillers[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        connect(fillers[i], (struct sockaddr *)&a, sizeof a);
    }
    usleep(50 * 1000);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", ntohs(a.sin_port));

    void *ctx = zmq_ctx_new();
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(push, ZMQ_CONNECT_TIMEOUT, 100);
    tu_set_int(push, ZMQ_RECONNECT_IVL, 50);
    tu_set_int(push, ZMQ_LINGER, 0);
    void *mon = tu_monitor(ctx, push, "inproc://connect-timeout-mon", ZMQ_EVENT_ALL);
    CHECK_RC(zmq_connect(push, ep));
    unsigned value = 0;
    for (int round = 0; round < 2; round++) {
        CHECK(tu_next_event(mon, NULL, 0) == ZMQ_EVENT_CONNECT_DELAYED);
        CHECK(tu_next_event(mon, NULL, 0) == ZMQ_EVENT_CLOSED);
        CHECK(tu_next_event_value(mon, &value, NULL, 0) == ZMQ_EVENT_CONNECT_RETRIED);
        CHECK(value >= 50 && value < 100);
    }
    zmq_close(push);
    zmq_close(mon);
    CHECK_RC(zmq_ctx_term(ctx));
    close(fillers[0]);
    close(fillers[1]);
    close(l);
    return tu_finish("test_connect_timeout");
}
