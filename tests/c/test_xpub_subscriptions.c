/* XPUB/XSUB subscriptions as libzmq 4.3.4 handles them (probed with Debian's libzmq side
 * by side):
 *  - XPUB_MANUAL: ZMQ_SUBSCRIBE applies to the peer of the subscription the application
 *    received last, not the one that arrived last;
 *  - XPUB_MANUAL_LAST_VALUE: manual, and the first message after a subscription was
 *    received goes to that subscriber only;
 *  - a multipart message from an XSUB: frames after the first are (un)subscriptions too
 *    (at the XSUB's own filter and at the XPUB), unless ZMQ_ONLY_FIRST_SUBSCRIBE and the
 *    first frame was not one. */
#include "testutil.h"
#include <string.h>

#ifndef ZMQ_XPUB_MANUAL_LAST_VALUE /* in zmq.h's draft part */
#define ZMQ_XPUB_MANUAL_LAST_VALUE 98
#endif
#ifndef ZMQ_ONLY_FIRST_SUBSCRIBE
#define ZMQ_ONLY_FIRST_SUBSCRIBE 108
#endif

/* Receives one frame (2 s at most) and checks its bytes and its MORE flag. */
static void expect(void *s, const char *want, size_t len, int more, const char *what) {
    char buf[64];
    int n = zmq_recv(s, buf, sizeof buf, 0);
    if (n != (int)len || memcmp(buf, want, len) != 0) {
        fprintf(stderr, "%s: got %d bytes, want %zu\n", what, n, len);
        CHECK(0);
        return;
    }
    int got_more;
    size_t ml = sizeof got_more;
    CHECK_RC(zmq_getsockopt(s, ZMQ_RCVMORE, &got_more, &ml));
    CHECK(got_more == more);
}

static void *xsub(void *ctx, const char *ep) {
    void *s = zmq_socket(ctx, ZMQ_XSUB);
    tu_set_int(s, ZMQ_RCVTIMEO, 2000);
    tu_set_int(s, ZMQ_LINGER, 0);
    CHECK_RC(zmq_connect(s, ep));
    return s;
}

static void *xpub(void *ctx, const char *ep, int opt, int val) {
    void *s = zmq_socket(ctx, ZMQ_XPUB);
    tu_set_int(s, ZMQ_RCVTIMEO, 2000);
    tu_set_int(s, ZMQ_LINGER, 0);
    if (opt)
        tu_set_int(s, opt, val);
    CHECK_RC(zmq_bind(s, ep));
    return s;
}

static void manual_subscribe_follows_what_was_received(void *ctx) {
    void *pub = xpub(ctx, "inproc://manual-order", ZMQ_XPUB_MANUAL, 1);
    void *s1 = xsub(ctx, "inproc://manual-order");
    void *s2 = xsub(ctx, "inproc://manual-order");
    CHECK_RC(zmq_send(s1, "\1A", 2, 0));
    CHECK_RC(zmq_send(s2, "\1B", 2, 0));
    /* Both reach the XPUB before the application reads the first. */
    zmq_poll(NULL, 0, 100);
    expect(pub, "\1A", 2, 0, "first subscription");
    CHECK_RC(zmq_setsockopt(pub, ZMQ_SUBSCRIBE, "A", 1)); /* for s1: received last */
    expect(pub, "\1B", 2, 0, "second subscription");
    CHECK_RC(zmq_send(pub, "A1", 2, 0));
    expect(s1, "A1", 2, 0, "s1 subscribed by the application");
    zmq_close(s1);
    zmq_close(s2);
    zmq_close(pub);
}

static void manual_last_value_goes_to_the_new_subscriber_once(void *ctx) {
    void *pub = xpub(ctx, "inproc://last-value", ZMQ_XPUB_MANUAL_LAST_VALUE, 1);
    void *s1 = xsub(ctx, "inproc://last-value");
    void *s2 = xsub(ctx, "inproc://last-value");
    CHECK_RC(zmq_send(s1, "\1A", 2, 0));
    expect(pub, "\1A", 2, 0, "s1's subscription");
    CHECK_RC(zmq_setsockopt(pub, ZMQ_SUBSCRIBE, "A", 1));
    CHECK_RC(zmq_send(pub, "A1", 2, 0));
    expect(s1, "A1", 2, 0, "s1's last value");
    CHECK_RC(zmq_send(s2, "\1A", 2, 0));
    expect(pub, "\1A", 2, 0, "s2's subscription (manual: every one is handed up)");
    CHECK_RC(zmq_setsockopt(pub, ZMQ_SUBSCRIBE, "A", 1));
    CHECK_RC(zmq_send(pub, "A2", 2, 0)); /* s2 only */
    CHECK_RC(zmq_send(pub, "A3", 2, 0)); /* both */
    expect(s2, "A2", 2, 0, "s2's last value");
    expect(s2, "A3", 2, 0, "s2 after its last value");
    expect(s1, "A3", 2, 0, "s1 skipped A2");
    zmq_close(s1);
    zmq_close(s2);
    zmq_close(pub);
}

