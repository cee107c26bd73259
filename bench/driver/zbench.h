/*
 * zbench.h -- what the parts of the zbench driver share: the ABI constants
 * and layouts, the table of the library's functions, the options, JSON
 * output, failure reporting and a few helpers (all defined in zbench.c).
 */
#ifndef ZBENCH_H
#define ZBENCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* ABI constants and layouts (identical in libzmq 4.3 and ferromq)           */
/* ------------------------------------------------------------------------ */

enum {
    ZB_PAIR = 0,
    ZB_PUB = 1,
    ZB_SUB = 2,
    ZB_REQ = 3,
    ZB_REP = 4,
    ZB_DEALER = 5,
    ZB_ROUTER = 6,
    ZB_PULL = 7,
    ZB_PUSH = 8,
};

enum {
    ZB_ROUTING_ID = 5,
    ZB_SUBSCRIBE = 6,
    ZB_LINGER = 17,
    ZB_SNDHWM = 23,
    ZB_RCVHWM = 24,
    ZB_ROUTER_MANDATORY = 33,
    ZB_XPUB_NODROP = 69,
};

enum { ZB_DONTWAIT = 1, ZB_SNDMORE = 2 };
enum { ZB_POLLIN = 1 };
enum { ZB_EVENT_HANDSHAKE_SUCCEEDED = 0x1000 };

typedef struct {
    _Alignas(void *) unsigned char opaque[64];
} zb_msg_t;

typedef struct {
    void *socket;
    int fd;
    short events;
    short revents;
} zb_pollitem_t;

#ifdef ZBENCH_CHECK_HEADER
#include <zmq.h>
_Static_assert(ZB_PAIR == ZMQ_PAIR, "ZMQ_PAIR");
_Static_assert(ZB_PUB == ZMQ_PUB, "ZMQ_PUB");
_Static_assert(ZB_SUB == ZMQ_SUB, "ZMQ_SUB");
_Static_assert(ZB_REQ == ZMQ_REQ, "ZMQ_REQ");
_Static_assert(ZB_REP == ZMQ_REP, "ZMQ_REP");
_Static_assert(ZB_DEALER == ZMQ_DEALER, "ZMQ_DEALER");
_Static_assert(ZB_ROUTER == ZMQ_ROUTER, "ZMQ_ROUTER");
_Static_assert(ZB_PULL == ZMQ_PULL, "ZMQ_PULL");
_Static_assert(ZB_PUSH == ZMQ_PUSH, "ZMQ_PUSH");
_Static_assert(ZB_ROUTING_ID == ZMQ_ROUTING_ID, "ZMQ_ROUTING_ID");
_Static_assert(ZB_SUBSCRIBE == ZMQ_SUBSCRIBE, "ZMQ_SUBSCRIBE");
_Static_assert(ZB_LINGER == ZMQ_LINGER, "ZMQ_LINGER");
_Static_assert(ZB_SNDHWM == ZMQ_SNDHWM, "ZMQ_SNDHWM");
_Static_assert(ZB_RCVHWM == ZMQ_RCVHWM, "ZMQ_RCVHWM");
_Static_assert(ZB_ROUTER_MANDATORY == ZMQ_ROUTER_MANDATORY, "ROUTER_MANDATORY");
_Static_assert(ZB_XPUB_NODROP == ZMQ_XPUB_NODROP, "ZMQ_XPUB_NODROP");
_Static_assert(ZB_DONTWAIT == ZMQ_DONTWAIT, "ZMQ_DONTWAIT");
_Static_assert(ZB_SNDMORE == ZMQ_SNDMORE, "ZMQ_SNDMORE");
_Static_assert(ZB_POLLIN == ZMQ_POLLIN, "ZMQ_POLLIN");
_Static_assert(ZB_EVENT_HANDSHAKE_SUCCEEDED == ZMQ_EVENT_HANDSHAKE_SUCCEEDED,
               "ZMQ_EVENT_HANDSHAKE_SUCCEEDED");
