/* Regressions found by pyzmq's suite: single-socket proxy, zero-copy ownership of small
 * buffers, ENAMETOOLONG, and zmq_ctx_term interrupted by a signal while lingering. */
#include "testutil.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static void *rep_device(void *rep) {
    /* One REP socket as both ends: an echo device. Ends with ETERM at context term. The
     * alarm below is for the main thread. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    zmq_proxy(rep, rep, NULL);
    zmq_close(rep);
    return NULL;
}

static int freed;
static void count_free(void *data, void *hint) {
    (void)data;
    (void)hint;
    freed++;
}

static void on_alarm(int sig) { (void)sig; }

int main(void) {
    void *ctx = zmq_ctx_new();

    /* zmq_proxy(rep, rep): requests come back as replies. */
    void *req = zmq_socket(ctx, ZMQ_REQ);
    tu_set_int(req, ZMQ_RCVTIMEO, 5000);
    tu_set_int(req, ZMQ_LINGER, 0);
    CHECK_RC(zmq_bind(req, "tcp://127.0.0.1:*"));
    char ep[256];
    tu_last_endpoint(req, ep, sizeof ep);
    void *rep = zmq_socket(ctx, ZMQ_REP);
    CHECK_RC(zmq_connect(rep, ep));
    pthread_t th;
    CHECK(pthread_create(&th, NULL, rep_device, rep) == 0);
    char buf[16];
    CHECK(zmq_send(req, "hello", 5, 0) == 5);
    CHECK(zmq_recv(req, buf, sizeof buf, 0) == 5 && memcmp(buf, "hello", 5) == 0);

    /* A small zero-copy body stays the caller's until the last copy is closed. */
    static char small[] = "again";
    zmq_msg_t m;
    CHECK_RC(zmq_msg_init_data(&m, small, 5, count_free, NULL));
    CHECK(freed == 0);
    zmq_msg_t c;
    zmq_msg_init(&c);
    CHECK_RC(zmq_msg_copy(&c, &m));
    zmq_msg_close(&m);
    CHECK(freed == 0);
    CHECK(zmq_msg_data(&c) == small);
    zmq_msg_close(&c);
    CHECK(freed == 1);

    /* ipc paths beyond sun_path: ENAMETOOLONG, as libzmq. */
    char longep[256] = "ipc://";
    memset(longep + 6, 'a', 120);
    longep[126] = 0;
    void *s = zmq_socket(ctx, ZMQ_PULL);
    CHECK_ERR(zmq_bind(s, longep), ENAMETOOLONG);
    zmq_close(s);

    /* A message queued for a peer that never comes, LINGER 1500: term waits for it, and a
     * signal interrupts the wait with EINTR; calling again finishes. */
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(push, ZMQ_LINGER, 1500);
    CHECK_RC(zmq_connect(push, "tcp://127.0.0.1:1"));
    CHECK(zmq_send(push, "lost", 4, 0) == 4);
    zmq_close(push);
    zmq_close(req);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART */
    sigaction(SIGALRM, &sa, NULL);
    ualarm(200000, 0);
    int rc = zmq_ctx_term(ctx);
    CHECK(rc == -1 && zmq_errno() == EINTR);
    CHECK(zmq_ctx_term(ctx) == 0);
    pthread_join(th, NULL);
    return tu_finish("test_lifecycle");
}
