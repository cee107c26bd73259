/*
 * zbench -- the ferromq benchmark driver.
 *
 * One binary, any libzmq-compatible library: the library under test is loaded
 * by path with dlopen(RTLD_NOW | RTLD_LOCAL) and every zmq_* function used is
 * resolved with dlsym into a table of function pointers.  The driver is never
 * linked against a libzmq, so the code that runs the workload is byte-for-byte
 * the same whichever library is measured.
 *
 * The few ABI constants and struct layouts the driver needs are defined below
 * (ZB_*).  They are numerically identical in libzmq and ferromq; when the
 * build defines ZBENCH_CHECK_HEADER the system <zmq.h> is included and every
 * one of them is checked against it at compile time.
 *
 * Every subcommand prints exactly ONE JSON line on stdout ({"ok":true,...} or
 * {"ok":false,"error":...}); diagnostics go to stderr.  Exit status: 0 on
 * success, 1 on a failed zmq call or bad result, 2 on usage / load errors,
 * 124 when the watchdog fires.
 *
 * Usage: zbench --help
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#define ZBENCH_VERSION "1"

#include "zbench.h"


static const struct {
    const char *name;
    void **slot;
} SYMBOLS[] = {
    {"zmq_version", (void **)&Z.version},
    {"zmq_ctx_new", (void **)&Z.ctx_new},
    {"zmq_ctx_term", (void **)&Z.ctx_term},
    {"zmq_socket", (void **)&Z.socket},
    {"zmq_close", (void **)&Z.close},
    {"zmq_setsockopt", (void **)&Z.setsockopt},
    {"zmq_getsockopt", (void **)&Z.getsockopt},
    {"zmq_bind", (void **)&Z.bind},
    {"zmq_connect", (void **)&Z.connect},
    {"zmq_send", (void **)&Z.send},
    {"zmq_msg_init", (void **)&Z.msg_init},
    {"zmq_msg_send", (void **)&Z.msg_send},
    {"zmq_msg_recv", (void **)&Z.msg_recv},
    {"zmq_msg_close", (void **)&Z.msg_close},
    {"zmq_msg_data", (void **)&Z.msg_data},
    {"zmq_msg_size", (void **)&Z.msg_size},
    {"zmq_msg_more", (void **)&Z.msg_more},
    {"zmq_poll", (void **)&Z.poll},
    {"zmq_errno", (void **)&Z.errno_},
    {"zmq_strerror", (void **)&Z.strerror},
    {"zmq_socket_monitor", (void **)&Z.socket_monitor},
};


opts_t O = {
    .size = 64, .count = 0, .warmup = -1, .iterations = 5, .hwm = -1,
    .timeout_s = 120,
};
char g_version[32] = "unknown";
zb_api_t Z;

/* Write s as a JSON string literal (with quotes). */
void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;
         p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Common head of every JSON line: {"ok":..,"cmd":..,"lib":..,"version":.. */
void json_head(FILE *f, bool ok)
{
    fprintf(f, "{\"ok\":%s,\"tool\":\"zbench\",\"tool_version\":\"%s\",",
            ok ? "true" : "false", ZBENCH_VERSION);
    fputs("\"cmd\":", f);
    json_str(f, O.cmd);
    fputs(",\"lib\":", f);
    json_str(f, O.lib);
    fputs(",\"version\":", f);
    json_str(f, g_version);
}

static pthread_mutex_t g_fail_mu = PTHREAD_MUTEX_INITIALIZER;

/* Report a failure (stderr + one JSON line on stdout) and exit the process
 * without running library destructors (another thread may be blocked in the
 * library).  Only the first failing thread reports; others block here. */
void die_code(int code, const char *fmt, ...)
{
    pthread_mutex_lock(&g_fail_mu);
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "zbench: %s: error: %s\n", O.cmd ? O.cmd : "-", buf);
    json_head(stdout, false);
    fputs(",\"error\":", stdout);
    json_str(stdout, buf);
    fputs("}\n", stdout);
    fflush(stdout);
    fflush(stderr);
    _exit(code);
}

/* A zmq call failed: report the library's own error string. */
void zfail(const char *what, int line)
{
    int e = Z.errno_ ? Z.errno_() : errno;
    die("%s failed (line %d): %s (errno %d)", what, line,
        Z.strerror ? Z.strerror(e) : strerror(e), e);
}

/* ------------------------------------------------------------------------ */
/* Watchdog                                                                 */
/* ------------------------------------------------------------------------ */

static char g_timeout_line[512];
static size_t g_timeout_len;
/* Messages received / round trips completed so far, for the watchdog. */
atomic_long g_progress;

/* Async-signal-safe decimal formatting. */
static size_t fmt_ulong(char *buf, unsigned long v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "zbench: error: watchdog timeout, aborting\n";
    char tail[96];
    size_t n = 0;
    static const char a[] = " (progress: ";
    static const char b[] = " of ";
    static const char c[] = ")\"}\n";
    memcpy(tail + n, a, sizeof a - 1), n += sizeof a - 1;
    n += fmt_ulong(tail + n, (unsigned long)atomic_load(&g_progress));
    memcpy(tail + n, b, sizeof b - 1), n += sizeof b - 1;
    n += fmt_ulong(tail + n, (unsigned long)(O.count > 0 ? O.count : 0));
    memcpy(tail + n, c, sizeof c - 1), n += sizeof c - 1;
    ssize_t r = write(2, msg, sizeof msg - 1);
    r = write(1, g_timeout_line, g_timeout_len);
    r = write(1, tail, n);
    (void)r;
    _exit(124);
}

