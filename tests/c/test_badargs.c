/* Bad arguments to the C API: each case must fail with libzmq's errno and never crash.
 * The expected values are Debian libzmq 4.3.4's (FERROMQ_BADARGS_REFERENCE=1 with this
 * program linked to it prints what libzmq does, one child process per case); where libzmq
 * crashes or accepts the call, the expectation is ours and docs/SECURITY.md says so.
 * FERROMQ_BADARGS_TABLE=1 prints ferromq's table. */
#include "testutil.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void *ctx, *pair, *sub;

typedef struct {
    const char *what;
    int expect_errno; /* libzmq's; for `libzmq_aborts` cases, ours */
    int (*run)(void); /* returns the call's rc (-1 expected); NULL results map to -1 */
} bad_case;

static int socket_null_ctx(void) { return zmq_socket(NULL, ZMQ_PAIR) ? 0 : -1; }
static int socket_bad_type(void) { return zmq_socket(ctx, 999) ? 0 : -1; }
static int close_null(void) { return zmq_close(NULL); }
static int bind_null_socket(void) { return zmq_bind(NULL, "inproc://x"); }
static int bind_null_endpoint(void) { return zmq_bind(pair, NULL); }
static int connect_no_scheme(void) { return zmq_connect(pair, "bogus"); }
static int connect_unknown_scheme(void) { return zmq_connect(pair, "foo://x"); }
static int connect_empty_tcp(void) { return zmq_connect(pair, "tcp://"); }
static int bind_bad_port(void) { return zmq_bind(pair, "tcp://127.0.0.1:99999"); }
static int setsockopt_short_int(void) {
    int v = 0;
    return zmq_setsockopt(pair, ZMQ_LINGER, &v, 2);
}
static int setsockopt_unknown(void) {
    int v = 0;
    return zmq_setsockopt(pair, 9999, &v, sizeof v);
}
static int setsockopt_subscribe_on_pair(void) { return zmq_setsockopt(pair, ZMQ_SUBSCRIBE, "a", 1); }
static int setsockopt_empty_routing_id(void) { return zmq_setsockopt(pair, ZMQ_ROUTING_ID, "", 0); }
static int setsockopt_bad_curve_key(void) { return zmq_setsockopt(pair, ZMQ_CURVE_SECRETKEY, "abc", 3); }
static int setsockopt_null_value(void) { return zmq_setsockopt(pair, ZMQ_LINGER, NULL, 4); }
static int getsockopt_short_buffer(void) {
    int v;
    size_t len = 2;
    return zmq_getsockopt(pair, ZMQ_LINGER, &v, &len);
}
static int getsockopt_unknown(void) {
    int v;
    size_t len = sizeof v;
    return zmq_getsockopt(pair, 9999, &v, &len);
}
static int recv_nothing_dontwait(void) {
    char b[4];
    return zmq_recv(sub, b, sizeof b, ZMQ_DONTWAIT);
}
static int send_on_sub(void) { return zmq_send(sub, "x", 1, 0); }
static int unbind_not_bound(void) { return zmq_unbind(pair, "tcp://127.0.0.1:1"); }
static int disconnect_not_connected(void) { return zmq_disconnect(pair, "tcp://127.0.0.1:1"); }
static int monitor_non_inproc(void) { return zmq_socket_monitor(pair, "tcp://127.0.0.1:1", ZMQ_EVENT_ALL); }
/* Version-1 events are 16 bits; libzmq refuses more, also when stopping. */
static int monitor_wide_events(void) { return zmq_socket_monitor(pair, "inproc://wide", 0x10000); }
static int monitor_stop_wide_events(void) { return zmq_socket_monitor(pair, NULL, 0x1FFFF); }
static int msg_init_huge(void) {
    zmq_msg_t m;
    return zmq_msg_init_size(&m, SIZE_MAX);
}
/* Lengths no buffer can have (beyond PTRDIFF_MAX): libzmq 4.3.4 overflows its size
 * arithmetic and crashes copying; ferromq must refuse them before making a slice. */
