/* A child forked from a process with a context closes the sockets it inherited and ends
 * that context, then uses a context of its own (libzmq 4.3.4's test_fork). The child has
 * no I/O thread: libzmq's zmq_close returns 0 and zmq_ctx_term -1 with EINTR there;
 * ferromq's close waited for the I/O thread to release the listener and hung. A 10 s
 * alarm in the child turns a hang into a failure. Passes on Debian's libzmq. */
#include "testutil.h"
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    tu_set_int(pull, ZMQ_RCVTIMEO, 5000);
    CHECK_RC(zmq_bind(pull, "tcp://127.0.0.1:*"));
    char ep[256];
    tu_last_endpoint(pull, ep, sizeof ep);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        int rc = zmq_close(pull);
        int term = zmq_ctx_term(ctx);
        int term_errno = zmq_errno();
        void *own = zmq_ctx_new();
        void *push = zmq_socket(own, ZMQ_PUSH);
        int sent = 0;
        if (push != NULL && zmq_connect(push, ep) == 0) {
            for (int i = 0; i < 5; i++) {
                sent += zmq_send(push, "Hello", 5, 0) == 5;
            }
        }
        zmq_close(push);
        zmq_ctx_term(own);
        /* Exit status: 0 when the child saw what libzmq gives. */
        _exit(rc == 0 && term == -1 && term_errno == EINTR && sent == 5 ? 0 : 1);
    }
    CHECK(pid > 0);
    char buf[8];
    for (int i = 0; i < 5; i++) {
        CHECK(zmq_recv(pull, buf, sizeof buf, 0) == 5 && memcmp(buf, "Hello", 5) == 0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) == -1 && errno == EINTR) {
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_RC(zmq_close(pull));
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_fork_child");
}
