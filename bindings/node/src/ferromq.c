/*
 * ferromq Node.js addon: a thin N-API layer over the libzmq C ABI (libzmq.so.5, ferromq's
 * or any libzmq 4.3), designed so that the per-message path has no Promise, no thread hop
 * and no per-message N-API round trip:
 *
 *  - each socket's ZMQ_FD is watched with a uv_poll_t on the Node event loop (no helper
 *    thread); the poll callback calls one JS dispatcher, which drains the socket in batches;
 *  - _recv(max, budget) receives as many messages as are available (ZMQ_DONTWAIT) up to
 *    a count/byte budget; the frame table goes to a Uint32Array shared with JS and the
 *    bytes of small frames into a slab ArrayBuffer that successive receives fill (no
 *    ArrayBuffer allocation per receive); frames larger than BIG_FRAME bytes come back as
 *    separate Buffers;
 *  - _send(msg) tries ZMQ_DONTWAIT and reports EAGAIN as `false` instead of throwing;
 *    _sendMany(array, start, end) queues as many messages as fit in one call.
 *
 * ZMQ_FD is edge-triggered: the JS side reads ZMQ_EVENTS (_events()) after every wake and
 * after operations, and keeps draining while it reports readiness.
 *
 * The JS part (index.js) builds the zeromq.js-v6-shaped API on top of the natives here.
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <uv.h>
#include <zmq.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG_FRAME 2048           /* frames above this are delivered as their own Buffer */
/* Small received frames are copied into slabs of this size (a batch larger than this gets
 * a slab of its own). Bigger slabs mean fewer allocations, but a retained small message
 * keeps its whole slab alive. */
#define SLAB_SIZE 65536
#define BIG_FLAG 0x80000000u
#define STACK_STR 1024

typedef struct ctx_s ctx_t;
typedef struct sock_s sock_t;

typedef struct {
    napi_ref dispatch;           /* JS function(socket) called when a socket's fd fires */
    napi_ref sock_ctor, ctx_ctor;
    zmq_msg_t *frames;           /* receive scratch (grown on demand) */
    uint32_t *meta;
    size_t frames_cap, meta_cap;
    napi_ref state;              /* JS object {meta, slab} that _recv results are read from */
    napi_ref meta_ab, slab_ab;   /* the ArrayBuffers behind state.meta and state.slab */
    uint32_t *meta_js;           /* state.meta's words (meta_js_cap of them) */
    size_t meta_js_cap;
    char *slab;                  /* state.slab's bytes: slab_used of slab_cap are handed out */
    size_t slab_cap, slab_used;
    sock_t *socks;               /* every open socket, for env teardown */
    ctx_t *ctxs;
} inst_t;

struct ctx_s {
    void *z;
    napi_ref wrapper;
    ctx_t *next, *prev;
    int linked;
};

struct sock_s {
    void *z;
    napi_env env;
    inst_t *inst;
    void *zctx;
    napi_ref self;               /* weak while idle; strong while the poll is ref'd */
    uv_poll_t poll;
    int poll_init;               /* uv handle initialised and not yet closed */
    int poll_started;
    int poll_refd;
    int finalized;               /* JS wrapper gone */
    sock_t *next, *prev;
    int linked;
};

/* ---------------------------------------------------------------------------------- */
/* errors                                                                              */

static const char *errno_name(int e)
{
    switch (e) {
    case EAGAIN: return "EAGAIN";
    case EINVAL: return "EINVAL";
    case EINTR: return "EINTR";
    case EFAULT: return "EFAULT";
    case ENOMEM: return "ENOMEM";
    case ENODEV: return "ENODEV";
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case EMFILE: return "EMFILE";
    case EBADF: return "EBADF";
    case ENOTSUP: return "ENOTSUP";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
    case ENOBUFS: return "ENOBUFS";
    case ENETDOWN: return "ENETDOWN";
    case EADDRINUSE: return "EADDRINUSE";
    case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EINPROGRESS: return "EINPROGRESS";
    case ENOTSOCK: return "ENOTSOCK";
    case EMSGSIZE: return "EMSGSIZE";
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    case ENETUNREACH: return "ENETUNREACH";
    case ECONNABORTED: return "ECONNABORTED";
    case ECONNRESET: return "ECONNRESET";
    case ENOTCONN: return "ENOTCONN";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    case ENETRESET: return "ENETRESET";
    case EFSM: return "EFSM";
    case ENOCOMPATPROTO: return "ENOCOMPATPROTO";
    case ETERM: return "ETERM";
    case EMTHREAD: return "EMTHREAD";
    default: return "EUNKNOWN";
    }
}

/* Throws an Error with .code (errno name) and .errno (number). */
static napi_value throw_errno(napi_env env, int e)
{
    napi_value code, msg, err, num;
    napi_create_string_utf8(env, errno_name(e), NAPI_AUTO_LENGTH, &code);
    napi_create_string_utf8(env, zmq_strerror(e), NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, code, msg, &err);
    napi_create_int32(env, e, &num);
    napi_set_named_property(env, err, "errno", num);
    napi_throw(env, err);
    return NULL;
}

static napi_value throw_closed(napi_env env)
{
    return throw_errno(env, EBADF);
}

#define CHECK(call)                                                                     \
    do {                                                                                \
        if ((call) != napi_ok) {                                                        \
            const napi_extended_error_info *ei_;                                        \
            napi_get_last_error_info(env, &ei_);                                        \
            bool pending_;                                                              \
            napi_is_exception_pending(env, &pending_);                                  \
            if (!pending_)                                                              \
                napi_throw_error(env, NULL, ei_ && ei_->error_message ? ei_->error_message \
                                                                    : "N-API call failed"); \
            return NULL;                                                                \
        }                                                                               \
    } while (0)

/* ---------------------------------------------------------------------------------- */
/* lists                                                                               */

static void sock_link(inst_t *I, sock_t *s)
{
    s->prev = NULL;
    s->next = I->socks;
    if (I->socks) I->socks->prev = s;
    I->socks = s;
    s->linked = 1;
}

static void sock_unlink(inst_t *I, sock_t *s)
{
    if (!s->linked) return;
    if (s->prev) s->prev->next = s->next; else I->socks = s->next;
    if (s->next) s->next->prev = s->prev;
    s->linked = 0;
}