static void arm_watchdog(void)
{
    /* Pre-format the JSON line: only async-signal-safe calls in handler. */
    char lib[256];
    snprintf(lib, sizeof lib, "%s", O.lib ? O.lib : "");
    for (char *p = lib; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
            *p = '?';
    int n = snprintf(g_timeout_line, sizeof g_timeout_line,
                     "{\"ok\":false,\"tool\":\"zbench\",\"cmd\":\"%s\","
                     "\"lib\":\"%s\",\"version\":\"%s\",\"error\":"
                     "\"watchdog timeout after %d s",
                     O.cmd, lib, g_version, O.timeout_s);
    g_timeout_len = n < 0 ? 0 : (size_t)n;
    if (g_timeout_len >= sizeof g_timeout_line)
        g_timeout_len = sizeof g_timeout_line - 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    if (O.timeout_s > 0)
        alarm((unsigned)O.timeout_s);
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void load_library(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        die_code(2, "dlopen(%s): %s", path, dlerror());
    for (size_t i = 0; i < sizeof SYMBOLS / sizeof SYMBOLS[0]; i++) {
        dlerror();
        void *sym = dlsym(h, SYMBOLS[i].name);
        if (!sym)
            die_code(2, "dlsym(%s) in %s: %s", SYMBOLS[i].name, path,
                     dlerror());
        *SYMBOLS[i].slot = sym;
    }
    int major = 0, minor = 0, patch = 0;
    Z.version(&major, &minor, &patch);
    snprintf(g_version, sizeof g_version, "%d.%d.%d", major, minor, patch);
}

void set_int(void *s, int opt, int v, const char *name)
{
    if (Z.setsockopt(s, opt, &v, sizeof v) == -1)
        zfail(name, __LINE__);
}

int get_int(void *s, int opt, const char *name)
{
    int v = 0;
    size_t n = sizeof v;
    if (Z.getsockopt(s, opt, &v, &n) == -1)
        zfail(name, __LINE__);
    return v;
}

static void apply_hwm(void *s)
{
    if (O.hwm >= 0) {
        set_int(s, ZB_SNDHWM, O.hwm, "zmq_setsockopt(ZMQ_SNDHWM)");
        set_int(s, ZB_RCVHWM, O.hwm, "zmq_setsockopt(ZMQ_RCVHWM)");
    }
}

/* Ask the kernel for a free loopback port (bind port 0, read it, close). */
int free_tcp_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        die("socket(): %s", strerror(errno));
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0
        || getsockname(fd, (struct sockaddr *)&a, &len) < 0)
        die("bind/getsockname on 127.0.0.1:0: %s", strerror(errno));
    close(fd);
    return ntohs(a.sin_port);
}

static void make_endpoint(const char *transport, char *buf, size_t n)
{
    static atomic_uint seq;
    unsigned k = atomic_fetch_add(&seq, 1);
    if (strcmp(transport, "tcp") == 0)
        snprintf(buf, n, "tcp://127.0.0.1:%d", free_tcp_port());
    else if (strcmp(transport, "ipc") == 0)
        snprintf(buf, n, "ipc:///tmp/zbench-%d-%u.ipc", (int)getpid(), k);
    else if (strcmp(transport, "inproc") == 0)
        snprintf(buf, n, "inproc://zbench-%d-%u", (int)getpid(), k);
    else
        die_code(2, "unknown transport '%s' (tcp, ipc, inproc)", transport);
}

static void unlink_ipc(const char *endpoint)
{
    if (strncmp(endpoint, "ipc://", 6) == 0)
        unlink(endpoint + 6);
}

/* Bind s.  With an auto-chosen tcp port, retry on EADDRINUSE (the port was
 * taken between free_tcp_port() and zmq_bind()). */
static void bind_endpoint(void *s, const char *transport, char *ep, size_t n,
                          bool explicit_ep)
{
    for (int attempt = 0;; attempt++) {
        unlink_ipc(ep);
        if (Z.bind(s, ep) == 0)
            return;
        int e = Z.errno_();
        if (!explicit_ep && strcmp(transport, "tcp") == 0 && e == EADDRINUSE
            && attempt < 10) {
            make_endpoint(transport, ep, n);
            continue;
        }
        die("zmq_bind(%s) failed: %s (errno %d)", ep, Z.strerror(e), e);
    }
}

static void touch_file(const char *path)
{
    if (!path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open(%s): %s", path, strerror(errno));
    close(fd);
}

unsigned char *make_payload(size_t size)
{
    unsigned char *p = malloc(size ? size : 1);
    if (!p)
        die("out of memory (%zu bytes)", size);
    memset(p, 'D', size);
    return p;
}

/* ------------------------------------------------------------------------ */
/* Patterns                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
    const char *name;
    int snd_type;    /* socket type of the sending side (connects) */
    int rcv_type;    /* socket type of the receiving side (binds)  */
    bool snd_router; /* sender prepends the receiver's routing id  */
    bool rcv_router; /* receiver gets (sender id, payload)         */
    bool poll;       /* zmq_poll before each receive               */
    bool pubsub;     /* subscription must settle before sending     */
} pattern_t;

static const pattern_t PATTERNS[] = {
    {"pair", ZB_PAIR, ZB_PAIR, false, false, false, false},
    {"pubsub", ZB_PUB, ZB_SUB, false, false, false, true},
    {"pushpull", ZB_PUSH, ZB_PULL, false, false, false, false},
    {"dealer_dealer", ZB_DEALER, ZB_DEALER, false, false, false, false},
    {"dealer_router", ZB_DEALER, ZB_ROUTER, false, true, false, false},
    {"router_router", ZB_ROUTER, ZB_ROUTER, true, true, false, false},
    {"router_router_poll", ZB_ROUTER, ZB_ROUTER, true, true, true, false},
};

static const pattern_t *find_pattern(const char *name)
{
    for (size_t i = 0; i < sizeof PATTERNS / sizeof PATTERNS[0]; i++)
        if (strcmp(PATTERNS[i].name, name) == 0)
            return &PATTERNS[i];
    return NULL;
}

#define SND_ID "snd"
#define RCV_ID "rcv"
#define PROBE_BYTE 'P'

/* Receive one logical message into m.  For a ROUTER receiver that is two
 * frames (routing id, payload); m holds the payload afterwards.  Returns the
 * payload size. */
static size_t recv_message(void *s, zb_msg_t *m, const pattern_t *p)
{
    if (p->poll) {
        zb_pollitem_t item = {s, 0, ZB_POLLIN, 0};
        for (;;) {
            int rc = Z.poll(&item, 1, -1);
            if (rc == -1 && Z.errno_() == EINTR)
                continue;
            if (rc == -1)
                zfail("zmq_poll", __LINE__);
            if (item.revents & ZB_POLLIN)
                break;
        }
    }
    if (p->rcv_router) {
        ZCHK(Z.msg_recv(m, s, 0));
        if (!Z.msg_more(m) || Z.msg_size(m) == 0)
            die("ROUTER receiver: first frame is not a routing id "
                "(size %zu, more %d)",
                Z.msg_size(m), Z.msg_more(m));
    }
    ZCHK(Z.msg_recv(m, s, 0));
    if (Z.msg_more(m))
        die("unexpected extra frame after the payload");
    return Z.msg_size(m);
}

