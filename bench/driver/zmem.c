/*
 * zmem.c -- memory (resident set size) cells.
 *
 *   mem_idle --count N: a ROUTER binds tcp://127.0.0.1; a forked child
 *       opens N raw TCP connections that complete the ZMTP 3.0 handshake
 *       as DEALERs (NULL greeting + READY) and then sit idle.  The ROUTER
 *       process counts ZMQ_EVENT_HANDSHAKE_SUCCEEDED on a socket monitor
 *       until all N are in, waits for its RSS to settle, and reports VmRSS
 *       before bind and after: rss_growth_kib and kib_per_conn.  The
 *       clients live in the child, so their memory is not counted.
 *   mem_slowsub --size B --count N: PUB (this process) binds, SUB (forked
 *       child, its own context) connects, subscribes, receives the first
 *       message and never reads again.  PUB sends N messages with
 *       ZMQ_DONTWAIT at the library's default HWM (PUB drops at HWM).  Each
 *       process reports its own RSS growth once it has settled.
 *
 * RSS is VmRSS from /proc/self/status, in KiB.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zbench.h"

static long status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        die("open /proc/self/status: %s", strerror(errno));
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            v = strtol(line + n + 1, NULL, 10);
            break;
        }
    fclose(f);
    if (v < 0)
        die("no %s in /proc/self/status", key);
    return v;
}

static long rss_kib(void) { return status_kib("VmRSS"); }

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/* Wait until VmRSS has not changed for `quiet` consecutive 100 ms samples
 * (at most max_ms); returns it.  Library I/O threads may still be moving
 * data when the application thread is done. */
static long settled_rss(int quiet, long max_ms)
{
    long last = rss_kib();
    int same = 0;
    for (long t = 0; t < max_ms && same < quiet; t += 100) {
        sleep_ms(100);
        long now = rss_kib();
        same = now == last ? same + 1 : 0;
        last = now;
    }
    return last;
}

/* Raise RLIMIT_NOFILE to at least `need` (soft, and hard if allowed). */
static void raise_nofile(long need)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        die("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
    if ((long)rl.rlim_cur >= need)
        return;
    if ((long)rl.rlim_max < need)
        rl.rlim_max = (rlim_t)need;
    rl.rlim_cur = (rlim_t)need;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        die_code(2,
                 "need %ld file descriptors but RLIMIT_NOFILE cannot be "
                 "raised (%s); run `ulimit -n %ld` first or use a smaller "
                 "--count",
                 need, strerror(errno), need);
}

static void xwrite(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("write: %s", w < 0 ? strerror(errno) : "short");
        p += w;
        n -= (size_t)w;
    }
}

/* Read exactly n bytes; false on EOF or error. */
static bool xread(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

/* Fork a helper child: it dies with the parent, and anything it would print
 * on stdout goes to stderr (the parent prints the one JSON line). */
static pid_t fork_child(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(2, 1);
        if (O.timeout_s > 0)
            alarm((unsigned)O.timeout_s);
    }
    return pid;
}