static void ctx_link(inst_t *I, ctx_t *c)
{
    c->prev = NULL;
    c->next = I->ctxs;
    if (I->ctxs) I->ctxs->prev = c;
    I->ctxs = c;
    c->linked = 1;
}

static void ctx_unlink(inst_t *I, ctx_t *c)
{
    if (!c->linked) return;
    if (c->prev) c->prev->next = c->next; else I->ctxs = c->next;
    if (c->next) c->next->prev = c->prev;
    c->linked = 0;
}

/* ---------------------------------------------------------------------------------- */
/* socket lifetime                                                                     */

static void poll_closed_cb(uv_handle_t *h)
{
    sock_t *s = (sock_t *)h->data;
    s->poll_init = 0;
    if (s->finalized) free(s);
}

/* Closes the zmq socket and the poll handle; idempotent. The struct itself is freed once
 * both the JS wrapper is finalized and the uv handle has finished closing. */
static void sock_close(sock_t *s)
{
    if (!s->z) return;
    if (s->poll_init) {
        uv_poll_stop(&s->poll);     /* removes the fd from epoll before zmq closes it */
        s->poll_started = 0;
        uv_close((uv_handle_t *)&s->poll, poll_closed_cb);
    }
    zmq_close(s->z);
    s->z = NULL;
    sock_unlink(s->inst, s);
    if (s->poll_refd && s->self && !s->finalized) {
        uint32_t rc;
        napi_reference_unref(s->env, s->self, &rc);
    }
    s->poll_refd = 0;
}

static void sock_finalize(napi_env env, void *data, void *hint)
{
    (void)hint;
    sock_t *s = (sock_t *)data;
    s->finalized = 1;
    sock_close(s);
    if (s->self) {
        napi_delete_reference(env, s->self);
        s->self = NULL;
    }
    if (!s->poll_init) free(s);
}

static sock_t *this_sock(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv,
                         napi_value *thisv, int need_open)
{
    napi_value t;
    void *p = NULL;
    if (napi_get_cb_info(env, info, argc, argv, &t, NULL) != napi_ok) return NULL;
    if (napi_unwrap(env, t, &p) != napi_ok || !p) {
        napi_throw_type_error(env, NULL, "not a socket");
        return NULL;
    }
    if (thisv) *thisv = t;
    sock_t *s = (sock_t *)p;
    if (need_open && !s->z) {
        throw_closed(env);
        return NULL;
    }
    return s;
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    (void)status;
    (void)events;
    sock_t *s = (sock_t *)h->data;
    if (!s->z || s->finalized || !s->self) return;
    napi_env env = s->env;
    napi_handle_scope scope;
    if (napi_open_handle_scope(env, &scope) != napi_ok) return;
    napi_value self, fn, global;
    if (napi_get_reference_value(env, s->self, &self) == napi_ok && self &&
        napi_get_reference_value(env, s->inst->dispatch, &fn) == napi_ok && fn) {
        napi_get_global(env, &global);
        napi_status st = napi_make_callback(env, NULL, global, fn, 1, &self, NULL);
        if (st != napi_ok) {
            bool pending = false;
            napi_is_exception_pending(env, &pending);
            if (pending) {
                napi_value exc;
                napi_get_and_clear_last_exception(env, &exc);
                napi_fatal_exception(env, exc);
            }
        }
    }
    napi_close_handle_scope(env, scope);
}

/* ---------------------------------------------------------------------------------- */
/* Context                                                                             */

static void ctx_finalize(napi_env env, void *data, void *hint)
{
    (void)env;
    (void)hint;
    ctx_t *c = (ctx_t *)data;
    inst_t *I = NULL;
    napi_get_instance_data(env, (void **)&I);
    /* JS sockets keep their context alive, so any socket of this context left is being
     * collected in the same GC cycle: close it first or zmq_ctx_term would wait forever. */
    if (c->z) {
        for (sock_t *s = I ? I->socks : NULL, *n; s; s = n) {
            n = s->next;
            if (s->zctx == c->z) sock_close(s);
        }
        while (zmq_ctx_term(c->z) < 0 && zmq_errno() == EINTR) {
        }
        c->z = NULL;
    }
    if (I) ctx_unlink(I, c);
    free(c);
}

static napi_value ctx_new(napi_env env, napi_callback_info info)
{
    napi_value t;
    CHECK(napi_get_cb_info(env, info, NULL, NULL, &t, NULL));
    inst_t *I;
    CHECK(napi_get_instance_data(env, (void **)&I));
    ctx_t *c = calloc(1, sizeof *c);
    if (!c) return throw_errno(env, ENOMEM);
    c->z = zmq_ctx_new();
    if (!c->z) {
        free(c);
        return throw_errno(env, zmq_errno());
    }
    /* non-blocking context: sockets default to linger 0 and zmq_ctx_term never hangs
     * at process exit unless the application asked for a linger */
    zmq_ctx_set(c->z, ZMQ_BLOCKY, 0);
    if (napi_wrap(env, t, c, ctx_finalize, NULL, NULL) != napi_ok) {
        zmq_ctx_term(c->z);
        free(c);
        return NULL;
    }
    ctx_link(I, c);
    return t;
}

static ctx_t *this_ctx(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv)
{
    napi_value t;
    void *p = NULL;
    if (napi_get_cb_info(env, info, argc, argv, &t, NULL) != napi_ok) return NULL;
    if (napi_unwrap(env, t, &p) != napi_ok || !p) {
        napi_throw_type_error(env, NULL, "not a context");
        return NULL;
    }
    ctx_t *c = p;
    if (!c->z) {
        throw_errno(env, ETERM);
        return NULL;
    }
    return c;
}

static napi_value ctx_set(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    ctx_t *c = this_ctx(env, info, &argc, argv);
    if (!c) return NULL;
    int32_t opt, val;
    CHECK(napi_get_value_int32(env, argv[0], &opt));
    CHECK(napi_get_value_int32(env, argv[1], &val));
    if (zmq_ctx_set(c->z, opt, val) < 0) return throw_errno(env, zmq_errno());
    return NULL;
}

