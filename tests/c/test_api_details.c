/* Details libzmq 4.3.4's own test programs check (test_ctx_options, test_abstract_ipc,
 * test_term_endpoint, test_getsockopt_memset, test_msg_flags, test_rebind_ipc), each of
 * which ferromq did differently: checked here on their own. Passes on Debian's libzmq. */
#include "testutil.h"
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

int main(void) {
    void *ctx = zmq_ctx_new();
    /* Context options take values >= 0 only; a CPU never added cannot be removed. */
    CHECK_ERR(zmq_ctx_set(ctx, ZMQ_THREAD_SCHED_POLICY, -1), EINVAL);
    CHECK_ERR(zmq_ctx_set(ctx, ZMQ_THREAD_PRIORITY, -1), EINVAL);
    CHECK_ERR(zmq_ctx_set(ctx, ZMQ_BLOCKY, -1), EINVAL);
    CHECK_ERR(zmq_ctx_set(ctx, ZMQ_IPV6, -1), EINVAL);
    CHECK_ERR(zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_REMOVE, 0), EINVAL);
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, 0));
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_REMOVE, 0));

    /* ZMQ_BLOCKY 0: sockets made afterwards have LINGER 0. */
    void *before = zmq_socket(ctx, ZMQ_PUSH);
    CHECK_RC(zmq_ctx_set(ctx, ZMQ_BLOCKY, 0));
    void *after = zmq_socket(ctx, ZMQ_PUSH);
    int linger = 7;
    size_t len = sizeof linger;
    CHECK_RC(zmq_getsockopt(before, ZMQ_LINGER, &linger, &len));
    CHECK(linger == -1);
    CHECK_RC(zmq_getsockopt(after, ZMQ_LINGER, &linger, &len));
    CHECK(linger == 0);

    /* "ipc://@" names no abstract socket. */
    CHECK_ERR(zmq_bind(after, "ipc://@"), EINVAL);
    CHECK_ERR(zmq_connect(after, "ipc://@"), EINVAL);

    /* Unbind by the resolved address only: the wildcard form names nothing. */
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    CHECK_RC(zmq_bind(pull, "tcp://127.0.0.1:*"));
    CHECK_ERR(zmq_unbind(pull, "tcp://127.0.0.1:*"), ENOENT);
    char ep[256];
    tu_last_endpoint(pull, ep, sizeof ep);
    CHECK_RC(zmq_unbind(pull, ep));
    CHECK_RC(zmq_bind(pull, "ipc://*"));
    CHECK_ERR(zmq_unbind(pull, "ipc://*"), ENOENT);
    tu_last_endpoint(pull, ep, sizeof ep);
    CHECK_RC(zmq_unbind(pull, ep));

    /* An ipc bind removes whatever is at its path (here a file made to reserve it). */
    char path[] = "/tmp/ferromq-c-ipc-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    char ipc_ep[64];
    snprintf(ipc_ep, sizeof ipc_ep, "ipc://%s", path);
    CHECK_RC(zmq_bind(pull, ipc_ep));
    CHECK_RC(zmq_unbind(pull, ipc_ep));
    unlink(path);

    /* getsockopt zeroes the rest of a buffer larger than the value. */
    int64_t more = -1;
    len = sizeof more;
    CHECK_RC(zmq_getsockopt(pull, ZMQ_RCVMORE, &more, &len));
    CHECK(len == sizeof(int) && more == 0);

    /* A message over constant data (no free function) is reported shared. */
    static char constant[] = "constant";
    zmq_msg_t m;
    CHECK_RC(zmq_msg_init_data(&m, constant, 8, NULL, NULL));
    CHECK(zmq_msg_get(&m, ZMQ_SHARED) == 1);
    CHECK_RC(zmq_msg_close(&m));
    CHECK_RC(zmq_msg_init_size(&m, 100));
    CHECK(zmq_msg_get(&m, ZMQ_SHARED) == 0);
    CHECK_RC(zmq_msg_close(&m));

    CHECK_RC(zmq_close(before));
    CHECK_RC(zmq_close(after));
    CHECK_RC(zmq_close(pull));
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_api_details");
}