static void reap_child(pid_t pid, bool kill_it)
{
    if (kill_it)
        kill(pid, SIGKILL);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

/* ------------------------------------------------------------------------ */
/* mem_idle                                                                 */
/* ------------------------------------------------------------------------ */

#define IDLE_BATCH 32

/* ZMTP 3.0 greeting, NULL mechanism, as-server 0 (64 bytes). */
static void zmtp_greeting(unsigned char g[64])
{
    memset(g, 0, 64);
    g[0] = 0xFF;
    g[9] = 0x7F;
    g[10] = 3; /* version major */
    g[11] = 0; /* version minor: ZMTP 3.0 */
    memcpy(g + 12, "NULL", 4);
}

/* READY command with Socket-Type DEALER; returns its length. */
static size_t zmtp_ready(unsigned char *b)
{
    size_t n = 2;
    b[n++] = 5;
    memcpy(b + n, "READY", 5), n += 5;
    b[n++] = 11;
    memcpy(b + n, "Socket-Type", 11), n += 11;
    b[n++] = 0, b[n++] = 0, b[n++] = 0, b[n++] = 6;
    memcpy(b + n, "DEALER", 6), n += 6;
    b[0] = 0x04; /* command, short frame */
    b[1] = (unsigned char)(n - 2);
    return n;
}

/* Read the peer's greeting and its READY command; false if malformed. */
static bool zmtp_read_peer(int fd)
{
    unsigned char g[64], h[9], body[256];
    if (!xread(fd, g, 64) || g[0] != 0xFF || g[9] != 0x7F || g[10] < 3)
        return false;
    if (!xread(fd, h, 2) || !(h[0] & 0x04))
        return false;
    uint64_t len = h[1];
    if (h[0] & 0x02) { /* long frame: 8-byte size */
        if (!xread(fd, h + 2, 7))
            return false;
        len = 0;
        for (int i = 1; i < 9; i++)
            len = (len << 8) | h[i];
    }
    if (len < 6 || len > sizeof body || !xread(fd, body, (size_t)len))
        return false;
    return body[0] == 5 && memcmp(body + 1, "READY", 5) == 0;
}

/* Child: open `count` handshaken idle connections to 127.0.0.1:port, in
 * batches (connect + send a batch, then read the peers' greetings), report
 * "ok" or an error on `out`, then sit idle until the parent goes away. */
static void idle_clients(int port, long count, int out, int in)
{
    int *fds = malloc(sizeof *fds * (size_t)count);
    if (!fds)
        _exit(3);
    unsigned char greet[64], ready[64];
    zmtp_greeting(greet);
    size_t rlen = zmtp_ready(ready);
    unsigned char hello[128];
    memcpy(hello, greet, 64);
    memcpy(hello + 64, ready, rlen);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    char err[200] = "";
    for (long i = 0; i < count && !err[0]; i += IDLE_BATCH) {
        long end = i + IDLE_BATCH < count ? i + IDLE_BATCH : count;
        for (long k = i; k < end && !err[0]; k++) {
            fds[k] = socket(AF_INET, SOCK_STREAM, 0);
            if (fds[k] < 0
                || connect(fds[k], (struct sockaddr *)&a, sizeof a) < 0)
                snprintf(err, sizeof err, "connection %ld: %s", k + 1,
                         strerror(errno));
            else if (write(fds[k], hello, 64 + rlen) != (ssize_t)(64 + rlen))
                snprintf(err, sizeof err, "connection %ld: short write", k + 1);
        }
        for (long k = i; k < end && !err[0]; k++)
            if (!zmtp_read_peer(fds[k]))
                snprintf(err, sizeof err,
                         "connection %ld: no ZMTP greeting/READY from the "
                         "ROUTER", k + 1);
    }
    char msg[256];
    int n = snprintf(msg, sizeof msg, "%s\n", err[0] ? err : "ok");
    xwrite(out, msg, (size_t)n);
    char c;
    while (read(in, &c, 1) > 0) /* until the parent closes (or dies) */
        ;
    _exit(0);
}

int cmd_mem_idle(void)
{
    long count = O.count;
    raise_nofile(count + 256); /* inherited by the child */
    int p2c[2], c2p[2];
    if (pipe(p2c) < 0 || pipe(c2p) < 0)
        die("pipe: %s", strerror(errno));
    pid_t pid = fork_child();
    if (pid == 0) {
        close(p2c[1]);
        close(c2p[0]);
        int port;
        if (!xread(p2c[0], &port, sizeof port))
            _exit(0);
        idle_clients(port, count, c2p[1], p2c[0]);
    }
    close(p2c[0]);
    close(c2p[1]);

    void *ctx, *router, *mon;
    ZPTR(Z.ctx_new(), ctx);
    ZPTR(Z.socket(ctx, ZB_ROUTER), router);
    set_int(router, ZB_LINGER, 0, "zmq_setsockopt(ZMQ_LINGER)");
    char mep[96];
    snprintf(mep, sizeof mep, "inproc://zbench-mon-%d", (int)getpid());
    ZCHK(Z.socket_monitor(router, mep, ZB_EVENT_HANDSHAKE_SUCCEEDED));
    ZPTR(Z.socket(ctx, ZB_PAIR), mon);
    ZCHK(Z.connect(mon, mep));
    long rss0 = settled_rss(2, 1000);
    long anon0 = status_kib("RssAnon");

    char ep[64];
    int port = 0;
    for (int attempt = 0;; attempt++) {
        port = free_tcp_port();
        snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
        if (Z.bind(router, ep) == 0)
            break;
        if (Z.errno_() != EADDRINUSE || attempt >= 10)
            zfail("zmq_bind(ROUTER)", __LINE__);
    }
    long rss_bound = rss_kib();
    uint64_t t0 = now_ns();
    xwrite(p2c[1], &port, sizeof port);

    /* Count handshakes on the monitor (event frame: u16 event, u32 value;
     * then the address frame); fail if nothing happens for 20 s. */
    long seen = 0;
    bool child_ok = false;
    uint64_t last_progress = now_ns();
    zb_msg_t m;
    ZCHK(Z.msg_init(&m));
    char cmsg[256] = "";
    size_t clen = 0;
    while (seen < count || !child_ok) {
        zb_pollitem_t items[2] = {{mon, 0, ZB_POLLIN, 0},
                                  {NULL, c2p[0], ZB_POLLIN, 0}};
        int nitems = child_ok ? 1 : 2;
        int rc = Z.poll(items, nitems, 200);
        if (rc == -1 && Z.errno_() != EINTR)
            zfail("zmq_poll(monitor)", __LINE__);
        if (rc > 0 && (items[0].revents & ZB_POLLIN)) {
            for (;;) {
                if (Z.msg_recv(&m, mon, ZB_DONTWAIT) == -1) {
                    if (Z.errno_() == EAGAIN)
                        break;
                    zfail("zmq_msg_recv(monitor)", __LINE__);
                }
                uint16_t ev = 0;
                if (Z.msg_size(&m) >= 2)
                    memcpy(&ev, Z.msg_data(&m), 2);
                bool more = Z.msg_more(&m);
                while (more) { /* address frame */
                    ZCHK(Z.msg_recv(&m, mon, 0));
                    more = Z.msg_more(&m);
                }
                if (ev == ZB_EVENT_HANDSHAKE_SUCCEEDED) {
                    seen++;
                    last_progress = now_ns();
                    atomic_store(&g_progress, seen);
                }
            }
        }
        if (nitems == 2 && (items[1].revents & ZB_POLLIN)) {
            ssize_t r = read(c2p[0], cmsg + clen, sizeof cmsg - 1 - clen);
            if (r <= 0)
                die("idle clients exited early after %ld handshakes", seen);
            clen += (size_t)r;
            cmsg[clen] = 0;
            if (strchr(cmsg, '\n')) {
                *strchr(cmsg, '\n') = 0;
                if (strcmp(cmsg, "ok") != 0)
                    die("idle clients: %s (RLIMIT_NOFILE, ports?)", cmsg);
                child_ok = true;
            }
        }
        if (now_ns() - last_progress > 20000000000ull)
            die("only %ld of %ld handshakes after 20 s without progress "
                "(monitor events: HANDSHAKE_SUCCEEDED)",
                seen, count);
    }
    double handshake_s = (now_ns() - t0) / 1e9;
    long rss_hs = rss_kib();
    long rss1 = settled_rss(3, 3000);
    long anon1 = status_kib("RssAnon");

    reap_child(pid, true);
    close(p2c[1]);
    close(c2p[0]);
    ZCHK(Z.msg_close(&m));
    ZCHK(Z.close(mon));
    ZCHK(Z.close(router));
    ZCHK(Z.ctx_term(ctx));

    long growth = rss1 - rss0;
    json_head(stdout, true);
    printf(",\"case\":\"idle\",\"transport\":\"tcp\",\"endpoint\":\"%s\","
           "\"count\":%ld,\"handshakes\":%ld,\"handshake_s\":%.3f",
           ep, count, seen, handshake_s);
    printf(",\"rss_before_kib\":%ld,\"rss_bound_kib\":%ld,"
           "\"rss_handshaken_kib\":%ld,\"rss_after_kib\":%ld,"
           "\"anon_before_kib\":%ld,\"anon_after_kib\":%ld",
           rss0, rss_bound, rss_hs, rss1, anon0, anon1);
    printf(",\"rss_growth_kib\":%ld,\"kib_per_conn\":%.3f}\n", growth,
           (double)growth / (double)count);
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* mem_slowsub                                                              */
/* ------------------------------------------------------------------------ */

/* Child: SUB that reads one message and then never again.  Protocol on the
 * pipes: parent -> child "endpoint\n"; child -> parent "first\n" once it
 * has a message; parent -> child "m"; child -> parent "<before> <after>
 * <rcvhwm>\n" (KiB); then the child waits for EOF. */
static void slow_sub(int in, int out)
{
    char ep[128];
    size_t n = 0;
    while (n < sizeof ep - 1 && xread(in, ep + n, 1) && ep[n] != '\n')
        n++;
    ep[n] = 0;
    void *ctx, *sub;
    ZPTR(Z.ctx_new(), ctx);
    ZPTR(Z.socket(ctx, ZB_SUB), sub);
    set_int(sub, ZB_LINGER, 0, "zmq_setsockopt(ZMQ_LINGER)");
    long before = settled_rss(2, 1000);
    ZCHK(Z.connect(sub, ep));
    ZCHK(Z.setsockopt(sub, ZB_SUBSCRIBE, "", 0));
    zb_msg_t m;
    ZCHK(Z.msg_init(&m));
    ZCHK(Z.msg_recv(&m, sub, 0));
    ZCHK(Z.msg_close(&m));
    xwrite(out, "first\n", 6);
    char c;
    if (!xread(in, &c, 1))
        _exit(0);
    long after = settled_rss(5, 5000);
    char buf[96];
    int k = snprintf(buf, sizeof buf, "%ld %ld %d\n", before, after,
                     get_int(sub, ZB_RCVHWM, "zmq_getsockopt(ZMQ_RCVHWM)"));
    xwrite(out, buf, (size_t)k);
    while (read(in, &c, 1) > 0)
        ;
    _exit(0); /* no zmq_close / ctx_term: the parent measured already */
}

int cmd_mem_slowsub(void)
{
    int p2c[2], c2p[2];
    if (pipe(p2c) < 0 || pipe(c2p) < 0)
        die("pipe: %s", strerror(errno));
    pid_t pid = fork_child(); /* before any zmq context exists */
    if (pid == 0) {
        close(p2c[1]);
        close(c2p[0]);
        slow_sub(p2c[0], c2p[1]);
    }
    close(p2c[0]);
    close(c2p[1]);

    void *ctx, *pub;
    ZPTR(Z.ctx_new(), ctx);
    ZPTR(Z.socket(ctx, ZB_PUB), pub);
    set_int(pub, ZB_LINGER, 0, "zmq_setsockopt(ZMQ_LINGER)");
    char ep[64];
    for (int attempt = 0;; attempt++) {
        snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", free_tcp_port());
        if (Z.bind(pub, ep) == 0)
            break;
        if (Z.errno_() != EADDRINUSE || attempt >= 10)
            zfail("zmq_bind(PUB)", __LINE__);
    }
    int sndhwm = get_int(pub, ZB_SNDHWM, "zmq_getsockopt(ZMQ_SNDHWM)");
    long before = settled_rss(2, 1000);
    char line[160];
    int k = snprintf(line, sizeof line, "%s\n", ep);
    xwrite(p2c[1], line, (size_t)k);

    /* Settle: one-byte probes every 1 ms until the SUB has one. */
    static const unsigned char probe = 'P';
    long probes = 0;
    char got[8];
    for (;;) {
        if (Z.send(pub, &probe, 1, ZB_DONTWAIT) != -1)
            probes++;
        struct pollfd pf = {c2p[0], POLLIN, 0};
        if (poll(&pf, 1, 1) > 0) {
            if (!xread(c2p[0], got, 6) || memcmp(got, "first\n", 6) != 0)
                die("SUB process failed before its first message");
            break;
        }
    }
    unsigned char *buf = make_payload(O.size);
    long eagain = 0;
    uint64_t t0 = now_ns();
    for (long i = 0; i < O.count; i++) {
        if (Z.send(pub, buf, O.size, ZB_DONTWAIT) == -1) {
            if (Z.errno_() != EAGAIN && Z.errno_() != EINTR)
                zfail("zmq_send(PUB, ZMQ_DONTWAIT)", __LINE__);
            eagain++;
        }
        atomic_store_explicit(&g_progress, i + 1, memory_order_relaxed);
    }
    double send_s = (now_ns() - t0) / 1e9;
    long after = settled_rss(5, 5000);
    xwrite(p2c[1], "m", 1);
    char reply[96];
    size_t n = 0;
    while (n < sizeof reply - 1 && xread(c2p[0], reply + n, 1)
           && reply[n] != '\n')
        n++;
    reply[n] = 0;
    long sub_before = -1, sub_after = -1;
    int rcvhwm = -1;
    if (sscanf(reply, "%ld %ld %d", &sub_before, &sub_after, &rcvhwm) != 3)
        die("SUB process gave no RSS report ('%s')", reply);
    close(p2c[1]);
    reap_child(pid, false);
    close(c2p[0]);
    free(buf);
    ZCHK(Z.close(pub));
    ZCHK(Z.ctx_term(ctx));

    json_head(stdout, true);
    printf(",\"case\":\"slowsub\",\"transport\":\"tcp\",\"endpoint\":\"%s\","
           "\"size\":%zu,\"count\":%ld,\"sndhwm\":%d,\"rcvhwm\":%d,"
           "\"probes_sent\":%ld,\"eagain\":%ld,\"send_s\":%.6f",
           ep, O.size, O.count, sndhwm, rcvhwm, probes, eagain, send_s);
    printf(",\"pub_rss_before_kib\":%ld,\"pub_rss_after_kib\":%ld,"
           "\"sub_rss_before_kib\":%ld,\"sub_rss_after_kib\":%ld",
           before, after, sub_before, sub_after);
    printf(",\"rss_growth_kib\":%ld,\"pub_rss_growth_kib\":%ld,"
           "\"sub_rss_growth_kib\":%ld}\n",
           (after - before) + (sub_after - sub_before), after - before,
           sub_after - sub_before);
    fflush(stdout);
    return 0;
}