static napi_value ctx_get(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], r;
    ctx_t *c = this_ctx(env, info, &argc, argv);
    if (!c) return NULL;
    int32_t opt;
    CHECK(napi_get_value_int32(env, argv[0], &opt));
    int v = zmq_ctx_get(c->z, opt);
    if (v < 0) return throw_errno(env, zmq_errno());
    napi_create_int32(env, v, &r);
    return r;
}

/* term(): closes every socket of this context still open, then zmq_ctx_term (blocks
 * until lingering messages are flushed, per each socket's ZMQ_LINGER). */
static napi_value ctx_term(napi_env env, napi_callback_info info)
{
    size_t argc = 0;
    napi_value t;
    void *p = NULL;
    CHECK(napi_get_cb_info(env, info, &argc, NULL, &t, NULL));
    if (napi_unwrap(env, t, &p) != napi_ok || !p) return NULL;
    ctx_t *c = p;
    if (!c->z) return NULL;
    inst_t *I;
    CHECK(napi_get_instance_data(env, (void **)&I));
    for (sock_t *s = I->socks, *n; s; s = n) {
        n = s->next;
        if (s->zctx == c->z) sock_close(s);
    }
    while (zmq_ctx_term(c->z) < 0 && zmq_errno() == EINTR) {
    }
    c->z = NULL;
    ctx_unlink(I, c);
    return NULL;
}

/* ---------------------------------------------------------------------------------- */
/* Socket                                                                              */

/* new NativeSocket(context, type) */
static napi_value sock_new(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2], t;
    CHECK(napi_get_cb_info(env, info, &argc, argv, &t, NULL));
    if (argc < 2) {
        napi_throw_type_error(env, NULL, "NativeSocket(context, type)");
        return NULL;
    }
    inst_t *I;
    CHECK(napi_get_instance_data(env, (void **)&I));
    void *cp = NULL;
    if (napi_unwrap(env, argv[0], &cp) != napi_ok || !cp) {
        napi_throw_type_error(env, NULL, "context expected");
        return NULL;
    }
    ctx_t *c = cp;
    if (!c->z) return throw_errno(env, ETERM);
    int32_t type;
    CHECK(napi_get_value_int32(env, argv[1], &type));
    sock_t *s = calloc(1, sizeof *s);
    if (!s) return throw_errno(env, ENOMEM);
    s->z = zmq_socket(c->z, type);
    if (!s->z) {
        int e = zmq_errno();
        free(s);
        return throw_errno(env, e);
    }
    s->env = env;
    s->inst = I;
    s->zctx = c->z;
    s->poll.data = s;
    if (napi_wrap(env, t, s, sock_finalize, NULL, &s->self) != napi_ok) {
        zmq_close(s->z);
        free(s);
        return NULL;
    }
    sock_link(I, s);
    return t;
}

/* _watch(active): makes sure the fd is polled; `active` says whether the poll should keep
 * the event loop alive (uv_ref) and pin the JS object. Starting happens once; later calls
 * only flip ref/unref, so per-message interest changes cost no syscall. */
static napi_value sock_watch(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    bool active = true;
    if (argc >= 1) napi_get_value_bool(env, argv[0], &active);
    if (!s->poll_init) {
        int fd;
        size_t sz = sizeof fd;
        if (zmq_getsockopt(s->z, ZMQ_FD, &fd, &sz) < 0) return throw_errno(env, zmq_errno());
        uv_loop_t *loop;
        CHECK(napi_get_uv_event_loop(env, &loop));
        int rc = uv_poll_init(loop, &s->poll, fd);
        if (rc < 0) {
            napi_throw_error(env, NULL, uv_strerror(rc));
            return NULL;
        }
        s->poll.data = s;
        s->poll_init = 1;
        uv_unref((uv_handle_t *)&s->poll);
    }
    if (!s->poll_started) {
        int rc = uv_poll_start(&s->poll, UV_READABLE, on_poll);
        if (rc < 0) {
            napi_throw_error(env, NULL, uv_strerror(rc));
            return NULL;
        }
        s->poll_started = 1;
    }
    if (active && !s->poll_refd) {
        uint32_t rc;
        uv_ref((uv_handle_t *)&s->poll);
        napi_reference_ref(env, s->self, &rc);
        s->poll_refd = 1;
    } else if (!active && s->poll_refd) {
        uint32_t rc;
        uv_unref((uv_handle_t *)&s->poll);
        napi_reference_unref(env, s->self, &rc);
        s->poll_refd = 0;
    }
    return NULL;
}

static napi_value sock_close_js(napi_env env, napi_callback_info info)
{
    size_t argc = 0;
    sock_t *s = this_sock(env, info, &argc, NULL, NULL, 0);
    if (!s) return NULL;
    sock_close(s);
    return NULL;
}

static napi_value sock_events(napi_env env, napi_callback_info info)
{
    size_t argc = 0;
    napi_value r;
    sock_t *s = this_sock(env, info, &argc, NULL, NULL, 1);
    if (!s) return NULL;
    int ev = 0;
    size_t sz = sizeof ev;
    if (zmq_getsockopt(s->z, ZMQ_EVENTS, &ev, &sz) < 0) return throw_errno(env, zmq_errno());
    napi_create_int32(env, ev, &r);
    return r;
}

/* endpoint operations: _bind/_unbind/_connect/_disconnect(endpoint) */
typedef int (*ep_fn)(void *, const char *);

static napi_value ep_op(napi_env env, napi_callback_info info, ep_fn fn)
{
    size_t argc = 1;
    napi_value argv[1];
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    char buf[1024];
    size_t len;
    if (argc < 1 || napi_get_value_string_utf8(env, argv[0], buf, sizeof buf, &len) != napi_ok) {
        napi_throw_type_error(env, NULL, "endpoint must be a string");
        return NULL;
    }
    if (len >= sizeof buf - 1) return throw_errno(env, EINVAL);
    if (fn(s->z, buf) < 0) return throw_errno(env, zmq_errno());
    return NULL;
}

