/*
 * zraw.c -- the raw-socket ceiling: the same traffic as `thr` and `lat`
 * over a plain TCP (127.0.0.1) or Unix-stream socket pair, no zmq library
 * involved (--lib is accepted but not loaded).  It answers "how close to
 * what the kernel can move on this host does each library get?".
 *
 *   raw_thr: two threads, like `thr`: a sender streams count x size bytes
 *            with large write()s (back-to-back messages packed into 256 KiB
 *            writes; one write per message when a message is larger), a
 *            receiver reads with 256 KiB read()s until it has every byte.
 *   raw_lat: two threads, like `lat`: the client (main thread) writes size
 *            bytes, the echo thread reads them and writes them back;
 *            per-round-trip times, one-way = rtt / 2.
 *
 * TCP_NODELAY is set on both ends (libzmq sets it too).  The connection is
 * established before any timing starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "zbench.h"

#define RAW_CHUNK (256 * 1024)

typedef struct {
    int tx, rx;      /* connected pair: tx = connecting side, rx = accepted */
    char ep[160];    /* tcp://127.0.0.1:port or ipc:///tmp/... (for JSON) */
    char path[108];  /* unix socket path, to unlink */
} raw_pair_t;

static void nodelay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
        die("setsockopt(TCP_NODELAY): %s", strerror(errno));
}

/* Listen, connect, accept: a connected stream pair over the transport. */
static raw_pair_t raw_connect(const char *transport)
{
    raw_pair_t p;
    memset(&p, 0, sizeof p);
    int lfd;
    if (strcmp(transport, "tcp") == 0) {
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        lfd = socket(AF_INET, SOCK_STREAM, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0
            || listen(lfd, 1) < 0
            || getsockname(lfd, (struct sockaddr *)&a, &len) < 0)
            die("tcp listen on 127.0.0.1: %s", strerror(errno));
        snprintf(p.ep, sizeof p.ep, "tcp://127.0.0.1:%d", ntohs(a.sin_port));
        p.tx = socket(AF_INET, SOCK_STREAM, 0);
        if (p.tx < 0 || connect(p.tx, (struct sockaddr *)&a, sizeof a) < 0)
            die("connect(%s): %s", p.ep, strerror(errno));
    } else if (strcmp(transport, "ipc") == 0) {
        static unsigned seq;
        struct sockaddr_un a;
        memset(&a, 0, sizeof a);
        a.sun_family = AF_UNIX;
        snprintf(p.path, sizeof p.path, "/tmp/zbench-raw-%d-%u.sock",
                 (int)getpid(), seq++);
        snprintf(a.sun_path, sizeof a.sun_path, "%s", p.path);
        snprintf(p.ep, sizeof p.ep, "ipc://%s", p.path);
        unlink(p.path);
        lfd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0
            || listen(lfd, 1) < 0)
            die("unix listen on %s: %s", p.path, strerror(errno));
        p.tx = socket(AF_UNIX, SOCK_STREAM, 0);
        if (p.tx < 0 || connect(p.tx, (struct sockaddr *)&a, sizeof a) < 0)
            die("connect(%s): %s", p.path, strerror(errno));
    } else {
        die_code(2, "raw: unknown transport '%s' (tcp, ipc)", transport);
    }
    p.rx = accept(lfd, NULL, NULL);
    if (p.rx < 0)
        die("accept: %s", strerror(errno));
    close(lfd);
    if (strcmp(transport, "tcp") == 0) {
        nodelay(p.tx);
        nodelay(p.rx);
    }
    return p;
}

static void raw_close(raw_pair_t *p)
{
    close(p->tx);
    close(p->rx);
    if (p->path[0])
        unlink(p->path);
}

static void write_all(int fd, const unsigned char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("write: %s", w < 0 ? strerror(errno) : "wrote 0 bytes");
        buf += w;
        n -= (size_t)w;
    }
}

static void read_exact(int fd, unsigned char *buf, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, buf, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            die("read: %s", r < 0 ? strerror(errno) : "peer closed");
        buf += r;
        n -= (size_t)r;
    }
}

/* ------------------------------------------------------------------------ */
/* raw_thr                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct {
    raw_pair_t p;
    size_t per_write;     /* messages per write() */
    uint64_t t_start;     /* sender: before the first write */
    uint64_t t_send_end;
    uint64_t t_first;     /* receiver: first read returned */
    uint64_t t_last;      /* receiver: last byte read */
    uint64_t first_bytes; /* bytes in the first read */
    long writes, reads;
} raw_thr_t;

static void *raw_sender(void *arg)
{
    raw_thr_t *st = arg;
    size_t len = st->per_write * O.size;
    unsigned char *buf = make_payload(len);
    long left = O.count;
    st->t_start = now_ns();
    while (left > 0) {
        long k = left < (long)st->per_write ? left : (long)st->per_write;
        write_all(st->p.tx, buf, (size_t)k * O.size);
        st->writes++;
        left -= k;
    }
    st->t_send_end = now_ns();
    free(buf);
    return NULL;
}

