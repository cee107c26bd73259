/* Context options 0-79 on a fresh context each: the read, a set of 1, the read after;
 * then zmq_has for the capability names. */
#include <stdio.h>
#include <zmq.h>

int main(void) {
    for (int opt = 0; opt < 80; opt++) {
        void *ctx = zmq_ctx_new();
        int before = zmq_ctx_get(ctx, opt);
        int rc = zmq_ctx_set(ctx, opt, 1);
        int e = rc ? zmq_errno() : 0;
        int after = zmq_ctx_get(ctx, opt);
        printf("ctx opt=%d get=%d set1=%d/%d after=%d\n", opt, before, rc, e, after);
        zmq_ctx_term(ctx);
    }
    const char *caps[] = {"ipc", "pgm", "tipc", "norm", "curve", "gssapi",
                          "draft", "ws", "wss", "vmci", "udp", "nonsense"};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        printf("has %s=%d\n", caps[i], zmq_has(caps[i]));
    return 0;
}