static bool is_probe(zb_msg_t *m, size_t n)
{
    return n == 1 && *(unsigned char *)Z.msg_data(m) == PROBE_BYTE;
}

/* ------------------------------------------------------------------------ */
/* thr: two threads, one process                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
    const pattern_t *p;
    void *ctx;
    char ep[256];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool bound;
    bool acked;
    bool done;
    /* results */
    uint64_t t_first, t_last, sync_ns, send_ns;
    uint64_t t_send_start; /* sender: just before the first data message */
    atomic_long sent;      /* data messages handed to the library so far */
    long sent_at_first;    /* ... when the receiver got the first one */
    long probes_sent, probes_seen;
    int sndhwm, rcvhwm;
} thr_state_t;

static void *thr_receiver(void *arg)
{
    thr_state_t *st = arg;
    const pattern_t *p = st->p;
    void *s;
    ZPTR(Z.socket(st->ctx, p->rcv_type), s);
    apply_hwm(s);
    if (p->rcv_router || p->rcv_type == ZB_DEALER)
        ZCHK(Z.setsockopt(s, ZB_ROUTING_ID, RCV_ID, strlen(RCV_ID)));
    if (p->pubsub)
        ZCHK(Z.setsockopt(s, ZB_SUBSCRIBE, "", 0));
    bind_endpoint(s, O.transport, st->ep, sizeof st->ep, O.endpoint != NULL);
    st->rcvhwm = get_int(s, ZB_RCVHWM, "zmq_getsockopt(ZMQ_RCVHWM)");

    pthread_mutex_lock(&st->mu);
    st->bound = true;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);

    zb_msg_t m;
    ZCHK(Z.msg_init(&m));

    /* Sync: wait for a probe, acknowledge it, then skip any later probes
     * (pubsub keeps probing until the ack) up to the first data message. */
    size_t n = recv_message(s, &m, p);
    if (!is_probe(&m, n))
        die("sync: expected a probe, got %zu bytes", n);
    st->probes_seen = 1;
    pthread_mutex_lock(&st->mu);
    st->acked = true;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    for (;;) {
        n = recv_message(s, &m, p);
        if (!is_probe(&m, n))
            break;
        st->probes_seen++;
    }
    /* First data message: the timer starts here. */
    st->t_first = now_ns();
    st->sent_at_first = atomic_load_explicit(&st->sent, memory_order_relaxed);
    if (n != O.size)
        die("message 1: expected %zu bytes, got %zu", O.size, n);
    for (long i = 1; i < O.count; i++) {
        atomic_store_explicit(&g_progress, i, memory_order_relaxed);
        n = recv_message(s, &m, p);
        if (n != O.size)
            die("message %ld: expected %zu bytes, got %zu", i + 1, O.size,
                n);
    }
    st->t_last = now_ns();
    pthread_mutex_lock(&st->mu);
    st->done = true;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    ZCHK(Z.msg_close(&m));
    ZCHK(Z.close(s));
    return NULL;
}

static void thr_send_payload(void *s, const pattern_t *p, const void *buf,
                             size_t len)
{
    if (p->snd_router)
        ZCHK(Z.send(s, RCV_ID, strlen(RCV_ID), ZB_SNDMORE));
    ZCHK(Z.send(s, buf, len, 0));
}

/* Send one probe.  Returns false if it could not be sent yet (ROUTER: the
 * peer's routing id is not known yet; PUB: would block). */
static bool thr_send_probe(void *s, const pattern_t *p)
{
    static const unsigned char probe = PROBE_BYTE;
    if (p->snd_router) {
        if (Z.send(s, RCV_ID, strlen(RCV_ID), ZB_SNDMORE | ZB_DONTWAIT)
            == -1) {
            int e = Z.errno_();
            if (e == EHOSTUNREACH || e == EAGAIN || e == EINTR)
                return false;
            zfail("zmq_send(routing id, ZMQ_SNDMORE)", __LINE__);
        }
        ZCHK(Z.send(s, &probe, 1, 0));
        return true;
    }
    if (p->pubsub) {
        if (Z.send(s, &probe, 1, ZB_DONTWAIT) == -1) {
            int e = Z.errno_();
            if (e == EAGAIN || e == EINTR)
                return false;
            zfail("zmq_send(probe)", __LINE__);
        }
        return true;
    }
    ZCHK(Z.send(s, &probe, 1, 0));
    return true;
}

static void *thr_sender(void *arg)
{
    thr_state_t *st = arg;
    const pattern_t *p = st->p;
    unsigned char *buf = make_payload(O.size);

    pthread_mutex_lock(&st->mu);
    while (!st->bound)
        pthread_cond_wait(&st->cv, &st->mu);
    pthread_mutex_unlock(&st->mu);

    void *s;
    ZPTR(Z.socket(st->ctx, p->snd_type), s);
    apply_hwm(s);
    if (p->snd_type == ZB_ROUTER || p->snd_type == ZB_DEALER)
        ZCHK(Z.setsockopt(s, ZB_ROUTING_ID, SND_ID, strlen(SND_ID)));
    if (p->snd_router)
        /* EHOSTUNREACH until the handshake is done; block (not drop) at
         * HWM afterwards. */
        set_int(s, ZB_ROUTER_MANDATORY, 1, "zmq_setsockopt(ROUTER_MANDATORY)");
    if (p->pubsub && O.hwm != 0)
        /* A finite HWM would make PUB drop; block instead, so that every
         * one of the `count` messages is delivered. */
        set_int(s, ZB_XPUB_NODROP, 1, "zmq_setsockopt(ZMQ_XPUB_NODROP)");
    ZCHK(Z.connect(s, st->ep));
    st->sndhwm = get_int(s, ZB_SNDHWM, "zmq_getsockopt(ZMQ_SNDHWM)");

    /* Sync phase: deliver one probe and wait for the receiver's ack.  PUB
     * re-sends a probe every millisecond until the subscription has reached
     * it and a probe got through; ROUTER retries while the peer is unknown. */
    uint64_t t0 = now_ns();
    bool sent_one = false;
    for (;;) {
        if (!sent_one || p->pubsub) {
            if (thr_send_probe(s, p)) {
                sent_one = true;
                st->probes_sent++;
            }
        }
        pthread_mutex_lock(&st->mu);
        if (!st->acked) {
            struct timespec dl;
            clock_gettime(CLOCK_REALTIME, &dl);
            dl.tv_nsec += 1000000;
            if (dl.tv_nsec >= 1000000000) {
                dl.tv_sec++;
                dl.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&st->cv, &st->mu, &dl);
        }
        bool acked = st->acked;
        pthread_mutex_unlock(&st->mu);
        if (acked)
            break;
    }
    st->sync_ns = now_ns() - t0;

    uint64_t t1 = now_ns();
    st->t_send_start = t1;
    for (long i = 0; i < O.count; i++) {
        thr_send_payload(s, p, buf, O.size);
        atomic_store_explicit(&st->sent, i + 1, memory_order_relaxed);
    }
    st->send_ns = now_ns() - t1;
    /* Keep the socket open until the receiver has everything: the
     * measurement must not depend on LINGER behaviour at close. */
    pthread_mutex_lock(&st->mu);
    while (!st->done)
        pthread_cond_wait(&st->cv, &st->mu);
    pthread_mutex_unlock(&st->mu);
    ZCHK(Z.close(s));
    free(buf);
    return NULL;
}