static napi_value sock_bind(napi_env e, napi_callback_info i) { return ep_op(e, i, zmq_bind); }
static napi_value sock_unbind(napi_env e, napi_callback_info i) { return ep_op(e, i, zmq_unbind); }
static napi_value sock_connect(napi_env e, napi_callback_info i) { return ep_op(e, i, zmq_connect); }
static napi_value sock_disconnect(napi_env e, napi_callback_info i)
{
    return ep_op(e, i, zmq_disconnect);
}

/* options: _getInt(opt), _setInt(opt, v), _getInt64, _setInt64, _getBuf(opt) -> Buffer,
 * _setBuf(opt, string|Buffer|null) */
static napi_value sock_get_int(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], r;
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    int32_t opt;
    CHECK(napi_get_value_int32(env, argv[0], &opt));
    int v = 0;
    size_t sz = sizeof v;
    if (zmq_getsockopt(s->z, opt, &v, &sz) < 0) return throw_errno(env, zmq_errno());
    napi_create_int32(env, v, &r);
    return r;
}

static napi_value sock_set_int(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    int32_t opt, v;
    CHECK(napi_get_value_int32(env, argv[0], &opt));
    bool b;
    if (napi_get_value_bool(env, argv[1], &b) == napi_ok) v = b;
    else CHECK(napi_get_value_int32(env, argv[1], &v));
    int iv = v;
    if (zmq_setsockopt(s->z, opt, &iv, sizeof iv) < 0) return throw_errno(env, zmq_errno());
    return NULL;
}

static napi_value sock_get_int64(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], r;
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    int32_t opt;
    CHECK(napi_get_value_int32(env, argv[0], &opt));
    int64_t v = 0;
    size_t sz = sizeof v;
    if (zmq_getsockopt(s->z, opt, &v, &sz) < 0) return throw_errno(env, zmq_errno());
    napi_create_int64(env, v, &r);
    return r;
}

static napi_value sock_set_int64(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    int32_t opt;
    int64_t v;
    CHECK(napi_get_value_int32(env, argv[0], &opt));
    CHECK(napi_get_value_int64(env, argv[1], &v));
    if (zmq_setsockopt(s->z, opt, &v, sizeof v) < 0) return throw_errno(env, zmq_errno());
    return NULL;
}

static napi_value sock_get_buf(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2], r;
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    int32_t opt;
    uint32_t cap = 4096;
    CHECK(napi_get_value_int32(env, argv[0], &opt));
    if (argc > 1) napi_get_value_uint32(env, argv[1], &cap);
    char buf[4096];
    size_t sz = cap < sizeof buf ? cap : sizeof buf;
    if (zmq_getsockopt(s->z, opt, buf, &sz) < 0) return throw_errno(env, zmq_errno());
    void *d;
    CHECK(napi_create_buffer_copy(env, sz, buf, &d, &r));
    return r;
}

/* A view of a JS value as bytes. Strings are UTF-8 encoded into `stack` or a malloc'd
 * buffer (`heap`, freed by the caller). */
typedef struct {
    const void *data;
    size_t len;
    char *heap;
} bytes_t;

static int get_bytes(napi_env env, napi_value v, bytes_t *b, char *stack, size_t stack_len)
{
    void *d;
    size_t n;
    b->heap = NULL;
    if (napi_get_buffer_info(env, v, &d, &n) == napi_ok) {   /* any ArrayBufferView */
        b->data = d;
        b->len = n;
        return 0;
    }
    napi_valuetype t;
    if (napi_typeof(env, v, &t) != napi_ok) return -1;
    if (t == napi_null || t == napi_undefined) {
        b->data = stack;
        b->len = 0;
        return 0;
    }
    if (t == napi_object) {
        bool is_ab = false;
        napi_is_arraybuffer(env, v, &is_ab);
        if (is_ab) {
            if (napi_get_arraybuffer_info(env, v, &d, &n) != napi_ok) return -1;
            b->data = d;
            b->len = n;
            return 0;
        }
    }
    if (t != napi_string) {
        if (napi_coerce_to_string(env, v, &v) != napi_ok) return -1;
    }
    if (napi_get_value_string_utf8(env, v, stack, stack_len, &n) != napi_ok) return -1;
    if (n + 4 < stack_len) {   /* N-API truncates on a character boundary */
        b->data = stack;
        b->len = n;
        return 0;
    }
    /* possibly truncated: ask for the exact length */
    if (napi_get_value_string_utf8(env, v, NULL, 0, &n) != napi_ok) return -1;
    b->heap = malloc(n + 1);
    if (!b->heap) return -1;
    if (napi_get_value_string_utf8(env, v, b->heap, n + 1, &n) != napi_ok) {
        free(b->heap);
        b->heap = NULL;
        return -1;
    }
    b->data = b->heap;
    b->len = n;
    return 0;
}

static napi_value sock_set_buf(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    int32_t opt;
    CHECK(napi_get_value_int32(env, argv[0], &opt));
    char stack[STACK_STR];
    bytes_t b;
    if (get_bytes(env, argv[1], &b, stack, sizeof stack) < 0) {
        napi_throw_type_error(env, NULL, "string or Buffer expected");
        return NULL;
    }
    int rc = zmq_setsockopt(s->z, opt, b.data, b.len);
    int e = zmq_errno();
    free(b.heap);
    if (rc < 0) return throw_errno(env, e);
    return NULL;
}

/* Sends one message (a frame or an array of frames) with ZMQ_DONTWAIT on the first frame.
 * Returns 1 sent, 0 EAGAIN (nothing sent), -1 error (errno in *err; -2: JS exception). */
