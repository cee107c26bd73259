/* The common patterns over tcp, ipc and inproc through the C API. */
#include "testutil.h"
#include <unistd.h>

static void push_pull(void *ctx, const char *bind_ep) {
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    tu_set_int(pull, ZMQ_RCVTIMEO, 5000);
    CHECK_RC(zmq_bind(pull, bind_ep));
    char ep[256];
    tu_last_endpoint(pull, ep, sizeof ep);
    CHECK_RC(zmq_connect(push, ep));
    static char big[100000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)(i * 7);
    for (int i = 0; i < 100; i++) {
        CHECK(zmq_send(push, "part1", 5, ZMQ_SNDMORE) == 5);
        CHECK(zmq_send(push, big, (size_t)i * 1000, 0) == i * 1000);
    }
    static char buf[100000];
    for (int i = 0; i < 100; i++) {
        CHECK(zmq_recv(pull, buf, sizeof buf, 0) == 5);
        int more = 0;
        size_t len = sizeof more;
        CHECK_RC(zmq_getsockopt(pull, ZMQ_RCVMORE, &more, &len));
        CHECK(more == 1);
        zmq_msg_t m;
        zmq_msg_init(&m);
        CHECK(zmq_msg_recv(&m, pull, 0) == i * 1000);
        CHECK(memcmp(zmq_msg_data(&m), big, (size_t)i * 1000) == 0);
        CHECK(zmq_msg_more(&m) == 0);
        zmq_msg_close(&m);
    }
    /* Truncation: zmq_recv returns the full size. */
    CHECK(zmq_send(push, big, 1000, 0) == 1000);
    CHECK(zmq_recv(pull, buf, 10, 0) == 1000);
    tu_set_int(push, ZMQ_LINGER, 0);
    zmq_close(push);
    zmq_close(pull);
}

static void req_rep(void *ctx, const char *bind_ep) {
    void *rep = zmq_socket(ctx, ZMQ_REP);
    void *req = zmq_socket(ctx, ZMQ_REQ);
    tu_set_int(rep, ZMQ_RCVTIMEO, 5000);
    tu_set_int(req, ZMQ_RCVTIMEO, 5000);
    CHECK_RC(zmq_bind(rep, bind_ep));
    char ep[256];
    tu_last_endpoint(rep, ep, sizeof ep);
    CHECK_RC(zmq_connect(req, ep));
    char buf[64];
    for (int i = 0; i < 50; i++) {
        CHECK(zmq_send(req, "ping", 4, 0) == 4);
        CHECK(zmq_recv(rep, buf, sizeof buf, 0) == 4);
        CHECK(zmq_send(rep, "pong!", 5, 0) == 5);
        CHECK(zmq_recv(req, buf, sizeof buf, 0) == 5 && memcmp(buf, "pong!", 5) == 0);
    }
    zmq_close(req);
    zmq_close(rep);
}

static void router_dealer(void *ctx, const char *bind_ep) {
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    tu_set_int(router, ZMQ_RCVTIMEO, 5000);
    tu_set_int(dealer, ZMQ_RCVTIMEO, 5000);
    CHECK_RC(zmq_setsockopt(dealer, ZMQ_ROUTING_ID, "d1", 2));
    CHECK_RC(zmq_bind(router, bind_ep));
    char ep[256];
    tu_last_endpoint(router, ep, sizeof ep);
    CHECK_RC(zmq_connect(dealer, ep));
    CHECK(zmq_send(dealer, "hello", 5, 0) == 5);
    char id[16], buf[16];
    CHECK(zmq_recv(router, id, sizeof id, 0) == 2 && memcmp(id, "d1", 2) == 0);
    CHECK(zmq_recv(router, buf, sizeof buf, 0) == 5);
    CHECK(zmq_send(router, "d1", 2, ZMQ_SNDMORE) == 2);
    CHECK(zmq_send(router, "world", 5, 0) == 5);
    CHECK(zmq_recv(dealer, buf, sizeof buf, 0) == 5 && memcmp(buf, "world", 5) == 0);
    tu_set_int(router, ZMQ_ROUTER_MANDATORY, 1);
    CHECK_ERR(zmq_send(router, "nobody", 6, ZMQ_SNDMORE), EHOSTUNREACH);
    zmq_close(dealer);
    zmq_close(router);
}

static void pub_sub(void *ctx, const char *bind_ep) {
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    void *sub = zmq_socket(ctx, ZMQ_SUB);
    CHECK_RC(zmq_bind(pub, bind_ep));
    char ep[256];
    tu_last_endpoint(pub, ep, sizeof ep);
    CHECK_RC(zmq_connect(sub, ep));
    CHECK_RC(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "A", 1));
    char buf[16];
    int got = 0;
    for (int i = 0; i < 1000 && !got; i++) {
        zmq_send(pub, "B-skip", 6, 0);
        zmq_send(pub, "A-sync", 6, 0);
        if (zmq_recv(sub, buf, sizeof buf, ZMQ_DONTWAIT) >= 0)
            got = 1;
        else
            usleep(2000);
    }
    CHECK(got && buf[0] == 'A');
    zmq_close(sub);
    zmq_close(pub);
}

int main(void) {
    void *ctx = zmq_ctx_new();
    const char *eps[] = {"tcp://127.0.0.1:*", "ipc://*", "inproc://c-test"};
    for (int i = 0; i < 3; i++) {
        push_pull(ctx, eps[i]);
        req_rep(ctx, eps[i]);
        router_dealer(ctx, eps[i]);
        pub_sub(ctx, eps[i]);
    }
    CHECK_RC(zmq_ctx_term(ctx));
    return tu_finish("test_patterns");
}
