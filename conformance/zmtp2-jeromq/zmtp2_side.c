/* The library's side of conformance/zmtp2-jeromq/run.sh: one socket talking to a JeroMQ
 * 0.3.x (ZMTP 2.0) peer, printing what it sees for run.sh to check.
 *
 * A bound side prints "ready ENDPOINT" first (bind to port *).
 *
 *   pull EP     bind a PULL, print four frames, then how the connection ended (monitor)
 *   push EP     connect a PUSH to a bound peer, send "hello" twice
 *   pub EP      bind a PUB, send "other" and "hello" every 100 ms until the peer has
 *               come and gone (monitor: DISCONNECTED), or 20 s
 *   router EP   bind a ROUTER, print one message with its routing id, reply "back" */
#include <stdio.h>
#include <string.h>
#include <zmq.h>

static void print_frames(void *s, int n) {
    for (int i = 0; i < n; i++) {
        char buf[64];
        int len = zmq_recv(s, buf, sizeof buf - 1, 0);
        if (len < 0) {
            printf("recv failed: %s\n", zmq_strerror(zmq_errno()));
            return;
        }
        buf[len] = 0;
        int more = 0;
        size_t sz = sizeof more;
        zmq_getsockopt(s, ZMQ_RCVMORE, &more, &sz);
        printf("frame %s%s\n", buf, more ? " more" : "");
    }
}

/* The next monitor event's code (its value in *value), or -1 after the receive timeout. */
static int next_event(void *mon, unsigned *value) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, mon, 0) < 0)
        return -1;
    unsigned short ev;
    memcpy(&ev, zmq_msg_data(&m), 2);
    memcpy(value, (char *)zmq_msg_data(&m) + 2, 4);
    zmq_msg_close(&m);
    zmq_msg_init(&m);
    zmq_msg_recv(&m, mon, 0);
    zmq_msg_close(&m);
    return ev;
}

/* Prints monitor events until DISCONNECTED or 10 s of silence. */
static void print_events(void *mon) {
    unsigned value;
    int ev;
    while ((ev = next_event(mon, &value)) != -1) {
        printf("event %#x %u\n", ev, value);
        if (ev == ZMQ_EVENT_DISCONNECTED)
            return;
    }
}

int main(int argc, char **argv) {
    if (argc != 3)
        return 2;
    const char *role = argv[1], *ep = argv[2];
    void *ctx = zmq_ctx_new();
    int timeout = 10000, linger = 1000;
    int type = !strcmp(role, "pull") ? ZMQ_PULL : !strcmp(role, "push") ? ZMQ_PUSH
             : !strcmp(role, "pub") ? ZMQ_PUB : ZMQ_ROUTER;
    void *s = zmq_socket(ctx, type);
    zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_socket_monitor(s, "inproc://side-monitor",
                       ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                           ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_DISCONNECTED);
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    zmq_setsockopt(mon, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_connect(mon, "inproc://side-monitor");
    int rc = !strcmp(role, "push") ? zmq_connect(s, ep) : zmq_bind(s, ep);
    if (rc != 0) {
        printf("bind/connect failed: %s\n", zmq_strerror(zmq_errno()));
        return 1;
    }
    char last[256] = "";
    size_t len = sizeof last;
    zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, last, &len);
    printf("ready %s\n", last);
    fflush(stdout);
    if (!strcmp(role, "pull")) {
        print_frames(s, 4);
        print_events(mon);
    } else if (!strcmp(role, "push")) {
        zmq_send(s, "hello", 5, 0);
        zmq_send(s, "hello", 5, 0);
    } else if (!strcmp(role, "pub")) {
        zmq_pollitem_t item = {mon, 0, ZMQ_POLLIN, 0};
        for (int i = 0; i < 200; i++) {
            zmq_send(s, "other", 5, 0);
            zmq_send(s, "hello", 5, 0);
            unsigned value;
            if (zmq_poll(&item, 1, 100) == 1 && next_event(mon, &value) == ZMQ_EVENT_DISCONNECTED)
                break;
        }
    } else {
        char id[16];
        int n = zmq_recv(s, id, sizeof id, 0);
        if (n > 0) {
            printf("routing id %.*s\n", n, id);
            print_frames(s, 2);
            zmq_send(s, id, (size_t)n, ZMQ_SNDMORE);
            zmq_send(s, "back", 4, 0);
        } else {
            printf("recv failed: %s\n", zmq_strerror(zmq_errno()));
        }
    }
    fflush(stdout);
    zmq_close(s);
    zmq_close(mon);
    zmq_ctx_term(ctx);
    return 0;
}