static int send_msg(napi_env env, sock_t *s, napi_value msg, int *err)
{
    char stack[STACK_STR];
    bytes_t b;
    bool is_arr = false;
    napi_is_array(env, msg, &is_arr);
    if (!is_arr) {
        if (get_bytes(env, msg, &b, stack, sizeof stack) < 0) return -2;
        int rc = zmq_send(s->z, b.data, b.len, ZMQ_DONTWAIT);
        int e = zmq_errno();
        free(b.heap);
        if (rc >= 0) return 1;
        if (e == EAGAIN) return 0;
        *err = e;
        return -1;
    }
    uint32_t n;
    napi_get_array_length(env, msg, &n);
    if (n == 0) {
        *err = EINVAL;
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        napi_value f;
        if (napi_get_element(env, msg, i, &f) != napi_ok) return -2;
        if (get_bytes(env, f, &b, stack, sizeof stack) < 0) {
            if (i > 0) zmq_send(s->z, "", 0, 0);   /* terminate the partial message */
            return -2;
        }
        int flags = (i + 1 < n ? ZMQ_SNDMORE : 0) | (i == 0 ? ZMQ_DONTWAIT : 0);
        int rc = zmq_send(s->z, b.data, b.len, flags);
        int e = zmq_errno();
        if (rc < 0 && i > 0 && e == EAGAIN) {
            /* cannot happen with libzmq semantics (later parts never hit HWM) */
            rc = zmq_send(s->z, b.data, b.len, flags & ~ZMQ_DONTWAIT);
            e = zmq_errno();
        }
        free(b.heap);
        if (rc < 0) {
            if (i == 0 && e == EAGAIN) return 0;
            *err = e;
            return -1;
        }
    }
    return 1;
}

/* _send(msg) -> true (queued) | false (EAGAIN); throws on other errors */
static napi_value sock_send(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], r;
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    int err = 0;
    int rc = send_msg(env, s, argc ? argv[0] : NULL, &err);
    if (rc == -2) {
        bool pending;
        napi_is_exception_pending(env, &pending);
        if (!pending) napi_throw_type_error(env, NULL, "cannot send this value");
        return NULL;
    }
    if (rc < 0) return throw_errno(env, err);
    napi_get_boolean(env, rc == 1, &r);
    return r;
}

/* ferromq's libzmq.so.5 exports this extension (count one-frame sends under one lock, the
 * reader woken once at the end); weak, so it is NULL on another libzmq. */
extern int ferromq_send_many(void *socket, const void *const *bufs, const size_t *lens,
                             int count) __attribute__((weak));

#define SEND_RUN 256   /* messages gathered for one ferromq_send_many call */

/* Sends messages [i, end) of `arr` that are plain Buffers/TypedArrays (one frame each)
 * with ferromq_send_many, SEND_RUN at a time, until one is something else. Sets *i past
 * what was queued. Returns 1 if it stopped at a message it did not handle (the caller
 * sends it), 0 on EAGAIN (stop), -1 on an error (errno in *err) or -2 (JS exception). */
static int send_run(napi_env env, sock_t *s, napi_value arr, uint32_t *i, uint32_t end, int *err)
{
    const void *bufs[SEND_RUN];
    size_t lens[SEND_RUN];
    while (*i < end) {
        int n = 0;
        bool other = false;
        while (n < SEND_RUN && *i + (uint32_t)n < end) {
            napi_value m;
            void *d;
            size_t l;
            if (napi_get_element(env, arr, *i + (uint32_t)n, &m) != napi_ok) return -2;
            if (napi_get_buffer_info(env, m, &d, &l) != napi_ok) {
                other = true;   /* an array (multipart), string, ArrayBuffer... */
                break;
            }
            bufs[n] = d;
            lens[n] = l;
            n++;
        }
        if (n > 0) {
            int rc = ferromq_send_many(s->z, bufs, lens, n);
            if (rc < 0) {
                int e = zmq_errno();
                if (e == EAGAIN) return 0;
                *err = e;
                return -1;
            }
            *i += (uint32_t)rc;
            if (rc < n) return 0;   /* no room for the rest (or an error that repeats) */
        }
        if (other) return 1;
    }
    return 1;
}

/* _sendMany(array, start, end) -> number of messages queued (stops at the first EAGAIN) */
static napi_value sock_send_many(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3], r;
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    uint32_t len, start = 0, end;
    CHECK(napi_get_array_length(env, argv[0], &len));
    end = len;
    if (argc > 1) napi_get_value_uint32(env, argv[1], &start);
    if (argc > 2) napi_get_value_uint32(env, argv[2], &end);
    if (end > len) end = len;
    uint32_t i = start;
    for (; i < end; i++) {
        napi_value m;
        int err = 0;
        if (ferromq_send_many) {
            int rc = send_run(env, s, argv[0], &i, end, &err);
            if (rc == 0 || (rc == 1 && i >= end)) break;
            if (rc < 0) {
                if (i > start) break;   /* report progress; the error repeats next call */
                if (rc == -2) return NULL;
                return throw_errno(env, err);
            }
            /* rc == 1: message i is not a plain buffer; send it the usual way */
        }
        CHECK(napi_get_element(env, argv[0], i, &m));
        int rc = send_msg(env, s, m, &err);
        if (rc == 1) continue;
        if (rc == 0) break;
        if (i > start) break;   /* report progress; the error repeats on the next call */
        if (rc == -2) {
            bool pending;
            napi_is_exception_pending(env, &pending);
            if (!pending) napi_throw_type_error(env, NULL, "cannot send this value");
            return NULL;
        }
        return throw_errno(env, err);
    }
    napi_create_uint32(env, i - start, &r);
    return r;
}