static int send_huge(void) { return zmq_send(pair, "abc", SIZE_MAX, ZMQ_DONTWAIT); }
static int send_const_huge(void) { return zmq_send_const(pair, "abc", SIZE_MAX, ZMQ_DONTWAIT); }
static int sendiov_huge(void) {
    struct iovec v = {(void *)"abc", SIZE_MAX};
    return zmq_sendiov(pair, &v, 1, ZMQ_DONTWAIT);
}
/* A length some buffer could have but no memory can hold: libzmq's malloc says ENOMEM. */
static int msg_init_size_2_60(void) {
    zmq_msg_t m;
    return zmq_msg_init_size(&m, (size_t)1 << 60);
}
static int send_2_60(void) { return zmq_send(pair, "abc", (size_t)1 << 60, ZMQ_DONTWAIT); }
static int setsockopt_huge(void) { return zmq_setsockopt(pair, ZMQ_ROUTING_ID, "abc", SIZE_MAX); }
static int msg_init_data_huge(void) {
    zmq_msg_t m;
    static char body[4];
    return zmq_msg_init_data(&m, body, SIZE_MAX, NULL, NULL);
}
static int z85_encode_huge(void) {
    char out[16];
    uint8_t in[4] = {1, 2, 3, 4};
    return zmq_z85_encode(out, in, SIZE_MAX - 3) ? 0 : -1;
}
static int z85_decode_bad_length(void) {
    uint8_t out[8];
    return zmq_z85_decode(out, "abc") ? 0 : -1;
}
static int z85_decode_empty(void) {
    uint8_t out[8];
    return zmq_z85_decode(out, "") ? 0 : -1;
}
static int z85_encode_bad_length(void) {
    char out[16];
    uint8_t in[3] = {1, 2, 3};
    return zmq_z85_encode(out, in, 3) ? 0 : -1;
}
static int curve_public_bad_secret(void) {
    char out[41];
    return zmq_curve_public(out, "too short");
}
static int ctx_set_unknown(void) { return zmq_ctx_set(ctx, 999, 1); }
static int ctx_get_unknown(void) { return zmq_ctx_get(ctx, 999); }
static int ctx_term_null(void) { return zmq_ctx_term(NULL); }
static int poll_null_items(void) { return zmq_poll(NULL, 1, 0); }
static int proxy_null_frontend(void) { return zmq_proxy(NULL, NULL, NULL); }
static int msg_send_null_socket(void) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    int rc = zmq_msg_send(&m, NULL, 0);
    zmq_msg_close(&m);
    return rc;
}

static const bad_case cases[] = {
    {"zmq_socket(NULL ctx)", EFAULT, socket_null_ctx},
    {"zmq_socket(ctx, type 999)", EINVAL, socket_bad_type},
    {"zmq_close(NULL)", ENOTSOCK, close_null},
    {"zmq_bind(NULL socket)", ENOTSOCK, bind_null_socket},
    {"zmq_bind(socket, NULL endpoint)", EINVAL, bind_null_endpoint},
    {"zmq_connect(\"bogus\")", EINVAL, connect_no_scheme},
    {"zmq_connect(\"foo://x\")", EPROTONOSUPPORT, connect_unknown_scheme},
    {"zmq_connect(\"tcp://\")", EINVAL, connect_empty_tcp},
    {"zmq_bind(\"tcp://127.0.0.1:99999\")", EINVAL, bind_bad_port},
    {"zmq_setsockopt(LINGER, 2-byte value)", EINVAL, setsockopt_short_int},
    {"zmq_setsockopt(option 9999)", EINVAL, setsockopt_unknown},
    {"zmq_setsockopt(PAIR, SUBSCRIBE)", EINVAL, setsockopt_subscribe_on_pair},
    {"zmq_setsockopt(ROUTING_ID, empty)", EINVAL, setsockopt_empty_routing_id},
    {"zmq_setsockopt(CURVE_SECRETKEY, 3 bytes)", EINVAL, setsockopt_bad_curve_key},
    {"zmq_setsockopt(LINGER, NULL value, 4)", EINVAL, setsockopt_null_value},
    {"zmq_getsockopt(LINGER, 2-byte buffer)", EINVAL, getsockopt_short_buffer},
    {"zmq_getsockopt(option 9999)", EINVAL, getsockopt_unknown},
    {"zmq_recv(SUB, nothing queued, DONTWAIT)", EAGAIN, recv_nothing_dontwait},
    {"zmq_send(SUB)", ENOTSUP, send_on_sub},
    {"zmq_unbind(endpoint never bound)", ENOENT, unbind_not_bound},
    {"zmq_disconnect(endpoint never connected)", ENOENT, disconnect_not_connected},
    {"zmq_socket_monitor(\"tcp://...\")", EPROTONOSUPPORT, monitor_non_inproc},
    {"zmq_socket_monitor(events 0x10000)", EINVAL, monitor_wide_events},
    {"zmq_socket_monitor(NULL, events 0x1FFFF)", EINVAL, monitor_stop_wide_events},
    {"zmq_msg_init_size(SIZE_MAX)", ENOMEM, msg_init_huge},
    {"zmq_send(SIZE_MAX bytes)", ENOMEM, send_huge},
    {"zmq_msg_init_size(2^60)", ENOMEM, msg_init_size_2_60},
    {"zmq_send(2^60 bytes)", ENOMEM, send_2_60},
    {"zmq_send_const(SIZE_MAX bytes)", ENOMEM, send_const_huge},
    {"zmq_sendiov(one SIZE_MAX-byte part)", ENOMEM, sendiov_huge},
    {"zmq_setsockopt(ROUTING_ID, SIZE_MAX bytes)", EINVAL, setsockopt_huge},
    {"zmq_msg_init_data(SIZE_MAX bytes)", EINVAL, msg_init_data_huge},
    {"zmq_z85_encode(SIZE_MAX - 3 bytes)", EINVAL, z85_encode_huge},
    {"zmq_z85_decode(\"abc\")", EINVAL, z85_decode_bad_length},
    {"zmq_z85_decode(\"\")", EINVAL, z85_decode_empty},
    {"zmq_z85_encode(3 bytes)", EINVAL, z85_encode_bad_length},
    {"zmq_curve_public(short secret)", EINVAL, curve_public_bad_secret},
    {"zmq_ctx_set(option 999)", EINVAL, ctx_set_unknown},
    {"zmq_ctx_get(option 999)", EINVAL, ctx_get_unknown},
    {"zmq_ctx_term(NULL)", EFAULT, ctx_term_null},
    {"zmq_poll(NULL items, 1)", EFAULT, poll_null_items},
    {"zmq_proxy(NULL, NULL, NULL)", EFAULT, proxy_null_frontend},
    {"zmq_msg_send(msg, NULL socket)", ENOTSOCK, msg_send_null_socket},
};