/* An XSUB sends `frames` as one message to a verbose XPUB (with ZMQ_ONLY_FIRST_SUBSCRIBE
 * = only_first on both); returns the pair for the caller's checks. */
static void send_multipart(void *ctx, const char *ep, const char **frames, int n,
                           int only_first, void **pub, void **sub) {
    *pub = xpub(ctx, ep, ZMQ_XPUB_VERBOSE, 1);
    tu_set_int(*pub, ZMQ_ONLY_FIRST_SUBSCRIBE, only_first);
    *sub = zmq_socket(ctx, ZMQ_XSUB);
    tu_set_int(*sub, ZMQ_RCVTIMEO, 2000);
    tu_set_int(*sub, ZMQ_LINGER, 0);
    tu_set_int(*sub, ZMQ_ONLY_FIRST_SUBSCRIBE, only_first);
    CHECK_RC(zmq_connect(*sub, ep));
    /* A subscription of its own first, to see later what the XSUB lets through. */
    CHECK_RC(zmq_send(*sub, "\1Z", 2, 0));
    expect(*pub, "\1Z", 2, 0, "single subscription");
    for (int i = 0; i < n; i++) {
        /* A frame starting with a zero byte: the byte and the string after it. */
        size_t len = frames[i][0] ? strlen(frames[i]) : 1 + strlen(frames[i] + 1);
        CHECK_RC(zmq_send(*sub, frames[i], len, i + 1 < n ? ZMQ_SNDMORE : 0));
    }
}

static void later_frames_subscribe_too(void *ctx) {
    void *pub, *sub;
    const char *two_subs[] = {"\1A", "\1B"};
    send_multipart(ctx, "inproc://multi-1", two_subs, 2, 0, &pub, &sub);
    expect(pub, "\1A", 2, 0, "first frame, a subscription");
    expect(pub, "\1B", 2, 0, "second frame, a subscription too");
    CHECK_RC(zmq_send(pub, "B1", 2, 0));
    CHECK_RC(zmq_send(pub, "A1", 2, 0));
    expect(sub, "B1", 2, 0, "B subscribed by the second frame");
    expect(sub, "A1", 2, 0, "A subscribed by the first frame");
    zmq_close(sub);
    zmq_close(pub);

    const char *user_then_sub[] = {"hello", "\1B"};
    send_multipart(ctx, "inproc://multi-2", user_then_sub, 2, 0, &pub, &sub);
    expect(pub, "hello", 5, 1, "a user frame");
    expect(pub, "\1B", 2, 0, "a subscription after it");
    CHECK_RC(zmq_send(pub, "B1", 2, 0));
    expect(sub, "B1", 2, 0, "B subscribed after a user frame");
    zmq_close(sub);
    zmq_close(pub);

    /* A cancel of a topic the XSUB does not hold is dropped from the message. */
    const char *stray_cancel[] = {"hello", "\0Q", "tail"};
    send_multipart(ctx, "inproc://multi-3", stray_cancel, 3, 0, &pub, &sub);
    expect(pub, "hello", 5, 1, "a user frame");
    expect(pub, "tail", 4, 0, "the frame after the dropped cancel");
    zmq_close(sub);
    zmq_close(pub);
}

static void only_first_subscribe_leaves_frames_after_user_data(void *ctx) {
    void *pub, *sub;
    const char *user_then_sub[] = {"hello", "\1B"};
    send_multipart(ctx, "inproc://first-1", user_then_sub, 2, 1, &pub, &sub);
    expect(pub, "hello", 5, 1, "a user frame");
    expect(pub, "\1B", 2, 0, "user data, not a subscription");
    CHECK_RC(zmq_send(pub, "B1", 2, 0));
    CHECK_RC(zmq_send(pub, "Z1", 2, 0));
    expect(sub, "Z1", 2, 0, "B was not subscribed");
    zmq_close(sub);
    zmq_close(pub);

    const char *two_subs[] = {"\1A", "\1B"};
    send_multipart(ctx, "inproc://first-2", two_subs, 2, 1, &pub, &sub);
    expect(pub, "\1A", 2, 0, "first frame, a subscription");
    expect(pub, "\1B", 2, 0, "after a subscription, still one");
    CHECK_RC(zmq_send(pub, "B1", 2, 0));
    expect(sub, "B1", 2, 0, "B subscribed after a subscription frame");
    zmq_close(sub);
    zmq_close(pub);
}

int main(void) {
    void *ctx = zmq_ctx_new();
    manual_subscribe_follows_what_was_received(ctx);
    manual_last_value_goes_to_the_new_subscriber_once(ctx);
    later_frames_subscribe_too(ctx);
    only_first_subscribe_leaves_frames_after_user_data(ctx);
    zmq_ctx_term(ctx);
    return tu_finish("test_xpub_subscriptions");
}