static int grow(inst_t *I, size_t frames_needed, size_t meta_needed)
{
    if (frames_needed > I->frames_cap) {
        size_t cap = I->frames_cap ? I->frames_cap : 256;
        while (cap < frames_needed) cap *= 2;
        zmq_msg_t *f = realloc(I->frames, cap * sizeof *f);
        if (!f) return -1;
        I->frames = f;
        I->frames_cap = cap;
    }
    if (meta_needed > I->meta_cap) {
        size_t cap = I->meta_cap ? I->meta_cap : 512;
        while (cap < meta_needed) cap *= 2;
        uint32_t *m = realloc(I->meta, cap * sizeof *m);
        if (!m) return -1;
        I->meta = m;
        I->meta_cap = cap;
    }
    return 0;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* While spinning, give the core away this often: on a host with more busy threads than
 * cores the peer we wait for may need this one (the core library does the same). */
#define SPIN_YIELD_NS 5000u

/* ferromq's libzmq.so.5 exports this extension (zmq_msg_recv waiting at most timeout_us);
 * weak, so it is NULL on another libzmq. */
extern int ferromq_msg_recv_within(zmq_msg_t *msg, void *socket, int flags, int timeout_us)
    __attribute__((weak));

/* The first frame of a receive: ZMQ_DONTWAIT, or when spin_ns > 0 a wait of up to spin_ns
 * for it. On ferromq the library does the wait (it spins all of it, reading the
 * connections itself between looks, which it takes off its I/O thread meanwhile);
 * elsewhere ZMQ_DONTWAIT is retried until spin_ns have passed. Returns zmq_msg_recv's
 * result. */
static int recv_first(void *z, zmq_msg_t *m, uint32_t spin_ns)
{
    if (spin_ns != 0 && ferromq_msg_recv_within)
        return ferromq_msg_recv_within(m, z, 0, (int)(((uint64_t)spin_ns + 999u) / 1000u));
    int rc = zmq_msg_recv(m, z, ZMQ_DONTWAIT);
    if (rc >= 0 || spin_ns == 0 || zmq_errno() != EAGAIN) return rc;
    uint64_t start = mono_ns(), next_yield = SPIN_YIELD_NS;
    for (;;) {
        rc = zmq_msg_recv(m, z, ZMQ_DONTWAIT);
        if (rc >= 0 || zmq_errno() != EAGAIN) return rc;
        uint64_t spun = mono_ns() - start;
        if (spun >= spin_ns) return rc;
        if (spun >= next_yield) {
            sched_yield();
            next_yield = spun + SPIN_YIELD_NS;
        }
    }
}

/* ferromq's libzmq.so.5 exports this extension (many queued frames moved into messages per
 * call, under one lock; crates/capi/src/batch.rs); weak, so it is NULL on another libzmq,
 * where every frame is a zmq_msg_recv of its own. */
extern int ferromq_recv_msgs(void *socket, zmq_msg_t *msgs, int count) __attribute__((weak));
#define RECV_MSGS_CHUNK 256      /* frames per ferromq_recv_msgs call */

/* Replaces the ArrayBuffer behind one of state's properties: *ref keeps it alive, `name`
 * makes it visible to JS (as `view` when given, else as the ArrayBuffer itself). */
static int set_state(napi_env env, inst_t *I, const char *name, napi_ref *ref, napi_value ab,
                     napi_value view)
{
    napi_value st;
    napi_ref nref;
    if (!I->state || napi_get_reference_value(env, I->state, &st) != napi_ok || !st) return -1;
    if (napi_create_reference(env, ab, 1, &nref) != napi_ok) return -1;
    if (napi_set_named_property(env, st, name, view ? view : ab) != napi_ok) {
        napi_delete_reference(env, nref);   /* the old buffer stays in use */
        return -1;
    }
    if (*ref) napi_delete_reference(env, *ref);
    *ref = nref;
    return 0;
}

/* Makes state.meta (a Uint32Array) hold at least `words` words; it is reused by every
 * receive, since JS reads it before anything else can receive. */
static int ensure_meta(napi_env env, inst_t *I, size_t words)
{
    if (words <= I->meta_js_cap) return 0;
    size_t cap = I->meta_js_cap ? I->meta_js_cap : 1024;
    while (cap < words) cap *= 2;
    void *d;
    napi_value ab, view;
    if (napi_create_arraybuffer(env, cap * 4, &d, &ab) != napi_ok ||
        napi_create_typedarray(env, napi_uint32_array, cap, ab, 0, &view) != napi_ok ||
        set_state(env, I, "meta", &I->meta_ab, ab, view) < 0)
        return -1;
    I->meta_js = d;
    I->meta_js_cap = cap;
    return 0;
}

/* Makes room for `bytes` more bytes in state.slab, starting a new slab when the current
 * one is too full. Bytes once handed out are never written again, so every Buffer stays
 * a view of its own bytes; an old slab lives as long as a Buffer on it does. */
static int ensure_slab(napi_env env, inst_t *I, size_t bytes)
{
    if (I->slab && I->slab_cap - I->slab_used >= bytes) return 0;
    size_t cap = bytes > SLAB_SIZE ? bytes : SLAB_SIZE;
    void *d;
    napi_value ab;
    /* zero-filled: bytes not yet handed out are visible through buf.buffer */
    if (napi_create_arraybuffer(env, cap, &d, &ab) != napi_ok ||
        set_state(env, I, "slab", &I->slab_ab, ab, NULL) < 0)
        return -1;
    I->slab = d;
    I->slab_cap = cap;
    I->slab_used = 0;
    return 0;
}

/* _recv(maxMessages, byteBudget, spinNs) -> undefined (nothing available) | number | Array
 *
 * Receives up to maxMessages whole messages without blocking, stopping early once the
 * copied payload exceeds byteBudget. When nothing is there, it keeps trying for up to
 * spinNs nanoseconds (default 0) before returning undefined: a caller about to wait on the
 * event loop trades that much CPU for a reply that comes sooner than a poll wake-up.
 * Result: the number of messages M, or [M, big1, big2, ...] when some frames are big.
 * The frame table is in state.meta: [0] = M; [1] = 1 when the receive stopped on EAGAIN
 * (socket drained), 0 when on a limit; [2] = offset in state.slab of the first small
 * frame's bytes; then per message: nframes, then per frame its length (BIG_FLAG set: the
 * frame is the next big Buffer). The small frames' bytes follow each other in the slab.
 * On ferromq the messages after the first come RECV_MSGS_CHUNK frames per library call. */
static napi_value sock_recv(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3];
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    inst_t *I = s->inst;
    uint32_t max = 1024, budget = 1 << 20, spin_ns = 0;
    if (argc > 0) napi_get_value_uint32(env, argv[0], &max);
    if (argc > 1) napi_get_value_uint32(env, argv[1], &budget);
    if (argc > 2) napi_get_value_uint32(env, argv[2], &spin_ns);
    if (max == 0) max = 1;
    size_t nf = 0, nm = 0, mw = 3, small = 0, nbig = 0;
    size_t ready = 0;   /* frames a ferromq_recv_msgs call put at frames[nf..] not yet read */
    int err = 0, drained = 0;
    if (grow(I, 64, 128) < 0) return throw_errno(env, ENOMEM);
    /* Frames already taken (`ready`) are read even past the byte budget. */
    while (ready > 0 || (nm < max && small < budget)) {
        if (ready == 0 && nm > 0 && ferromq_recv_msgs) {
            /* The messages after the first, many frames per call: at most one per message
             * still wanted, so a call never takes more messages than `max`. */
            size_t want = max - nm < RECV_MSGS_CHUNK ? max - nm : RECV_MSGS_CHUNK;
            if (grow(I, nf + want, mw + 2 * want) < 0) {
                err = ENOMEM;
                break;
            }
            int n = ferromq_recv_msgs(s->z, &I->frames[nf], (int)want);
            if (n < 0) {
                int e = zmq_errno();
                if (e != EAGAIN) err = e;
                else drained = 1;
                break;
            }
            ready = (size_t)n;
        }
        if (!ready && grow(I, nf + 1, mw + 2) < 0) {   /* a batch grew for its frames */
            err = ENOMEM;
            break;
        }
        zmq_msg_t *m = &I->frames[nf];
        if (ready) {
            ready--;
        } else {
            zmq_msg_init(m);
            if (recv_first(s->z, m, nm == 0 ? spin_ns : 0) < 0) {
                int e = zmq_errno();
                zmq_msg_close(m);
                if (e != EAGAIN) err = e;
                else drained = 1;
                break;
            }
        }
        size_t count_at = mw++;
        uint32_t cnt = 0;
        for (;;) {
            m = &I->frames[nf];
            size_t len = zmq_msg_size(m);
            if (len > BIG_FRAME) {
                I->meta[mw++] = BIG_FLAG;
                nbig++;
            } else {
                I->meta[mw++] = (uint32_t)len;
                small += len;
            }
            cnt++;
            int more = zmq_msg_more(m);
            nf++;
            if (!more) break;
            if (ready) {    /* the next frame is already there */
                ready--;
                continue;
            }
            if (grow(I, nf + 1, mw + 1) < 0) {   /* drain the rest of the message */
                zmq_msg_t tmp;
                zmq_msg_init(&tmp);
                while (zmq_msg_recv(&tmp, s->z, 0) >= 0 && zmq_msg_more(&tmp)) {
                }
                zmq_msg_close(&tmp);
                err = ENOMEM;
                break;
            }
            m = &I->frames[nf];
            zmq_msg_init(m);
            if (zmq_msg_recv(m, s->z, 0) < 0) {
                err = zmq_errno();
                zmq_msg_close(m);
                break;
            }
        }
        I->meta[count_at] = cnt;
        if (err) {          /* drop the broken message */
            mw = count_at;
            while (cnt--) zmq_msg_close(&I->frames[--nf]);
            break;
        }
        nm++;
    }
    /* Only an error leaves frames taken and not read: they go with the rest of the error. */
    while (ready) zmq_msg_close(&I->frames[nf + --ready]);
    if (nm == 0) {
        if (err) return throw_errno(env, err);
        return NULL;   /* undefined: EAGAIN */
    }
    napi_value result = NULL;
    int ok = ensure_meta(env, I, mw) == 0 && ensure_slab(env, I, small) == 0;
    if (ok) {
        I->meta[0] = (uint32_t)nm;
        I->meta[1] = (uint32_t)drained;
        I->meta[2] = (uint32_t)I->slab_used;
        memcpy(I->meta_js, I->meta, mw * 4);
        if (nbig) ok = napi_create_array_with_length(env, nbig + 1, &result) == napi_ok;
        else ok = napi_create_uint32(env, (uint32_t)nm, &result) == napi_ok;
    }
    if (ok && nbig) {
        napi_value n;
        ok = napi_create_uint32(env, (uint32_t)nm, &n) == napi_ok &&
             napi_set_element(env, result, 0, n) == napi_ok;
    }
    char *p = ok ? I->slab + I->slab_used : NULL;
    uint32_t bi = 1;
    for (size_t i = 0; i < nf && ok; i++) {
        size_t len = zmq_msg_size(&I->frames[i]);
        if (len > BIG_FRAME) {
            napi_value bb;
            void *bd;
            ok = napi_create_buffer_copy(env, len, zmq_msg_data(&I->frames[i]), &bd, &bb) ==
                     napi_ok &&
                 napi_set_element(env, result, bi++, bb) == napi_ok;
        } else {
            memcpy(p, zmq_msg_data(&I->frames[i]), len);
            p += len;
        }
    }
    if (ok) I->slab_used += small;
    for (size_t i = 0; i < nf; i++) zmq_msg_close(&I->frames[i]);
    if (!ok) {
        bool pending = false;
        napi_is_exception_pending(env, &pending);
        return pending ? NULL : throw_errno(env, ENOMEM);
    }
    return result;
}

