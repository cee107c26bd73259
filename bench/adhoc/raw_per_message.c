/*
 * raw_per_message.c -- how fast can a writer go that must hand each message
 * to the kernel on its own?  (Not a cell of the suite; used for
 * docs/results/2026-12-06-tcp-64k-per-message.md.)  zmq_send may not return
 * before the caller's bytes are written or copied, so a library that does not
 * copy writes once per message; the suite's raw pair (`zbench raw_thr`) packs
 * back-to-back messages into 256 KiB writes.  Over a loopback tcp pair
 * (TCP_NODELAY both ends), a sender thread writes COUNT messages of SIZE
 * bytes, each behind a 9-byte ZMTP long-frame header, in one of these ways;
 * a reader thread takes them with blocking 256 KiB reads.
 *
 *   stream:  the same bytes in 256 KiB writes from one buffer (as zbench
 *            raw_thr, which leaves the headers out)
 *   message: one sendmsg per message, header and body as two iovecs (no copy)
 *   vector4: one sendmsg per four messages, eight iovecs (no copy; what a
 *            library could do only if sends did not have to finish in turn)
 *   copy:    each message copied into a 256 KiB buffer, written when full (what a
 *            library batching across sends would have to do)
 *
 *   gcc -O2 -o raw_per_message raw_per_message.c -lpthread
 *   ./raw_per_message MODE SIZE COUNT     (prints msg/s and syscalls made)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (256 * 1024)
#define HDR 9

static size_t size;
static long count;
static int reader_fd;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void fail(const char *what)
{
    perror(what);
    exit(1);
}

static void *reader(void *reads_out)
{
    size_t want = (size_t)count * (size + HDR), got = 0;
    char *buf = malloc(CHUNK);
    long reads = 0;
    while (got < want) {
        ssize_t n = read(reader_fd, buf, CHUNK);
        if (n <= 0)
            fail("read");
        got += (size_t)n;
        reads++;
    }
    *(long *)reads_out = reads;
    free(buf);
    return NULL;
}

/* Writes every iovec whole, resuming after short writes; returns syscalls. */
static long send_all(int fd, struct iovec *iov, int n)
{
    long calls = 0;
    while (n > 0) {
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(fd, &m, 0);
        if (w < 0)
            fail("sendmsg");
        calls++;
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return calls;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s stream|message|vector4|copy SIZE COUNT\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    size = strtoul(argv[2], NULL, 10);
    count = strtol(argv[3], NULL, 10);

    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 1) < 0
        || getsockname(lfd, (struct sockaddr *)&a, &alen) < 0)
        fail("listen");
    int tx = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(tx, (struct sockaddr *)&a, sizeof a) < 0)
        fail("connect");
    reader_fd = accept(lfd, NULL, NULL);
    int one = 1;
    setsockopt(tx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(reader_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

    unsigned char hdr[HDR] = {2};  /* long frame; the length's value is not read */
    char *body = malloc(size);
    memset(body, 'x', size);
    char *pack = malloc(CHUNK);
    memset(pack, 'x', CHUNK);
    long reads = 0, calls = 0;
    pthread_t t;
    pthread_create(&t, NULL, reader, &reads);
    double t0 = now_s();
    if (strcmp(mode, "stream") == 0) {
        size_t left = (size_t)count * (size + HDR);
        while (left > 0) {
            struct iovec v = {pack, left < CHUNK ? left : CHUNK};
            left -= v.iov_len;
            calls += send_all(tx, &v, 1);
        }
    } else if (strcmp(mode, "copy") == 0) {
        char *batch = malloc(CHUNK + size + HDR);
        size_t fill = 0;
        for (long i = 0; i < count; i++) {
            memcpy(batch + fill, hdr, HDR);
            memcpy(batch + fill + HDR, body, size);
            fill += size + HDR;
            if (fill >= CHUNK || i + 1 == count) {
                struct iovec v = {batch, fill};
                calls += send_all(tx, &v, 1);
                fill = 0;
            }
        }
        free(batch);
    } else if (strcmp(mode, "message") == 0) {
        for (long i = 0; i < count; i++) {
            struct iovec v[2] = {{hdr, HDR}, {body, size}};
            calls += send_all(tx, v, 2);
        }
    } else if (strcmp(mode, "vector4") == 0) {
        for (long i = 0; i < count; i += 4) {
            struct iovec v[8];
            int n = 0;
            for (long k = i; k < count && k < i + 4; k++) {
                v[n++] = (struct iovec){hdr, HDR};
                v[n++] = (struct iovec){body, size};
            }
            calls += send_all(tx, v, n);
        }
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    pthread_join(t, NULL);
    double s = now_s() - t0;
    printf("{\"mode\":\"%s\",\"size\":%zu,\"count\":%ld,\"msg_per_s\":%.1f,"
           "\"sendmsgs\":%ld,\"reads\":%ld}\n",
           mode, size, count, count / s, calls, reads);
    return 0;
}
