/* ipc listeners' peer filters (ZMQ_IPC_FILTER_UID/GID/PID) and the connecting side's
 * events over ipc, as Debian's libzmq 4.3.4 behaves (this program passes on it too):
 * a refused peer is closed with ACCEPT_FAILED (value 0) on the listener and never gets a
 * message through; one matching filter of any kind is enough; NULL empties a list;
 * filters are taken at bind. An ipc connect reports CONNECTED with no CONNECT_DELAYED
 * before it (a Unix socket connects at once). */
#include "testutil.h"
#include <errno.h>
#include <unistd.h>

#define EP "ipc:///tmp/ferromq-test-ipc-filters"

/* A uid/gid/pid no peer here has: not ours, and no group lists our user. */
#define NOBODY 54321

struct filter {
    int option, value, after_bind, clear;
};

/* Binds a PULL with the filters, connects a PUSH from this process and sends one
 * message. Returns 1 if it arrived; on refusal checks the listener's events. */
static int delivered(const struct filter *fs, int n) {
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(push, ZMQ_RECONNECT_IVL, 50);
    tu_set_int(push, ZMQ_LINGER, 0);
    for (int i = 0; i < n; i++) {
        if (!fs[i].after_bind) {
            tu_set_int(pull, fs[i].option, fs[i].value);
        }
        if (fs[i].clear) {
            CHECK_RC(zmq_setsockopt(pull, fs[i].option, NULL, 0));
        }
    }
    void *mon = tu_monitor(ctx, pull, "inproc://ipc-filter-mon", ZMQ_EVENT_ALL);
    CHECK_RC(zmq_bind(pull, EP));
    for (int i = 0; i < n; i++) {
        if (fs[i].after_bind) {
            tu_set_int(pull, fs[i].option, fs[i].value);
        }
    }
    CHECK(tu_next_event(mon, NULL, 0) == ZMQ_EVENT_LISTENING);
    CHECK_RC(zmq_connect(push, EP));
    CHECK_RC(zmq_send(push, "x", 1, ZMQ_DONTWAIT));
    unsigned value = 99;
    int got = tu_accept_verdict(pull, mon, &value);
    if (!got) {
        CHECK(value == 0);
    }
    zmq_close(push);
    zmq_close(pull);
    zmq_close(mon);
    CHECK_RC(zmq_ctx_term(ctx));
    return got;
}

#define DELIVERED(...)                                                          \
    delivered((struct filter[]){__VA_ARGS__},                                   \
              (int)(sizeof((struct filter[]){__VA_ARGS__}) / sizeof(struct filter)))

static void connect_events(void) {
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    void *mon = tu_monitor(ctx, push, "inproc://ipc-connect-mon", ZMQ_EVENT_ALL);
    CHECK_RC(zmq_bind(pull, EP));
    CHECK_RC(zmq_connect(push, EP));
    CHECK(tu_next_event(mon, NULL, 0) == ZMQ_EVENT_CONNECTED);
    CHECK(tu_next_event(mon, NULL, 0) == ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
    zmq_close(push);
    zmq_close(pull);
    zmq_close(mon);
    CHECK_RC(zmq_ctx_term(ctx));
}

int main(void) {
    int uid = (int)getuid(), gid = (int)getgid(), pid = (int)getpid();
    connect_events();

    CHECK(DELIVERED({ZMQ_IPC_FILTER_UID, uid, 0, 0}));
    CHECK(!DELIVERED({ZMQ_IPC_FILTER_UID, NOBODY, 0, 0}));
    CHECK(DELIVERED({ZMQ_IPC_FILTER_GID, gid, 0, 0}));
    CHECK(!DELIVERED({ZMQ_IPC_FILTER_GID, NOBODY, 0, 0}));
    CHECK(DELIVERED({ZMQ_IPC_FILTER_PID, pid, 0, 0}));
    CHECK(!DELIVERED({ZMQ_IPC_FILTER_PID, NOBODY, 0, 0}));
    /* One match of any kind lets the peer in. */
    CHECK(DELIVERED({ZMQ_IPC_FILTER_UID, NOBODY, 0, 0}, {ZMQ_IPC_FILTER_PID, pid, 0, 0}));
    CHECK(DELIVERED({ZMQ_IPC_FILTER_GID, NOBODY, 0, 0}, {ZMQ_IPC_FILTER_UID, uid, 0, 0}));
    /* Lists: a second id adds to the first. */
    CHECK(DELIVERED({ZMQ_IPC_FILTER_PID, NOBODY, 0, 0}, {ZMQ_IPC_FILTER_PID, pid, 0, 0}));
    /* NULL empties the list: no filter left, everyone passes. */
    CHECK(DELIVERED({ZMQ_IPC_FILTER_UID, NOBODY, 0, 1}));
    /* Filters are the listener's at bind; set later, they apply to the next bind. */
    CHECK(DELIVERED({ZMQ_IPC_FILTER_UID, NOBODY, 1, 0}));

    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_PULL);
    int v = uid;
    size_t len = sizeof v;
    CHECK_ERR(zmq_setsockopt(s, ZMQ_IPC_FILTER_UID, &v, 0), EINVAL);
    CHECK_ERR(zmq_setsockopt(s, ZMQ_IPC_FILTER_GID, &v, 2), EINVAL);
    CHECK_RC(zmq_setsockopt(s, ZMQ_IPC_FILTER_PID, NULL, 0));
    CHECK_ERR(zmq_getsockopt(s, ZMQ_IPC_FILTER_UID, &v, &len), EINVAL);
    zmq_close(s);
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_ipc_filters");
}