/* _recvInto(buffer, spinNs) -> undefined (nothing available) | number
 *
 * Receives one frame, as zmq_recv does, into `buffer` (a Buffer or other ArrayBufferView
 * the caller reuses): copies min(frame size, buffer length) bytes and returns the frame's
 * full size, negated and minus one (-(size + 1)) when more frames of the message follow.
 * Waits for the frame as _recv does (spinNs). A frame copied into memory the caller keeps
 * warm costs ~1.4 us at 64 KiB where a new Buffer per frame costs 7-12 us
 * (docs/results/2026-11-27-node-64k-latency.md). */
static napi_value sock_recv_into(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2], r;
    sock_t *s = this_sock(env, info, &argc, argv, NULL, 1);
    if (!s) return NULL;
    uint32_t spin_ns = 0;
    if (argc > 1) napi_get_value_uint32(env, argv[1], &spin_ns);
    void *dst = NULL;
    size_t cap = 0;
    bool is_view = false;
    if (argc > 0) napi_is_typedarray(env, argv[0], &is_view);
    if (is_view) {
        napi_typedarray_type t;
        size_t n, off;
        napi_value ab;
        if (napi_get_typedarray_info(env, argv[0], &t, &n, &dst, &ab, &off) != napi_ok)
            return NULL;
        cap = n * (t == napi_uint8_array || t == napi_int8_array ||
                           t == napi_uint8_clamped_array ? 1
                   : t == napi_int16_array || t == napi_uint16_array ? 2
                   : t == napi_float64_array || t == napi_bigint64_array ||
                           t == napi_biguint64_array ? 8
                   : 4);
    } else {
        bool is_dv = false;
        if (argc > 0) napi_is_dataview(env, argv[0], &is_dv);
        if (!is_dv) {
            napi_throw_type_error(env, NULL, "receiveInto: a Buffer, TypedArray or DataView");
            return NULL;
        }
        napi_value ab;
        size_t off;
        if (napi_get_dataview_info(env, argv[0], &cap, &dst, &ab, &off) != napi_ok) return NULL;
    }
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (recv_first(s->z, &m, spin_ns) < 0) {
        int e = zmq_errno();
        zmq_msg_close(&m);
        if (e == EAGAIN) return NULL;   /* undefined */
        return throw_errno(env, e);
    }
    size_t len = zmq_msg_size(&m);
    if (len && cap) memcpy(dst, zmq_msg_data(&m), len < cap ? len : cap);
    double v = zmq_msg_more(&m) ? -((double)len + 1) : (double)len;
    zmq_msg_close(&m);
    napi_create_double(env, v, &r);
    return r;
}

