/* The zmq_msg_* API at its edges: fresh, sized, copied and moved messages, their
 * properties (MORE, SRCFD, SHARED, unknown ones), closing twice, zmq_msg_set, and what a
 * message holds after it was sent or received over inproc (one frame, multipart,
 * zmq_send_const, and whether a constant frame arrives as the caller's buffer). Each line: the call, its result and errno. */
#include <stdio.h>
#include <string.h>
#include <zmq.h>

static void show(const char *what, int rc) {
    printf("%s rc=%d errno=%d\n", what, rc, rc < 0 ? zmq_errno() : 0);
}

/* MORE, SRCFD and SHARED of `m`, and its size. */
static void props(const char *what, zmq_msg_t *m) {
    printf("%s size=%zu", what, zmq_msg_size(m));
    const int names[] = {ZMQ_MORE, ZMQ_SRCFD, ZMQ_SHARED};
    for (int i = 0; i < 3; i++) {
        int v = zmq_msg_get(m, names[i]);
        printf(" get(%d)=%d/%d", names[i], v, v < 0 ? zmq_errno() : 0);
    }
    printf(" more=%d\n", zmq_msg_more(m));
}

/* Makes `b` (fresh) from `a` with `op` (zmq_msg_copy or zmq_msg_move) and prints both. */
static void derive(const char *op, int (*fn)(zmq_msg_t *, zmq_msg_t *), zmq_msg_t *a,
                   zmq_msg_t *b, size_t size) {
    char label[64];
    show("init b", zmq_msg_init(b));
    show(op, fn(b, a));
    snprintf(label, sizeof label, "%s of %zu (source)", op, size);
    props(label, a);
    snprintf(label, sizeof label, "%s of %zu (result)", op, size);
    props(label, b);
}

int main(void) {
    zmq_msg_t a, b;
    show("init", zmq_msg_init(&a));
    props("fresh", &a);
    show("get(99)", zmq_msg_get(&a, 99));
    show("set(MORE,1)", zmq_msg_set(&a, ZMQ_MORE, 1));
    show("set(99,1)", zmq_msg_set(&a, 99, 1));
    const char *g = zmq_msg_gets(&a, "Socket-Type");
    printf("gets(Socket-Type) on fresh: %s errno=%d\n", g ? g : "NULL", g ? 0 : zmq_errno());
    show("close", zmq_msg_close(&a));
    show("close again", zmq_msg_close(&a));

    const size_t sizes[] = {0, 1, 33, 34, 64, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char label[64];
        show("init_size", zmq_msg_init_size(&a, sizes[i]));
        memset(zmq_msg_data(&a), 'x', sizes[i]);
        snprintf(label, sizeof label, "sized %zu", sizes[i]);
        props(label, &a);
        derive("copy", zmq_msg_copy, &a, &b, sizes[i]);
        show("close copy", zmq_msg_close(&b));
        snprintf(label, sizeof label, "source of %zu after its copy closed", sizes[i]);
        props(label, &a);
        derive("move", zmq_msg_move, &a, &b, sizes[i]);
        show("close a", zmq_msg_close(&a));
        show("close b", zmq_msg_close(&b));
    }

    void *ctx = zmq_ctx_new();
    void *push = zmq_socket(ctx, ZMQ_PAIR);
    void *pull = zmq_socket(ctx, ZMQ_PAIR);
    zmq_bind(pull, "inproc://differential-messages");
    zmq_connect(push, "inproc://differential-messages");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char label[64], body[1000];
        memset(body, 'y', sizeof body);
        zmq_msg_init_size(&a, sizes[i]);
        memcpy(zmq_msg_data(&a), body, sizes[i]);
        show("msg_send", zmq_msg_send(&a, push, 0));
        snprintf(label, sizeof label, "sent %zu", sizes[i]);
        props(label, &a);
        zmq_msg_close(&a);
        zmq_msg_init_size(&b, 5);
        show("msg_recv into a 5-byte message", zmq_msg_recv(&b, pull, 0));
        snprintf(label, sizeof label, "received %zu", sizes[i]);
        props(label, &b);
        zmq_msg_close(&b);
    }
    show("send first of two", zmq_send(push, "one", 3, ZMQ_SNDMORE));
    show("send_const second", zmq_send_const(push, "two", 3, 0));
    for (int f = 0; f < 2; f++) {
        zmq_msg_init(&b);
        show("recv frame", zmq_msg_recv(&b, pull, 0));
        props(f ? "second frame" : "first frame", &b);
        zmq_msg_close(&b);
    }
    /* zmq_send_const: whether the inproc receiver gets the caller's buffer itself. */
    static const char constant[100000] = {'c'};
    const size_t const_sizes[] = {0, 3, 33, 34, 64, 9000, 100000};
    for (size_t i = 0; i < sizeof const_sizes / sizeof const_sizes[0]; i++) {
        char label[64];
        show("send_const", zmq_send_const(push, constant, const_sizes[i], 0));
        zmq_msg_init(&b);
        show("recv const frame", zmq_msg_recv(&b, pull, 0));
        snprintf(label, sizeof label, "const %zu", const_sizes[i]);
        props(label, &b);
        printf("const %zu: the caller's buffer=%d first=%d\n", const_sizes[i],
               zmq_msg_data(&b) == (void *) constant,
               const_sizes[i] ? ((char *) zmq_msg_data(&b))[0] : -1);
        zmq_msg_close(&b);
    }
    zmq_close(push);
    zmq_close(pull);
    zmq_ctx_term(ctx);
    return 0;
}