static void setup(void) {
    ctx = zmq_ctx_new();
    pair = zmq_socket(ctx, ZMQ_PAIR);
    sub = zmq_socket(ctx, ZMQ_SUB);
}

/* On libzmq: each case in a fresh child process, since libzmq aborts or crashes on
 * some; prints what happened. */
static void reference_table(void) {
    printf("| Call | libzmq 4.3.4 |\n|---|---|\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            setup(); /* libzmq's I/O threads do not survive fork: a fresh context */
            errno = 0;
            int rc = cases[i].run();
            _exit(rc == -1 ? zmq_errno() : 255);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status))
            printf("| `%s` | killed by signal %d |\n", cases[i].what, WTERMSIG(status));
        else if (WEXITSTATUS(status) == 255)
            printf("| `%s` | succeeded |\n", cases[i].what);
        else
            printf("| `%s` | %s%s |\n", cases[i].what, strerror(WEXITSTATUS(status)),
                   WEXITSTATUS(status) == cases[i].expect_errno ? "" : " (differs)");
    }
}

int main(void) {
    if (getenv("FERROMQ_BADARGS_REFERENCE")) {
        reference_table();
        return 0;
    }
    int table = getenv("FERROMQ_BADARGS_TABLE") != NULL;
    if (table)
        printf("| Call | ferromq |\n|---|---|\n");
    setup();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        errno = 0;
        int rc = cases[i].run();
        int err = zmq_errno();
        if (table)
            printf("| `%s` | %s |\n", cases[i].what, rc == -1 ? strerror(err) : "succeeded");
        if (rc != -1 || err != cases[i].expect_errno) {
            fprintf(stderr, "%s: rc %d errno %d (%s), expected errno %d (%s)\n", cases[i].what,
                    rc, err, strerror(err), cases[i].expect_errno,
                    strerror(cases[i].expect_errno));
            tu_failures++;
        }
    }
    /* A context that was shut down: ETERM from calls on its sockets and for new ones. */
    zmq_ctx_shutdown(ctx);
    char b[4];
    CHECK_ERR(zmq_recv(pair, b, sizeof b, 0), ETERM);
    CHECK(zmq_socket(ctx, ZMQ_PAIR) == NULL && zmq_errno() == ETERM);
    zmq_close(pair);
    zmq_close(sub);
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_badargs");
}