/* ---------------------------------------------------------------------------------- */
/* module                                                                              */

/* init(dispatch, state): the function called when a socket's fd fires, and the object
 * whose `meta` and `slab` properties receive results are read from (see _recv). */
static napi_value mod_init(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    inst_t *I;
    CHECK(napi_get_instance_data(env, (void **)&I));
    if (I->dispatch) napi_delete_reference(env, I->dispatch);
    CHECK(napi_create_reference(env, argv[0], 1, &I->dispatch));
    if (argc > 1) {
        if (I->state) napi_delete_reference(env, I->state);
        CHECK(napi_create_reference(env, argv[1], 1, &I->state));
    }
    return NULL;
}

static napi_value mod_version(napi_env env, napi_callback_info info)
{
    (void)info;
    int a, b, c;
    zmq_version(&a, &b, &c);
    char buf[64];
    snprintf(buf, sizeof buf, "%d.%d.%d", a, b, c);
    napi_value r;
    napi_create_string_utf8(env, buf, NAPI_AUTO_LENGTH, &r);
    return r;
}

static napi_value mod_has(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], r;
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    char buf[64];
    size_t n;
    CHECK(napi_get_value_string_utf8(env, argv[0], buf, sizeof buf, &n));
    napi_get_boolean(env, zmq_has(buf) != 0, &r);
    return r;
}

static napi_value mod_curve_keypair(napi_env env, napi_callback_info info)
{
    (void)info;
    char pub[41], sec[41];
    if (zmq_curve_keypair(pub, sec) < 0) return throw_errno(env, zmq_errno());
    napi_value o, p, s;
    napi_create_object(env, &o);
    napi_create_string_utf8(env, pub, 40, &p);
    napi_create_string_utf8(env, sec, 40, &s);
    napi_set_named_property(env, o, "publicKey", p);
    napi_set_named_property(env, o, "secretKey", s);
    return o;
}

/* Environment teardown: close every socket (each keeps its own linger), then terminate
 * every context, which waits for lingering messages to be flushed. */
static void env_cleanup(void *arg)
{
    inst_t *I = arg;
    while (I->socks) sock_close(I->socks);
    for (ctx_t *c = I->ctxs; c; c = c->next) {
        if (c->z) {
            while (zmq_ctx_term(c->z) < 0 && zmq_errno() == EINTR) {
            }
            c->z = NULL;
        }
    }
}

static void inst_free(napi_env env, void *data, void *hint)
{
    (void)env;
    (void)hint;
    inst_t *I = data;
    free(I->frames);
    free(I->meta);
    /* sockets/contexts still referenced by wrappers are freed by their finalizers */
}

#define METHOD(name, fn) {name, NULL, fn, NULL, NULL, NULL, napi_default_method, NULL}

static napi_value Init(napi_env env, napi_value exports)
{
    inst_t *I = calloc(1, sizeof *I);
    if (!I) return NULL;
    CHECK(napi_set_instance_data(env, I, inst_free, NULL));
    CHECK(napi_add_env_cleanup_hook(env, env_cleanup, I));

    napi_property_descriptor sp[] = {
        METHOD("_watch", sock_watch),       METHOD("_close", sock_close_js),
        METHOD("_events", sock_events),     METHOD("_bind", sock_bind),
        METHOD("_unbind", sock_unbind),     METHOD("_connect", sock_connect),
        METHOD("_disconnect", sock_disconnect), METHOD("_getInt", sock_get_int),
        METHOD("_setInt", sock_set_int),    METHOD("_getInt64", sock_get_int64),
        METHOD("_setInt64", sock_set_int64), METHOD("_getBuf", sock_get_buf),
        METHOD("_setBuf", sock_set_buf),    METHOD("_send", sock_send),
        METHOD("_sendMany", sock_send_many), METHOD("_recv", sock_recv),
        METHOD("_recvInto", sock_recv_into),
    };
    napi_value sc;
    CHECK(napi_define_class(env, "NativeSocket", NAPI_AUTO_LENGTH, sock_new, NULL,
                            sizeof sp / sizeof sp[0], sp, &sc));
    CHECK(napi_create_reference(env, sc, 1, &I->sock_ctor));
    CHECK(napi_set_named_property(env, exports, "NativeSocket", sc));

    napi_property_descriptor cp[] = {
        METHOD("_set", ctx_set),
        METHOD("_get", ctx_get),
        METHOD("_term", ctx_term),
    };
    napi_value cc;
    CHECK(napi_define_class(env, "NativeContext", NAPI_AUTO_LENGTH, ctx_new, NULL,
                            sizeof cp / sizeof cp[0], cp, &cc));
    CHECK(napi_create_reference(env, cc, 1, &I->ctx_ctor));
    CHECK(napi_set_named_property(env, exports, "NativeContext", cc));

    napi_property_descriptor mp[] = {
        {"init", NULL, mod_init, NULL, NULL, NULL, napi_enumerable, NULL},
        {"version", NULL, mod_version, NULL, NULL, NULL, napi_enumerable, NULL},
        {"has", NULL, mod_has, NULL, NULL, NULL, napi_enumerable, NULL},
        {"curveKeyPair", NULL, mod_curve_keypair, NULL, NULL, NULL, napi_enumerable, NULL},
    };
    CHECK(napi_define_properties(env, exports, sizeof mp / sizeof mp[0], mp));
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