_Static_assert(sizeof(zb_msg_t) == sizeof(zmq_msg_t), "zmq_msg_t size");
_Static_assert(_Alignof(zb_msg_t) == _Alignof(zmq_msg_t), "zmq_msg_t align");
_Static_assert(sizeof(zb_pollitem_t) == sizeof(zmq_pollitem_t), "pollitem");
_Static_assert(offsetof(zb_pollitem_t, fd) == offsetof(zmq_pollitem_t, fd),
               "pollitem.fd");
_Static_assert(offsetof(zb_pollitem_t, events)
                   == offsetof(zmq_pollitem_t, events),
               "pollitem.events");
_Static_assert(offsetof(zb_pollitem_t, revents)
                   == offsetof(zmq_pollitem_t, revents),
               "pollitem.revents");
#endif
/* ------------------------------------------------------------------------ */
/* The library under test: a table of function pointers                     */
/* ------------------------------------------------------------------------ */

typedef struct {
    void (*version)(int *, int *, int *);
    void *(*ctx_new)(void);
    int (*ctx_term)(void *);
    void *(*socket)(void *, int);
    int (*close)(void *);
    int (*setsockopt)(void *, int, const void *, size_t);
    int (*getsockopt)(void *, int, void *, size_t *);
    int (*bind)(void *, const char *);
    int (*connect)(void *, const char *);
    int (*send)(void *, const void *, size_t, int);
    int (*msg_init)(zb_msg_t *);
    int (*msg_send)(zb_msg_t *, void *, int);
    int (*msg_recv)(zb_msg_t *, void *, int);
    int (*msg_close)(zb_msg_t *);
    void *(*msg_data)(zb_msg_t *);
    size_t (*msg_size)(const zb_msg_t *);
    int (*msg_more)(const zb_msg_t *);
    int (*poll)(zb_pollitem_t *, int, long);
    int (*errno_)(void);
    const char *(*strerror)(int);
    int (*socket_monitor)(void *, const char *, int);
} zb_api_t;

extern zb_api_t Z;

/* ------------------------------------------------------------------------ */
/* Options, output and failure                                              */
/* ------------------------------------------------------------------------ */

typedef struct {
    const char *cmd;
    const char *lib;
    const char *pattern;
    const char *transport;
    const char *endpoint; /* explicit endpoint, or NULL */
    const char *ready_file;
    const char *done_file;
    size_t size;
    long count;
    long warmup;
    long iterations; /* router_par: measured iterations */
    int hwm; /* -1 = library default */
    int timeout_s;
} opts_t;

extern opts_t O;
extern char g_version[32];
/* Messages received / round trips completed so far, for the watchdog. */
extern atomic_long g_progress;

void json_str(FILE *f, const char *s);
/* Common head of every JSON line: {"ok":..,"cmd":..,"lib":..,"version":.. */
void json_head(FILE *f, bool ok);
/* Report a failure (stderr + one JSON line on stdout) and _exit(code). */
void die_code(int code, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
#define die(...) die_code(1, __VA_ARGS__)
/* A zmq call failed: report the library's own error string and exit. */
void zfail(const char *what, int line) __attribute__((noreturn));

/* Retry a blocking call interrupted by a signal; anything else is fatal. */
#define ZCHK(expr)                                                            \
    do {                                                                      \
        int zchk_rc_;                                                         \
        while ((zchk_rc_ = (expr)) == -1 && Z.errno_() == EINTR)              \
            ;                                                                 \
        if (zchk_rc_ == -1)                                                   \
            zfail(#expr, __LINE__);                                           \
    } while (0)

#define ZPTR(expr, dst)                                                       \
    do {                                                                      \
        if (((dst) = (expr)) == NULL)                                         \
            zfail(#expr, __LINE__);                                           \
    } while (0)

uint64_t now_ns(void);
void set_int(void *s, int opt, int v, const char *name);
int get_int(void *s, int opt, const char *name);
int free_tcp_port(void);
unsigned char *make_payload(size_t size);
/* One line of latency results from per-round-trip times (ns); frees nothing. */
void lat_report(const char *extra_json, uint64_t *rtt, size_t n,
                uint64_t loop_ns);

/* Commands defined outside zbench.c. */
int cmd_raw_thr(void); /* zraw.c */
int cmd_raw_lat(void);
int cmd_mem_idle(void); /* zmem.c */
int cmd_mem_slowsub(void);

#endif