static void *raw_receiver(void *arg)
{
    raw_thr_t *st = arg;
    unsigned char *buf = malloc(RAW_CHUNK);
    if (!buf)
        die("out of memory");
    uint64_t total = (uint64_t)O.count * O.size, got = 0;
    while (got < total) {
        uint64_t want = total - got;
        ssize_t r = read(st->p.rx, buf, want < RAW_CHUNK ? want : RAW_CHUNK);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            die("read after %llu of %llu bytes: %s", (unsigned long long)got,
                (unsigned long long)total,
                r < 0 ? strerror(errno) : "peer closed");
        if (got == 0) {
            st->t_first = now_ns();
            st->first_bytes = (uint64_t)r;
        }
        got += (uint64_t)r;
        st->reads++;
        atomic_store_explicit(&g_progress, (long)(got / O.size),
                              memory_order_relaxed);
    }
    st->t_last = now_ns();
    free(buf);
    return NULL;
}

int cmd_raw_thr(void)
{
    raw_thr_t st;
    memset(&st, 0, sizeof st);
    st.p = raw_connect(O.transport);
    st.per_write = O.size >= RAW_CHUNK ? 1 : RAW_CHUNK / O.size;
    pthread_t rt, sn;
    if (pthread_create(&rt, NULL, raw_receiver, &st) != 0
        || pthread_create(&sn, NULL, raw_sender, &st) != 0)
        die("pthread_create failed");
    pthread_join(sn, NULL);
    pthread_join(rt, NULL);
    raw_close(&st.p);

    /* msg/s = count / (sender's first write -> receiver's last byte), one
     * clock.  The receiver-side window of `thr` (first to last message)
     * is reported too, as rx_window_msg_per_s. */
    uint64_t el = st.t_last - st.t_start;
    if (el == 0)
        el = 1;
    double msgs = (double)O.count * 1e9 / (double)el;
    uint64_t win = st.t_last - st.t_first;
    long after_first = O.count - (long)(st.first_bytes / O.size);
    double rx_win = win ? (double)after_first * 1e9 / (double)win : 0.0;
    json_head(stdout, true);
    printf(",\"pattern\":\"raw\",\"transport\":\"%s\",\"endpoint\":",
           O.transport);
    json_str(stdout, st.p.ep);
    printf(",\"size\":%zu,\"count\":%ld,\"tcp_nodelay\":%s", O.size, O.count,
           strcmp(O.transport, "tcp") == 0 ? "true" : "false");
    printf(",\"write_bytes\":%zu,\"writes\":%ld,\"read_bytes\":%d,"
           "\"reads\":%ld",
           st.per_write * O.size, st.writes, RAW_CHUNK, st.reads);
    printf(",\"send_s\":%.9f,\"rx_window_msg_per_s\":%.3f",
           (st.t_send_end - st.t_start) / 1e9, rx_win);
    printf(",\"elapsed_s\":%.9f,\"e2e_msg_per_s\":%.3f,\"msg_per_s\":%.3f,"
           "\"mbit_per_s\":%.3f}\n",
           el / 1e9, msgs, msgs, msgs * (double)O.size * 8.0 / 1e6);
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* raw_lat                                                                  */
/* ------------------------------------------------------------------------ */

static void *raw_echo(void *arg)
{
    raw_pair_t *p = arg;
    unsigned char *buf = make_payload(O.size);
    for (long i = 0; i < O.warmup + O.count; i++) {
        read_exact(p->rx, buf, O.size);
        write_all(p->rx, buf, O.size);
    }
    free(buf);
    return NULL;
}

int cmd_raw_lat(void)
{
    raw_pair_t p = raw_connect(O.transport);
    pthread_t srv;
    if (pthread_create(&srv, NULL, raw_echo, &p) != 0)
        die("pthread_create failed");
    unsigned char *buf = make_payload(O.size);
    uint64_t *rtt = malloc(sizeof *rtt * (size_t)O.count);
    if (!rtt)
        die("out of memory");
    for (long i = 0; i < O.warmup; i++) {
        write_all(p.tx, buf, O.size);
        read_exact(p.tx, buf, O.size);
    }
    uint64_t start = now_ns();
    for (long i = 0; i < O.count; i++) {
        uint64_t t0 = now_ns();
        write_all(p.tx, buf, O.size);
        read_exact(p.tx, buf, O.size);
        rtt[i] = now_ns() - t0;
        atomic_store_explicit(&g_progress, i + 1, memory_order_relaxed);
    }
    uint64_t loop_ns = now_ns() - start;
    pthread_join(srv, NULL);
    raw_close(&p);
    free(buf);
    char extra[256];
    snprintf(extra, sizeof extra,
             ",\"pattern\":\"raw\",\"transport\":\"%s\",\"mode\":\"threads\","
             "\"tcp_nodelay\":%s",
             O.transport, strcmp(O.transport, "tcp") == 0 ? "true" : "false");
    lat_report(extra, rtt, (size_t)O.count, loop_ns);
    free(rtt);
    return 0;
}