static int cmd_thr(void)
{
    const pattern_t *p = find_pattern(O.pattern ? O.pattern : "");
    if (!p)
        die_code(2, "unknown --pattern '%s' (pair, pubsub, pushpull, "
                    "dealer_dealer, dealer_router, router_router, "
                    "router_router_poll)",
                 O.pattern ? O.pattern : "");
    thr_state_t st;
    memset(&st, 0, sizeof st);
    st.p = p;
    pthread_mutex_init(&st.mu, NULL);
    pthread_cond_init(&st.cv, NULL);
    if (O.endpoint)
        snprintf(st.ep, sizeof st.ep, "%s", O.endpoint);
    else
        make_endpoint(O.transport, st.ep, sizeof st.ep);
    ZPTR(Z.ctx_new(), st.ctx);

    pthread_t rt, sn;
    if (pthread_create(&rt, NULL, thr_receiver, &st) != 0
        || pthread_create(&sn, NULL, thr_sender, &st) != 0)
        die("pthread_create failed");
    pthread_join(sn, NULL);
    pthread_join(rt, NULL);
    ZCHK(Z.ctx_term(st.ctx));
    unlink_ipc(st.ep);

    uint64_t el = st.t_last - st.t_first;
    if (el == 0)
        el = 1;
    double msgs = (double)(O.count - 1) * 1e9 / (double)el;
    double mbps = msgs * (double)O.size * 8.0 / 1e6;
    json_head(stdout, true);
    printf(",\"pattern\":\"%s\",\"transport\":\"%s\",\"endpoint\":",
           p->name, O.transport);
    json_str(stdout, st.ep);
    printf(",\"size\":%zu,\"count\":%ld", O.size, O.count);
    if (O.hwm >= 0)
        printf(",\"hwm\":%d", O.hwm);
    else
        printf(",\"hwm\":\"default\"");
    printf(",\"sndhwm\":%d,\"rcvhwm\":%d,\"pub_nodrop\":%s", st.sndhwm,
           st.rcvhwm, (p->pubsub && O.hwm != 0) ? "true" : "false");
    printf(",\"frames\":%d,\"poll\":%s", p->snd_router || p->rcv_router ? 2 : 1,
           p->poll ? "true" : "false");
    printf(",\"sync_ms\":%.3f,\"probes_sent\":%ld,\"probes_seen\":%ld",
           st.sync_ns / 1e6, st.probes_sent, st.probes_seen);
    /* End to end: sender's first send to receiver's last receive (one
     * clock).  sent_before_first_recv / count close to 1 means the sender had
     * queued nearly everything before the receiver woke up: the receiver's
     * window then measured draining a queue, not throughput. */
    uint64_t e2e = st.t_last - st.t_send_start;
    if (e2e == 0)
        e2e = 1;
    printf(",\"send_s\":%.9f,\"e2e_s\":%.9f,\"e2e_msg_per_s\":%.3f,"
           "\"sent_before_first_recv\":%ld,\"drain_fraction\":%.4f",
           st.send_ns / 1e9, e2e / 1e9, (double)O.count * 1e9 / (double)e2e,
           st.sent_at_first, (double)st.sent_at_first / (double)O.count);
    printf(",\"elapsed_s\":%.9f,\"msg_per_s\":%.3f,\"mbit_per_s\":%.3f}\n",
           el / 1e9, msgs, mbps);
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* router_par: workload D, parallel ROUTER -> ROUTER throughput (seed 004)  */
/* ------------------------------------------------------------------------ */

#define D_SND_ID "r1"
#define D_RCV_ID "r2"

typedef struct {
    void *s;
    unsigned char *ack; /* receiver thread sets it once done */
} rpar_recv_t;

/* One receiver thread per iteration, like the JMH benchmark: receive count
 * two-frame messages (routing id of the sender, payload) and discard them. */
static void *rpar_receiver(void *arg)
{
    rpar_recv_t *r = arg;
    zb_msg_t m;
    ZCHK(Z.msg_init(&m));
    for (long i = 0; i < O.count; i++) {
        ZCHK(Z.msg_recv(&m, r->s, 0));
        if (!Z.msg_more(&m) || Z.msg_size(&m) != strlen(D_SND_ID)
            || memcmp(Z.msg_data(&m), D_SND_ID, strlen(D_SND_ID)) != 0)
            die("message %ld: first frame is not the sender's routing id",
                i + 1);
        ZCHK(Z.msg_recv(&m, r->s, 0));
        if (Z.msg_more(&m) || Z.msg_size(&m) != O.size)
            die("message %ld: expected one %zu-byte payload frame, got %zu",
                i + 1, O.size, Z.msg_size(&m));
        atomic_store_explicit(&g_progress, i + 1, memory_order_relaxed);
    }
    ZCHK(Z.msg_close(&m));
    return NULL;
}

/* Receive one two-frame probe on ROUTER s from routing id `from`. */
static void rpar_recv_probe(void *s, const char *from)
{
    zb_msg_t m;
    ZCHK(Z.msg_init(&m));
    ZCHK(Z.msg_recv(&m, s, 0));
    if (!Z.msg_more(&m) || Z.msg_size(&m) != strlen(from)
        || memcmp(Z.msg_data(&m), from, strlen(from)) != 0)
        die("handshake: expected a probe from '%s'", from);
    ZCHK(Z.msg_recv(&m, s, 0));
    if (Z.msg_more(&m) || !is_probe(&m, Z.msg_size(&m)))
        die("handshake: malformed probe");
    ZCHK(Z.msg_close(&m));
}

/* Send a probe to routing id `to`, retrying (1 ms) while the route does not
 * exist yet (ROUTER_MANDATORY: EHOSTUNREACH).  Returns the attempts. */
static long rpar_send_probe(void *s, const char *to)
{
    static const unsigned char probe = PROBE_BYTE;
    for (long attempt = 1;; attempt++) {
        if (Z.send(s, to, strlen(to), ZB_SNDMORE | ZB_DONTWAIT) != -1) {
            ZCHK(Z.send(s, &probe, 1, 0));
            return attempt;
        }
        int e = Z.errno_();
        if (e != EHOSTUNREACH && e != EAGAIN && e != EINTR)
            zfail("zmq_send(probe routing id)", __LINE__);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static int cmd_router_par(void)
{
    char ep[256];
    if (O.endpoint)
        snprintf(ep, sizeof ep, "%s", O.endpoint);
    else
        make_endpoint(O.transport, ep, sizeof ep);
    void *ctx, *snd, *rcv;
    ZPTR(Z.ctx_new(), ctx);
    /* Setup (JMH @Setup): receiver ROUTER binds with routing id r2; sender
     * ROUTER has routing id r1 and ROUTER_MANDATORY, so a send to r2 fails
     * with EHOSTUNREACH until the route exists (and blocks at HWM rather
     * than dropping); library-default HWM as in the seed, unless --hwm. */
    ZPTR(Z.socket(ctx, ZB_ROUTER), rcv);
    apply_hwm(rcv);
    ZCHK(Z.setsockopt(rcv, ZB_ROUTING_ID, D_RCV_ID, strlen(D_RCV_ID)));
    bind_endpoint(rcv, O.transport, ep, sizeof ep, O.endpoint != NULL);
    ZPTR(Z.socket(ctx, ZB_ROUTER), snd);
    apply_hwm(snd);
    ZCHK(Z.setsockopt(snd, ZB_ROUTING_ID, D_SND_ID, strlen(D_SND_ID)));
    set_int(snd, ZB_ROUTER_MANDATORY, 1, "zmq_setsockopt(ROUTER_MANDATORY)");
    ZCHK(Z.connect(snd, ep));
    /* Handshake exchange: r1 -> r2 once the route exists, then r2 -> r1. */
    uint64_t h0 = now_ns();
    long attempts = rpar_send_probe(snd, D_RCV_ID);
    rpar_recv_probe(rcv, D_SND_ID);
    rpar_send_probe(rcv, D_SND_ID);
    rpar_recv_probe(snd, D_RCV_ID);
    double sync_ms = (now_ns() - h0) / 1e6;

    unsigned char *buf = make_payload(O.size);
    long total = O.warmup + O.iterations;
    double *rates = malloc(sizeof *rates * (size_t)(total > 0 ? total : 1));
    if (!rates)
        die("out of memory");
    uint64_t measured_ns = 0;
    for (long it = 0; it < total; it++) {
        rpar_recv_t r = {rcv, NULL};
        atomic_store(&g_progress, 0);
        uint64_t t0 = now_ns();
        pthread_t th;
        if (pthread_create(&th, NULL, rpar_receiver, &r) != 0)
            die("pthread_create failed");
        for (long i = 0; i < O.count; i++) {
            ZCHK(Z.send(snd, D_RCV_ID, strlen(D_RCV_ID), ZB_SNDMORE));
            ZCHK(Z.send(snd, buf, O.size, 0));
        }
        pthread_join(th, NULL);
        uint64_t el = now_ns() - t0;
        if (el == 0)
            el = 1;
        rates[it] = (double)O.count * 1e9 / (double)el;
        if (it >= O.warmup)
            measured_ns += el;
    }
    ZCHK(Z.close(snd));
    ZCHK(Z.close(rcv));
    ZCHK(Z.ctx_term(ctx));
    unlink_ipc(ep);
    free(buf);
    if (measured_ns == 0)
        measured_ns = 1;
    double msgs = (double)O.count * (double)O.iterations * 1e9
                  / (double)measured_ns;
    json_head(stdout, true);
    printf(",\"pattern\":\"router_par\",\"transport\":\"%s\",\"endpoint\":",
           O.transport);
    json_str(stdout, ep);
    printf(",\"size\":%zu,\"count\":%ld,\"iterations\":%ld,"
           "\"warmup_iterations\":%ld,\"frames\":2",
           O.size, O.count, O.iterations, O.warmup);
    if (O.hwm >= 0)
        printf(",\"hwm\":%d", O.hwm);
    else
        printf(",\"hwm\":\"default\"");
    printf(",\"sync_ms\":%.3f,\"probe_attempts\":%ld,\"iter_msg_per_s\":[",
           sync_ms, attempts);
    for (long it = O.warmup; it < total; it++)
        printf("%s%.3f", it > O.warmup ? "," : "", rates[it]);
    printf("],\"warmup_msg_per_s\":[");
    for (long it = 0; it < O.warmup; it++)
        printf("%s%.3f", it ? "," : "", rates[it]);
    printf("],\"elapsed_s\":%.9f,\"msg_per_s\":%.3f,\"mbit_per_s\":%.3f}\n",
           measured_ns / 1e9, msgs, msgs * (double)O.size * 8.0 / 1e6);
    fflush(stdout);
    free(rates);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Latency                                                                  */
/* ------------------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array: the smallest value such that
 * at least q of the samples are <= it. */
static uint64_t pct(const uint64_t *sorted, size_t n, double q)
{
    size_t k = (size_t)ceil(q * (double)n);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return sorted[k - 1];
}

/* One line of latency results.  rtt[] holds per-round-trip times in ns;
 * every reported figure is ONE-WAY (rtt / 2) in microseconds. */
void lat_report(const char *extra_json, uint64_t *rtt, size_t n,
                       uint64_t loop_ns)
{
    qsort(rtt, n, sizeof *rtt, cmp_u64);
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)rtt[i];
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        sq += ((double)rtt[i] - mean) * ((double)rtt[i] - mean);
    double sd = n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0;
#define OW(x) ((double)(x) / 2000.0) /* ns round trip -> us one way */
    json_head(stdout, true);
    printf("%s", extra_json);
    printf(",\"size\":%zu,\"count\":%zu,\"warmup\":%ld", O.size, n,
           O.warmup);
    printf(",\"mean_us\":%.3f,\"stdev_us\":%.3f,\"min_us\":%.3f", OW(mean),
           OW(sd), OW(rtt[0]));
    printf(",\"p50_us\":%.3f,\"p90_us\":%.3f,\"p99_us\":%.3f,"
           "\"p999_us\":%.3f,\"max_us\":%.3f",
           OW(pct(rtt, n, 0.50)), OW(pct(rtt, n, 0.90)),
           OW(pct(rtt, n, 0.99)), OW(pct(rtt, n, 0.999)), OW(rtt[n - 1]));
    printf(",\"classic_us\":%.3f,\"loop_s\":%.9f}\n",
           (double)loop_ns / (2000.0 * (double)n), loop_ns / 1e9);
#undef OW
    fflush(stdout);
}

/* REQ side: warmup round trips (not recorded), then count timed ones. */
static uint64_t *req_loop(void *s, uint64_t *loop_ns)
{
    unsigned char *buf = make_payload(O.size);
    uint64_t *rtt = malloc(sizeof *rtt * (size_t)O.count);
    if (!rtt)
        die("out of memory");
    zb_msg_t m;
    ZCHK(Z.msg_init(&m));
    for (long i = 0; i < O.warmup; i++) {
        ZCHK(Z.send(s, buf, O.size, 0));
        ZCHK(Z.msg_recv(&m, s, 0));
        if (Z.msg_size(&m) != O.size)
            die("warmup reply %ld: expected %zu bytes, got %zu", i, O.size,
                Z.msg_size(&m));
    }
    uint64_t start = now_ns();
    for (long i = 0; i < O.count; i++) {
        uint64_t t0 = now_ns();
        ZCHK(Z.send(s, buf, O.size, 0));
        ZCHK(Z.msg_recv(&m, s, 0));
        uint64_t t1 = now_ns();
        rtt[i] = t1 - t0;
        atomic_store_explicit(&g_progress, i + 1, memory_order_relaxed);
        if (Z.msg_size(&m) != O.size)
            die("reply %ld: expected %zu bytes, got %zu", i, O.size,
                Z.msg_size(&m));
    }
    *loop_ns = now_ns() - start;
    ZCHK(Z.msg_close(&m));
    free(buf);
    return rtt;
}

/* REP side: echo warmup + count messages. */
static void rep_loop(void *s)
{
    zb_msg_t m;
    ZCHK(Z.msg_init(&m));
    for (long i = 0; i < O.warmup + O.count; i++) {
        ZCHK(Z.msg_recv(&m, s, 0));
        ZCHK(Z.msg_send(&m, s, 0));
        atomic_store_explicit(&g_progress, i + 1, memory_order_relaxed);
    }
    ZCHK(Z.msg_close(&m));
}

typedef struct {
    void *ctx;
    char ep[256];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool bound;
} lat_state_t;

static void *lat_server_thread(void *arg)
{
    lat_state_t *st = arg;
    void *s;
    ZPTR(Z.socket(st->ctx, ZB_REP), s);
    bind_endpoint(s, O.transport, st->ep, sizeof st->ep, O.endpoint != NULL);
    pthread_mutex_lock(&st->mu);
    st->bound = true;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    rep_loop(s);
    ZCHK(Z.close(s));
    return NULL;
}

static int cmd_lat(void)
{
    lat_state_t st;
    memset(&st, 0, sizeof st);
    pthread_mutex_init(&st.mu, NULL);
    pthread_cond_init(&st.cv, NULL);
    if (O.endpoint)
        snprintf(st.ep, sizeof st.ep, "%s", O.endpoint);
    else
        make_endpoint(O.transport, st.ep, sizeof st.ep);
    ZPTR(Z.ctx_new(), st.ctx);
    pthread_t srv;
    if (pthread_create(&srv, NULL, lat_server_thread, &st) != 0)
        die("pthread_create failed");
    pthread_mutex_lock(&st.mu);
    while (!st.bound)
        pthread_cond_wait(&st.cv, &st.mu);
    pthread_mutex_unlock(&st.mu);

    /* The client runs on the main thread; the server on its own thread. */
    void *s;
    ZPTR(Z.socket(st.ctx, ZB_REQ), s);
    ZCHK(Z.connect(s, st.ep));
    uint64_t loop_ns;
    uint64_t *rtt = req_loop(s, &loop_ns);
    ZCHK(Z.close(s));
    pthread_join(srv, NULL);
    ZCHK(Z.ctx_term(st.ctx));
    unlink_ipc(st.ep);

    char extra[512];
    snprintf(extra, sizeof extra,
             ",\"pattern\":\"reqrep\",\"transport\":\"%s\",\"mode\":"
             "\"threads\"",
             O.transport);
    lat_report(extra, rtt, (size_t)O.count, loop_ns);
    free(rtt);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Workload A: separate processes                                           */
/* ------------------------------------------------------------------------ */

static const char *need_endpoint(void)
{
    if (!O.endpoint)
        die_code(2, "%s needs --endpoint (e.g. tcp://127.0.0.1:5555)", O.cmd);
    return O.endpoint;
}

static const char *transport_of(const char *ep)
{
    if (strncmp(ep, "tcp://", 6) == 0)
        return "tcp";
    if (strncmp(ep, "ipc://", 6) == 0)
        return "ipc";
    if (strncmp(ep, "inproc://", 9) == 0)
        return "inproc";
    return "other";
}

static void print_endpoint_fields(const char *ep)
{
    printf(",\"transport\":\"%s\",\"endpoint\":", transport_of(ep));
    json_str(stdout, ep);
}

/* PULL binds, receives the first message, starts the timer, receives the
 * remaining count-1, stops (libzmq's local_thr). */
static int cmd_local_thr(void)
{
    char ep[256];
    snprintf(ep, sizeof ep, "%s", need_endpoint());
    void *ctx, *s;
    ZPTR(Z.ctx_new(), ctx);
    ZPTR(Z.socket(ctx, ZB_PULL), s);
    apply_hwm(s);
    bind_endpoint(s, transport_of(ep), ep, sizeof ep, true);
    touch_file(O.ready_file);
    zb_msg_t m;
    ZCHK(Z.msg_init(&m));
    ZCHK(Z.msg_recv(&m, s, 0));
    if (Z.msg_size(&m) != O.size)
        die("message 1: expected %zu bytes, got %zu", O.size,
            Z.msg_size(&m));
    uint64_t t0 = now_ns();
    for (long i = 1; i < O.count; i++) {
        atomic_store_explicit(&g_progress, i, memory_order_relaxed);
        ZCHK(Z.msg_recv(&m, s, 0));
        if (Z.msg_size(&m) != O.size)
            die("message %ld: expected %zu bytes, got %zu", i + 1, O.size,
                Z.msg_size(&m));
    }
    uint64_t el = now_ns() - t0;
    atomic_store_explicit(&g_progress, O.count, memory_order_relaxed);
    touch_file(O.done_file);
    ZCHK(Z.msg_close(&m));
    ZCHK(Z.close(s));
    ZCHK(Z.ctx_term(ctx));
    unlink_ipc(ep);
    if (el == 0)
        el = 1;
    double msgs = (double)(O.count - 1) * 1e9 / (double)el;
    json_head(stdout, true);
    printf(",\"pattern\":\"pushpull\",\"mode\":\"processes\"");
    print_endpoint_fields(ep);
    printf(",\"size\":%zu,\"count\":%ld", O.size, O.count);
    if (O.hwm >= 0)
        printf(",\"hwm\":%d", O.hwm);
    else
        printf(",\"hwm\":\"default\"");
    printf(",\"elapsed_s\":%.9f,\"msg_per_s\":%.3f,\"mbit_per_s\":%.3f}\n",
           el / 1e9, msgs, msgs * (double)O.size * 8.0 / 1e6);
    fflush(stdout);
    return 0;
}

/* PUSH connects and sends count messages as fast as it can; zmq_ctx_term
 * waits (default linger) until they are all handed to the peer. */
static int cmd_remote_thr(void)
{
    const char *ep = need_endpoint();
    void *ctx, *s;
    unsigned char *buf = make_payload(O.size);
    ZPTR(Z.ctx_new(), ctx);
    ZPTR(Z.socket(ctx, ZB_PUSH), s);
    apply_hwm(s);
    ZCHK(Z.connect(s, ep));
    uint64_t t0 = now_ns();
    for (long i = 0; i < O.count; i++)
        ZCHK(Z.send(s, buf, O.size, 0));
    uint64_t sent = now_ns() - t0;
    if (O.done_file) {
        /* Close only once the receiver has everything, so the result does
         * not depend on LINGER behaviour at close (see bench/README.md). */
        while (access(O.done_file, F_OK) != 0) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    ZCHK(Z.close(s));
    ZCHK(Z.ctx_term(ctx));
    uint64_t flushed = now_ns() - t0;
    free(buf);
    json_head(stdout, true);
    printf(",\"pattern\":\"pushpull\",\"mode\":\"processes\"");
    print_endpoint_fields(ep);
    printf(",\"size\":%zu,\"count\":%ld,\"send_s\":%.9f,\"flush_s\":%.9f}\n",
           O.size, O.count, sent / 1e9, flushed / 1e9);
    fflush(stdout);
    return 0;
}

/* REP binds and echoes warmup + count messages (libzmq's local_lat). */
static int cmd_local_lat(void)
{
    char ep[256];
    snprintf(ep, sizeof ep, "%s", need_endpoint());
    void *ctx, *s;
    ZPTR(Z.ctx_new(), ctx);
    ZPTR(Z.socket(ctx, ZB_REP), s);
    bind_endpoint(s, transport_of(ep), ep, sizeof ep, true);
    touch_file(O.ready_file);
    rep_loop(s);
    ZCHK(Z.close(s));
    ZCHK(Z.ctx_term(ctx));
    unlink_ipc(ep);
    json_head(stdout, true);
    printf(",\"pattern\":\"reqrep\",\"mode\":\"processes\"");
    print_endpoint_fields(ep);
    printf(",\"size\":%zu,\"count\":%ld,\"warmup\":%ld}\n", O.size, O.count,
           O.warmup);
    fflush(stdout);
    return 0;
}

/* REQ connects and times each round trip (libzmq's remote_lat, plus
 * per-round-trip percentiles). */
static int cmd_remote_lat(void)
{
    const char *ep = need_endpoint();
    void *ctx, *s;
    ZPTR(Z.ctx_new(), ctx);
    ZPTR(Z.socket(ctx, ZB_REQ), s);
    ZCHK(Z.connect(s, ep));
    uint64_t loop_ns;
    uint64_t *rtt = req_loop(s, &loop_ns);
    ZCHK(Z.close(s));
    ZCHK(Z.ctx_term(ctx));
    char extra[600];
    snprintf(extra, sizeof extra,
             ",\"pattern\":\"reqrep\",\"mode\":\"processes\",\"transport\":"
             "\"%s\"",
             transport_of(ep));
    lat_report(extra, rtt, (size_t)O.count, loop_ns);
    free(rtt);
    return 0;
}

static int cmd_version(void)
{
    char real[PATH_MAX];
    json_head(stdout, true);
    fputs(",\"realpath\":", stdout);
    json_str(stdout, realpath(O.lib, real) ? real : O.lib);
    fputs("}\n", stdout);
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* CLI                                                                      */
/* ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fputs(
        "usage: zbench --lib PATH [--timeout SEC] COMMAND [options]\n"
        "\n"
        "Loads the libzmq-compatible library PATH with dlopen and runs one\n"
        "benchmark; prints one JSON line on stdout.\n"
        "\n"
        "commands:\n"
        "  version                  print zmq_version of the library\n"
        "  thr   --pattern P --transport T --size B --count N [--hwm H]\n"
        "        throughput, sender and receiver threads in one process;\n"
        "        P: pair pubsub pushpull dealer_dealer dealer_router\n"
        "           router_router router_router_poll\n"
        "  lat   --transport T --size B --count N [--warmup W]\n"
        "        REQ/REP ping-pong between two threads\n"
        "  local_thr  --endpoint E --size B --count N [--hwm H] "
        "[--ready-file F] [--done-file F]\n"
        "  remote_thr --endpoint E --size B --count N [--hwm H] "
        "[--done-file F]\n"
        "  local_lat  --endpoint E --size B --count N [--warmup W] "
        "[--ready-file F]\n"
        "  remote_lat --endpoint E --size B --count N [--warmup W]\n"
        "        workload A: separate processes (start local_* first);\n"
        "        lat-server / lat-client are aliases of local_lat / "
        "remote_lat\n"
        "  router_par --transport T --size B --count N [--iterations K] "
        "[--warmup W] [--hwm H]\n"
        "        workload D: ROUTER r1 -> ROUTER r2, a fresh receiver thread\n"
        "        per iteration receives N two-frame messages while the main\n"
        "        thread sends them; W warmup + K timed iterations (default\n"
        "        1 + 5); msg/s = N*K / time of the K iterations\n"
        "  raw_thr --transport tcp|ipc --size B --count N\n"
        "  raw_lat --transport tcp|ipc --size B --count N [--warmup W]\n"
        "        the raw-socket ceiling: thr / lat over a plain TCP or\n"
        "        Unix-stream socket pair (two threads, TCP_NODELAY); no zmq\n"
        "        library is loaded (--lib is still required, not used)\n"
        "  mem_idle --count N\n"
        "        ROUTER's RSS growth with N idle ZMTP connections (raw\n"
        "        DEALER clients in a forked child)\n"
        "  mem_slowsub --size B --count N\n"
        "        PUB and a SUB that stops reading (separate processes):\n"
        "        each one's RSS growth after N non-blocking sends\n"
        "\n"
        "options:\n"
        "  --lib PATH        library to dlopen (required)\n"
        "  --transport T     tcp | ipc | inproc (default tcp)\n"
        "  --endpoint E      explicit endpoint (default: tcp on a free\n"
        "                    127.0.0.1 port, ipc in /tmp, unique inproc)\n"
        "  --size B          payload bytes, >= 1 (default 64)\n"
        "  --count N         messages / timed round trips, >= 2\n"
        "  --hwm H           SNDHWM and RCVHWM on every socket; 'default'\n"
        "                    (library default, the default) or 0=unlimited\n"
        "  --warmup W        untimed round trips before timing (default 100;\n"
        "                    router_par: untimed iterations, default 1)\n"
        "  --iterations K    router_par: timed iterations (default 5)\n"
        "  --ready-file F    local_*: create F once bound\n"
        "  --done-file F     local_thr: create F after the last message;\n"
        "                    remote_thr: wait for F before closing\n"
        "  --timeout SEC     watchdog: fail after SEC seconds (default 120,\n"
        "                    0 = off)\n",
        f);
}

static long parse_long(const char *name, const char *v, long min)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || end == v || x < min)
        die_code(2, "bad value for --%s: '%s' (integer >= %ld)", name, v,
                 min);
    return x;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"lib", required_argument, NULL, 'l'},
        {"pattern", required_argument, NULL, 'p'},
        {"transport", required_argument, NULL, 't'},
        {"endpoint", required_argument, NULL, 'e'},
        {"size", required_argument, NULL, 's'},
        {"count", required_argument, NULL, 'n'},
        {"hwm", required_argument, NULL, 'H'},
        {"warmup", required_argument, NULL, 'w'},
        {"ready-file", required_argument, NULL, 'r'},
        {"done-file", required_argument, NULL, 'd'},
        {"timeout", required_argument, NULL, 'T'},
        {"iterations", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    O.cmd = "-";
    O.transport = "tcp";
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': O.lib = optarg; break;
        case 'p': O.pattern = optarg; break;
        case 't': O.transport = optarg; break;
        case 'e': O.endpoint = optarg; break;
        case 's': O.size = (size_t)parse_long("size", optarg, 1); break;
        case 'n': O.count = parse_long("count", optarg, 2); break;
        case 'H':
            O.hwm = strcmp(optarg, "default") == 0
                        ? -1
                        : (int)parse_long("hwm", optarg, 0);
            break;
        case 'w': O.warmup = parse_long("warmup", optarg, 0); break;
        case 'r': O.ready_file = optarg; break;
        case 'd': O.done_file = optarg; break;
        case 'i': O.iterations = parse_long("iterations", optarg, 1); break;
        case 'T': O.timeout_s = (int)parse_long("timeout", optarg, 0); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    O.cmd = argv[optind];
    if (strcmp(O.cmd, "lat-server") == 0)
        O.cmd = "local_lat";
    else if (strcmp(O.cmd, "lat-client") == 0)
        O.cmd = "remote_lat";
    if (!O.lib)
        die_code(2, "--lib PATH is required");

    static const struct {
        const char *name;
        int (*fn)(void);
        bool needs_count;
        bool raw; /* no zmq at all: the library is not loaded */
    } CMDS[] = {
        {"version", cmd_version, false, false},
        {"thr", cmd_thr, true, false},
        {"lat", cmd_lat, true, false},
        {"local_thr", cmd_local_thr, true, false},
        {"remote_thr", cmd_remote_thr, true, false},
        {"local_lat", cmd_local_lat, true, false},
        {"remote_lat", cmd_remote_lat, true, false},
        {"router_par", cmd_router_par, true, false},
        {"raw_thr", cmd_raw_thr, true, true},
        {"raw_lat", cmd_raw_lat, true, true},
        {"mem_idle", cmd_mem_idle, true, false},
        {"mem_slowsub", cmd_mem_slowsub, true, false},
    };
    int (*fn)(void) = NULL;
    bool needs_count = false, raw = false;
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++)
        if (strcmp(CMDS[i].name, O.cmd) == 0) {
            fn = CMDS[i].fn;
            needs_count = CMDS[i].needs_count;
            raw = CMDS[i].raw;
        }
    if (!fn)
        die_code(2, "unknown command '%s' (try --help)", O.cmd);
    if (needs_count && O.count < 2)
        die_code(2, "%s needs --count N (N >= 2)", O.cmd);
    if (O.warmup < 0)
        O.warmup = strcmp(O.cmd, "router_par") == 0 ? 1 : 100;

    if (raw) {
        /* --lib is accepted for uniformity but nothing is loaded. */
        snprintf(g_version, sizeof g_version, "none (raw socket)");
        arm_watchdog();
        fprintf(stderr, "zbench: %s: raw sockets, no zmq library\n", O.cmd);
        return fn();
    }
    arm_watchdog(); /* covers dlopen too */
    load_library(O.lib);
    arm_watchdog(); /* again, now that the timeout line has the version */
    fprintf(stderr, "zbench: %s: %s (zmq_version %s)\n", O.cmd, O.lib,
            g_version);
    return fn();
}
