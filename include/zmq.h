/* SPDX-License-Identifier: MPL-2.0 */
/*
 * ferromq - public C interface.
 *
 * This header describes the C API exported by ferromq's libzmq.so.5.  It is
 * an independent description of the libzmq 4.3.5 application binary
 * interface: every constant value, type layout and function signature below
 * is chosen so that programs (and language bindings) written against libzmq
 * 4.3.5 compile unchanged and run against ferromq without recompilation.
 *
 * Contract for maintainers: the numbers in this file are ABI.  Never change
 * an existing value and never recycle a retired one.
 *
 * Layout of this file:
 *   1. version macros, includes, export macro
 *   2. error numbers and error functions
 *   3. contexts
 *   4. messages
 *   5. sockets: types, options, flags, security, monitor events
 *   6. polling, proxies, capabilities, legacy calls
 *   7. Z85 / CURVE helpers, atomic counters, timers, misc utilities
 *   8. DRAFT API (only with ZMQ_BUILD_DRAFT_API defined)
 */

#ifndef __ZMQ_H_INCLUDED__
#define __ZMQ_H_INCLUDED__
/* Alternative spelling of the include-guard marker, for code that tests it. */
#define ZMQ_H_INCLUDED 1

/* ======================================================================== */
/* 1. Version, includes, symbol export                                      */
/* ======================================================================== */

/* API level implemented (compile-time).  zmq_version() reports it at run   */
/* time.                                                                    */
#define ZMQ_VERSION_MAJOR 4
#define ZMQ_VERSION_MINOR 3
#define ZMQ_VERSION_PATCH 5

/* Packs a version triple into one comparable integer: 4.3.5 -> 40305.      */
#define ZMQ_MAKE_VERSION(major, minor, patch)                                  \
    ((major) * 10000 + (minor) * 100 + (patch))
#define ZMQ_VERSION                                                            \
    ZMQ_MAKE_VERSION (ZMQ_VERSION_MAJOR, ZMQ_VERSION_MINOR, ZMQ_VERSION_PATCH)

#if !defined _WIN32_WCE
#include <errno.h>
#endif
#include <stddef.h>
#include <stdio.h>

/* Fixed-width integers are used by the Z85, routing-id and monitor APIs.   */
#define ZMQ_DEFINED_STDINT 1
#include <stdint.h>

#if !defined _WIN32
/* sigset_t, needed by the draft zmq_ppoll() declaration.                   */
#include <signal.h>
#endif

#if defined ZMQ_HAVE_AIX
/* AIX renames pollfd members through macros; pull them in up front.       */
#include <poll.h>
#endif

/* ZMQ_EXPORT marks the functions provided by the shared library.  It is    */
/* only meaningful inside this header and is removed again at its end.      */
#if defined ZMQ_NO_EXPORT
#define ZMQ_EXPORT
#elif defined _WIN32
#if defined ZMQ_STATIC
#define ZMQ_EXPORT
#elif defined DLL_EXPORT
#define ZMQ_EXPORT __declspec (dllexport)
#else
#define ZMQ_EXPORT __declspec (dllimport)
#endif
#elif (defined __GNUC__ && __GNUC__ >= 4) || defined __clang__               \
  || defined __INTEL_COMPILER
#define ZMQ_EXPORT __attribute__ ((visibility ("default")))
#else
#define ZMQ_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/* 2. Errors                                                                */
/* ======================================================================== */

/* Base for library-private errno values; far away from any OS's range.     */
#define ZMQ_HAUSNUMERO 156384712

/* POSIX errno names that some platforms lack.  Where the C library already */
/* defines a name, its value is kept; otherwise an offset from the base     */
/* above is used.                                                           */
#ifndef ENOTSUP
#define ENOTSUP (ZMQ_HAUSNUMERO + 1)
#endif
#ifndef EPROTONOSUPPORT
#define EPROTONOSUPPORT (ZMQ_HAUSNUMERO + 2)
#endif
#ifndef ENOBUFS
#define ENOBUFS (ZMQ_HAUSNUMERO + 3)
#endif
#ifndef ENETDOWN
#define ENETDOWN (ZMQ_HAUSNUMERO + 4)
#endif
#ifndef EADDRINUSE
#define EADDRINUSE (ZMQ_HAUSNUMERO + 5)
#endif
#ifndef EADDRNOTAVAIL
#define EADDRNOTAVAIL (ZMQ_HAUSNUMERO + 6)
#endif
#ifndef ECONNREFUSED
#define ECONNREFUSED (ZMQ_HAUSNUMERO + 7)
#endif
#ifndef EINPROGRESS
#define EINPROGRESS (ZMQ_HAUSNUMERO + 8)
#endif
#ifndef ENOTSOCK
#define ENOTSOCK (ZMQ_HAUSNUMERO + 9)
#endif
#ifndef EMSGSIZE
#define EMSGSIZE (ZMQ_HAUSNUMERO + 10)
#endif
#ifndef EAFNOSUPPORT
#define EAFNOSUPPORT (ZMQ_HAUSNUMERO + 11)
#endif
#ifndef ENETUNREACH
#define ENETUNREACH (ZMQ_HAUSNUMERO + 12)
#endif
#ifndef ECONNABORTED
#define ECONNABORTED (ZMQ_HAUSNUMERO + 13)
#endif
#ifndef ECONNRESET
#define ECONNRESET (ZMQ_HAUSNUMERO + 14)
#endif
#ifndef ENOTCONN
#define ENOTCONN (ZMQ_HAUSNUMERO + 15)
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT (ZMQ_HAUSNUMERO + 16)
#endif
#ifndef EHOSTUNREACH
#define EHOSTUNREACH (ZMQ_HAUSNUMERO + 17)
#endif
#ifndef ENETRESET
#define ENETRESET (ZMQ_HAUSNUMERO + 18)
#endif

/* Errors that exist only in 0MQ (always defined here).                     */
#define EFSM (ZMQ_HAUSNUMERO + 51)           /* op invalid in socket state */
#define ENOCOMPATPROTO (ZMQ_HAUSNUMERO + 52) /* transport/socket mismatch  */
#define ETERM (ZMQ_HAUSNUMERO + 53)          /* context was terminated     */
#define EMTHREAD (ZMQ_HAUSNUMERO + 54)       /* no I/O thread available    */

/* errno as seen by the library (portable across C runtimes).               */
ZMQ_EXPORT int zmq_errno (void);

/* Text for an errno value, covering both system and 0MQ codes.             */
ZMQ_EXPORT const char *zmq_strerror (int errnum);

/* Library version at run time; any pointer may be used to receive a part. */
ZMQ_EXPORT void zmq_version (int *major, int *minor, int *patch);

/* ======================================================================== */
/* 3. Contexts                                                              */
/* ======================================================================== */

/* Options for zmq_ctx_set() / zmq_ctx_get().                               */
#define ZMQ_IO_THREADS 1
#define ZMQ_MAX_SOCKETS 2
#define ZMQ_SOCKET_LIMIT 3 /* read-only */
#define ZMQ_THREAD_PRIORITY 3
#define ZMQ_THREAD_SCHED_POLICY 4
#define ZMQ_MAX_MSGSZ 5
#define ZMQ_MSG_T_SIZE 6 /* read-only */
#define ZMQ_THREAD_AFFINITY_CPU_ADD 7
#define ZMQ_THREAD_AFFINITY_CPU_REMOVE 8
#define ZMQ_THREAD_NAME_PREFIX 9

/* Values a fresh context starts with.                                      */
#define ZMQ_IO_THREADS_DFLT 1
#define ZMQ_MAX_SOCKETS_DFLT 1023
#define ZMQ_THREAD_PRIORITY_DFLT (-1)
#define ZMQ_THREAD_SCHED_POLICY_DFLT (-1)

ZMQ_EXPORT void *zmq_ctx_new (void);
ZMQ_EXPORT int zmq_ctx_term (void *context);
ZMQ_EXPORT int zmq_ctx_shutdown (void *context);
ZMQ_EXPORT int zmq_ctx_set (void *context, int option, int optval);
ZMQ_EXPORT int zmq_ctx_get (void *context, int option);

/* Pre-3.2 names for the same operations.                                   */
ZMQ_EXPORT void *zmq_init (int io_threads);
ZMQ_EXPORT int zmq_term (void *context);
ZMQ_EXPORT int zmq_ctx_destroy (void *context);

/* ======================================================================== */
/* 4. Messages                                                              */
/* ======================================================================== */

/* Opaque message handle: 64 bytes, aligned like a pointer.  Applications   */
/* allocate it (usually on the stack) and hand it to the zmq_msg_*()        */
/* functions; its contents are private to the library.  Pointer alignment   */
/* matters on targets that trap on misaligned access.                       */
typedef struct zmq_msg_t
{
#if defined _MSC_VER && (defined _M_X64 || defined _M_ARM64)
    __declspec (align (8)) unsigned char _[64];
#elif defined _MSC_VER                                                         \
  && (defined _M_IX86 || defined _M_ARM_ARMV7VE || defined _M_ARM)
    __declspec (align (4)) unsigned char _[64];
#elif defined __GNUC__ || defined __clang__ || defined __INTEL_COMPILER       \
  || (defined __SUNPRO_C && __SUNPRO_C >= 0x590)                              \
  || (defined __SUNPRO_CC && __SUNPRO_CC >= 0x590)
    unsigned char _[64] __attribute__ ((aligned (sizeof (void *))));
#else
    unsigned char _[64];
#endif
} zmq_msg_t;

/* Release callback for zmq_msg_init_data(): called with the buffer and the */
/* caller's hint once the library no longer needs the buffer.              */
typedef void (zmq_free_fn) (void *data, void *hint);

ZMQ_EXPORT int zmq_msg_init (zmq_msg_t *msg);
ZMQ_EXPORT int zmq_msg_init_size (zmq_msg_t *msg, size_t size);
ZMQ_EXPORT int zmq_msg_init_data (
  zmq_msg_t *msg, void *data, size_t size, zmq_free_fn *ffn, void *hint);
ZMQ_EXPORT int zmq_msg_send (zmq_msg_t *msg, void *socket, int flags);
ZMQ_EXPORT int zmq_msg_recv (zmq_msg_t *msg, void *socket, int flags);
ZMQ_EXPORT int zmq_msg_close (zmq_msg_t *msg);
ZMQ_EXPORT int zmq_msg_move (zmq_msg_t *dest, zmq_msg_t *src);
ZMQ_EXPORT int zmq_msg_copy (zmq_msg_t *dest, zmq_msg_t *src);
ZMQ_EXPORT void *zmq_msg_data (zmq_msg_t *msg);
ZMQ_EXPORT size_t zmq_msg_size (const zmq_msg_t *msg);
ZMQ_EXPORT int zmq_msg_more (const zmq_msg_t *msg);
ZMQ_EXPORT int zmq_msg_get (const zmq_msg_t *msg, int property);
ZMQ_EXPORT int zmq_msg_set (zmq_msg_t *msg, int property, int optval);
ZMQ_EXPORT const char *zmq_msg_gets (const zmq_msg_t *msg,
                                     const char *property);

/* Properties for zmq_msg_get() / zmq_msg_set().                            */
#define ZMQ_MORE 1
#define ZMQ_SRCFD 2 /* deprecated */
#define ZMQ_SHARED 3

/* ======================================================================== */
/* 5. Sockets                                                               */
/* ======================================================================== */

/* --- socket types ------------------------------------------------------- */
#define ZMQ_PAIR 0
#define ZMQ_PUB 1
#define ZMQ_SUB 2
#define ZMQ_REQ 3
#define ZMQ_REP 4
#define ZMQ_DEALER 5
#define ZMQ_ROUTER 6
#define ZMQ_PULL 7
#define ZMQ_PUSH 8
#define ZMQ_XPUB 9
#define ZMQ_XSUB 10
#define ZMQ_STREAM 11

/* Historical names of DEALER and ROUTER.                                   */
#define ZMQ_XREQ ZMQ_DEALER
#define ZMQ_XREP ZMQ_ROUTER

/* --- socket options (zmq_setsockopt / zmq_getsockopt) ------------------- */
#define ZMQ_AFFINITY 4
#define ZMQ_ROUTING_ID 5
#define ZMQ_SUBSCRIBE 6
#define ZMQ_UNSUBSCRIBE 7
#define ZMQ_RATE 8
#define ZMQ_RECOVERY_IVL 9
#define ZMQ_SNDBUF 11
#define ZMQ_RCVBUF 12
#define ZMQ_RCVMORE 13
#define ZMQ_FD 14
#define ZMQ_EVENTS 15
#define ZMQ_TYPE 16
#define ZMQ_LINGER 17
#define ZMQ_RECONNECT_IVL 18
#define ZMQ_BACKLOG 19
#define ZMQ_RECONNECT_IVL_MAX 21
#define ZMQ_MAXMSGSIZE 22
#define ZMQ_SNDHWM 23
#define ZMQ_RCVHWM 24
#define ZMQ_MULTICAST_HOPS 25
#define ZMQ_RCVTIMEO 27
#define ZMQ_SNDTIMEO 28
#define ZMQ_LAST_ENDPOINT 32
#define ZMQ_ROUTER_MANDATORY 33
#define ZMQ_TCP_KEEPALIVE 34
#define ZMQ_TCP_KEEPALIVE_CNT 35
#define ZMQ_TCP_KEEPALIVE_IDLE 36
#define ZMQ_TCP_KEEPALIVE_INTVL 37
#define ZMQ_IMMEDIATE 39
#define ZMQ_XPUB_VERBOSE 40
#define ZMQ_ROUTER_RAW 41
#define ZMQ_IPV6 42
#define ZMQ_MECHANISM 43
#define ZMQ_PLAIN_SERVER 44
#define ZMQ_PLAIN_USERNAME 45
#define ZMQ_PLAIN_PASSWORD 46
#define ZMQ_CURVE_SERVER 47
#define ZMQ_CURVE_PUBLICKEY 48
#define ZMQ_CURVE_SECRETKEY 49
#define ZMQ_CURVE_SERVERKEY 50
#define ZMQ_PROBE_ROUTER 51
#define ZMQ_REQ_CORRELATE 52
#define ZMQ_REQ_RELAXED 53
#define ZMQ_CONFLATE 54
#define ZMQ_ZAP_DOMAIN 55
#define ZMQ_ROUTER_HANDOVER 56
#define ZMQ_TOS 57
#define ZMQ_CONNECT_ROUTING_ID 61
#define ZMQ_GSSAPI_SERVER 62
#define ZMQ_GSSAPI_PRINCIPAL 63
#define ZMQ_GSSAPI_SERVICE_PRINCIPAL 64
#define ZMQ_GSSAPI_PLAINTEXT 65
#define ZMQ_HANDSHAKE_IVL 66
#define ZMQ_SOCKS_PROXY 68
#define ZMQ_XPUB_NODROP 69
#define ZMQ_BLOCKY 70
#define ZMQ_XPUB_MANUAL 71
#define ZMQ_XPUB_WELCOME_MSG 72
#define ZMQ_STREAM_NOTIFY 73
#define ZMQ_INVERT_MATCHING 74
#define ZMQ_HEARTBEAT_IVL 75
#define ZMQ_HEARTBEAT_TTL 76
#define ZMQ_HEARTBEAT_TIMEOUT 77
#define ZMQ_XPUB_VERBOSER 78
#define ZMQ_CONNECT_TIMEOUT 79
#define ZMQ_TCP_MAXRT 80
#define ZMQ_THREAD_SAFE 81
#define ZMQ_MULTICAST_MAXTPDU 84
#define ZMQ_VMCI_BUFFER_SIZE 85
#define ZMQ_VMCI_BUFFER_MIN_SIZE 86
#define ZMQ_VMCI_BUFFER_MAX_SIZE 87
#define ZMQ_VMCI_CONNECT_TIMEOUT 88
#define ZMQ_USE_FD 89
#define ZMQ_GSSAPI_PRINCIPAL_NAMETYPE 90
#define ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE 91
#define ZMQ_BINDTODEVICE 92

/* Retired option numbers and old option names, still accepted.             */
#define ZMQ_IPV4ONLY 31
#define ZMQ_TCP_ACCEPT_FILTER 38
#define ZMQ_IPC_FILTER_PID 58
#define ZMQ_IPC_FILTER_UID 59
#define ZMQ_IPC_FILTER_GID 60
#define ZMQ_IDENTITY ZMQ_ROUTING_ID
#define ZMQ_CONNECT_RID ZMQ_CONNECT_ROUTING_ID
#define ZMQ_DELAY_ATTACH_ON_CONNECT ZMQ_IMMEDIATE
#define ZMQ_FAIL_UNROUTABLE ZMQ_ROUTER_MANDATORY
#define ZMQ_ROUTER_BEHAVIOR ZMQ_ROUTER_MANDATORY

/* --- flags for send and receive calls ----------------------------------- */
#define ZMQ_DONTWAIT 1
#define ZMQ_SNDMORE 2
#define ZMQ_NOBLOCK ZMQ_DONTWAIT /* old name */

/* --- security mechanisms (value of ZMQ_MECHANISM) ----------------------- */
#define ZMQ_NULL 0
#define ZMQ_PLAIN 1
#define ZMQ_CURVE 2
#define ZMQ_GSSAPI 3

/* Longest group name accepted by RADIO/DISH.                               */
#define ZMQ_GROUP_MAX_LENGTH 255

/* GSSAPI principal name types (ZMQ_GSSAPI_*PRINCIPAL_NAMETYPE values).     */
#define ZMQ_GSSAPI_NT_HOSTBASED 0
#define ZMQ_GSSAPI_NT_USER_NAME 1
#define ZMQ_GSSAPI_NT_KRB5_PRINCIPAL 2

/* --- socket monitor events (bit mask for zmq_socket_monitor) ------------ */
#define ZMQ_EVENT_CONNECTED 0x0001
#define ZMQ_EVENT_CONNECT_DELAYED 0x0002
#define ZMQ_EVENT_CONNECT_RETRIED 0x0004
#define ZMQ_EVENT_LISTENING 0x0008
#define ZMQ_EVENT_BIND_FAILED 0x0010
#define ZMQ_EVENT_ACCEPTED 0x0020
#define ZMQ_EVENT_ACCEPT_FAILED 0x0040
#define ZMQ_EVENT_CLOSED 0x0080
#define ZMQ_EVENT_CLOSE_FAILED 0x0100
#define ZMQ_EVENT_DISCONNECTED 0x0200
#define ZMQ_EVENT_MONITOR_STOPPED 0x0400
/* Handshake outcome events.  The event value carries: an errno for         */
/* NO_DETAIL, nothing for SUCCEEDED, a ZMQ_PROTOCOL_ERROR_* code for        */
/* PROTOCOL, and the ZAP status code (300/400/500) for AUTH.                */
#define ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL 0x0800
#define ZMQ_EVENT_HANDSHAKE_SUCCEEDED 0x1000
#define ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL 0x2000
#define ZMQ_EVENT_HANDSHAKE_FAILED_AUTH 0x4000
#define ZMQ_EVENT_ALL 0xFFFF

/* Values reported with ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL.                */
/* 0x1000xxxx: ZMTP protocol violations                                     */
#define ZMQ_PROTOCOL_ERROR_ZMTP_UNSPECIFIED 0x10000000
#define ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND 0x10000001
#define ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE 0x10000002
#define ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE 0x10000003
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED 0x10000011
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE 0x10000012
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO 0x10000013
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE 0x10000014
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR 0x10000015
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY 0x10000016
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME 0x10000017
#define ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA 0x10000018
/* 0x1100xxxx: usually a configuration mismatch with the peer               */
#define ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC 0x11000001
#define ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH 0x11000002
/* 0x2000xxxx: problems talking to the ZAP handler                          */
#define ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED 0x20000000
#define ZMQ_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY 0x20000001
#define ZMQ_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID 0x20000002
#define ZMQ_PROTOCOL_ERROR_ZAP_BAD_VERSION 0x20000003
#define ZMQ_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE 0x20000004
#define ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA 0x20000005
/* 0x3000xxxx: WebSocket transport                                          */
#define ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED 0x30000000

/* --- socket functions --------------------------------------------------- */
ZMQ_EXPORT void *zmq_socket (void *context, int type);
ZMQ_EXPORT int zmq_close (void *socket);
ZMQ_EXPORT int zmq_setsockopt (void *socket,
                               int option,
                               const void *optval,
                               size_t optvallen);
ZMQ_EXPORT int
zmq_getsockopt (void *socket, int option, void *optval, size_t *optvallen);
ZMQ_EXPORT int zmq_bind (void *socket, const char *endpoint);
ZMQ_EXPORT int zmq_connect (void *socket, const char *endpoint);
ZMQ_EXPORT int zmq_unbind (void *socket, const char *endpoint);
ZMQ_EXPORT int zmq_disconnect (void *socket, const char *endpoint);
ZMQ_EXPORT int
zmq_send (void *socket, const void *buf, size_t len, int flags);
ZMQ_EXPORT int
zmq_send_const (void *socket, const void *buf, size_t len, int flags);
ZMQ_EXPORT int zmq_recv (void *socket, void *buf, size_t len, int flags);
ZMQ_EXPORT int
zmq_socket_monitor (void *socket, const char *endpoint, int events);

/* ======================================================================== */
/* 6. Polling, proxies, capabilities, legacy calls                          */
/* ======================================================================== */

/* Native descriptor type: SOCKET-sized on Windows, int elsewhere.          */
#if defined _WIN32
#if defined _WIN64
typedef unsigned __int64 zmq_fd_t;
#else
typedef unsigned int zmq_fd_t;
#endif
#else
typedef int zmq_fd_t;
#endif

/* Event bits for zmq_poll() and the poller API.                            */
#define ZMQ_POLLIN 1
#define ZMQ_POLLOUT 2
#define ZMQ_POLLERR 4
#define ZMQ_POLLPRI 8

/* One zmq_poll() entry: either a 0MQ socket (socket != NULL) or a native   */
/* descriptor (socket == NULL, fd used).                                    */
typedef struct zmq_pollitem_t
{
    void *socket;
    zmq_fd_t fd;
    short events;  /* requested ZMQ_POLL* bits */
    short revents; /* bits that fired, filled in by zmq_poll() */
} zmq_pollitem_t;

#define ZMQ_POLLITEMS_DFLT 16

/* timeout in milliseconds; -1 waits forever.                               */
ZMQ_EXPORT int zmq_poll (zmq_pollitem_t *items, int nitems, long timeout);

/* Shuttle messages between two sockets, optionally copying to a capture    */
/* socket; the steerable form also obeys commands on a control socket.      */
ZMQ_EXPORT int zmq_proxy (void *frontend, void *backend, void *capture);
ZMQ_EXPORT int zmq_proxy_steerable (void *frontend,
                                    void *backend,
                                    void *capture,
                                    void *control);

/* Feature probe: zmq_has ("curve"), zmq_has ("ipc"), ...                   */
#define ZMQ_HAS_CAPABILITIES 1
ZMQ_EXPORT int zmq_has (const char *capability);

/* Device kinds accepted by the obsolete zmq_device().                      */
#define ZMQ_STREAMER 1
#define ZMQ_FORWARDER 2
#define ZMQ_QUEUE 3

/* Obsolete entry points kept for old programs.                             */
ZMQ_EXPORT int zmq_device (int type, void *frontend, void *backend);
ZMQ_EXPORT int zmq_sendmsg (void *socket, zmq_msg_t *msg, int flags);
ZMQ_EXPORT int zmq_recvmsg (void *socket, zmq_msg_t *msg, int flags);
struct iovec;
ZMQ_EXPORT int
zmq_sendiov (void *socket, struct iovec *iov, size_t count, int flags);
ZMQ_EXPORT int
zmq_recviov (void *socket, struct iovec *iov, size_t *count, int flags);

/* ======================================================================== */
/* 7. Helpers                                                               */
/* ======================================================================== */

/* Z85 text encoding.  encode: size must be a multiple of 4, dest needs     */
/* size * 5 / 4 + 1 bytes.  decode: strlen must be a multiple of 5.  Both  */
/* return dest, or NULL on bad input.                                       */
ZMQ_EXPORT char *
zmq_z85_encode (char *dest, const uint8_t *data, size_t size);
ZMQ_EXPORT uint8_t *zmq_z85_decode (uint8_t *dest, const char *string);

/* CURVE keys as 40-character Z85 text (41-byte buffers).  0 on success.    */
ZMQ_EXPORT int zmq_curve_keypair (char *z85_public_key, char *z85_secret_key);
ZMQ_EXPORT int zmq_curve_public (char *z85_public_key,
                                 const char *z85_secret_key);

/* Thread-safe integer counter.                                             */
ZMQ_EXPORT void *zmq_atomic_counter_new (void);
ZMQ_EXPORT void zmq_atomic_counter_set (void *counter, int value);
ZMQ_EXPORT int zmq_atomic_counter_inc (void *counter); /* returns old value */
ZMQ_EXPORT int zmq_atomic_counter_dec (void *counter); /* 1 while non-zero, 0 once zero */
ZMQ_EXPORT int zmq_atomic_counter_value (void *counter);
ZMQ_EXPORT void zmq_atomic_counter_destroy (void **counter_p);

/* Timer sets: callbacks fired from zmq_timers_execute().                   */
#define ZMQ_HAVE_TIMERS

typedef void (zmq_timer_fn) (int timer_id, void *arg);

ZMQ_EXPORT void *zmq_timers_new (void);
ZMQ_EXPORT int zmq_timers_destroy (void **timers_p);
ZMQ_EXPORT int
zmq_timers_add (void *timers, size_t interval, zmq_timer_fn handler, void *arg);
ZMQ_EXPORT int zmq_timers_cancel (void *timers, int timer_id);
ZMQ_EXPORT int
zmq_timers_set_interval (void *timers, int timer_id, size_t interval);
ZMQ_EXPORT int zmq_timers_reset (void *timers, int timer_id);
ZMQ_EXPORT long zmq_timers_timeout (void *timers);
ZMQ_EXPORT int zmq_timers_execute (void *timers);

/* Undocumented utilities used by the perf tools: a microsecond stopwatch,  */
/* a sleep in whole seconds, and a minimal thread wrapper.                  */
ZMQ_EXPORT void *zmq_stopwatch_start (void);
ZMQ_EXPORT unsigned long zmq_stopwatch_intermediate (void *watch);
ZMQ_EXPORT unsigned long zmq_stopwatch_stop (void *watch); /* frees watch */
ZMQ_EXPORT void zmq_sleep (int seconds);

typedef void (zmq_thread_fn) (void *);

ZMQ_EXPORT void *zmq_threadstart (zmq_thread_fn *func, void *arg);
ZMQ_EXPORT void zmq_threadclose (void *thread);

/* ======================================================================== */
/* 8. DRAFT API                                                             */
/* ======================================================================== */
/* Unstable interfaces, visible only when ZMQ_BUILD_DRAFT_API is defined.   */
/* They follow the draft section of libzmq 4.3.5 and may change with it.    */

#ifdef ZMQ_BUILD_DRAFT_API

/* --- draft socket types ------------------------------------------------- */
#define ZMQ_SERVER 12
#define ZMQ_CLIENT 13
#define ZMQ_RADIO 14
#define ZMQ_DISH 15
#define ZMQ_GATHER 16
#define ZMQ_SCATTER 17
#define ZMQ_DGRAM 18
#define ZMQ_PEER 19
#define ZMQ_CHANNEL 20

/* --- draft socket options ----------------------------------------------- */
#define ZMQ_ZAP_ENFORCE_DOMAIN 93
#define ZMQ_LOOPBACK_FASTPATH 94
#define ZMQ_METADATA 95
#define ZMQ_MULTICAST_LOOP 96
#define ZMQ_ROUTER_NOTIFY 97
#define ZMQ_XPUB_MANUAL_LAST_VALUE 98
#define ZMQ_SOCKS_USERNAME 99
#define ZMQ_SOCKS_PASSWORD 100
#define ZMQ_IN_BATCH_SIZE 101
#define ZMQ_OUT_BATCH_SIZE 102
#define ZMQ_WSS_KEY_PEM 103
#define ZMQ_WSS_CERT_PEM 104
#define ZMQ_WSS_TRUST_PEM 105
#define ZMQ_WSS_HOSTNAME 106
#define ZMQ_WSS_TRUST_SYSTEM 107
#define ZMQ_ONLY_FIRST_SUBSCRIBE 108
#define ZMQ_RECONNECT_STOP 109
#define ZMQ_HELLO_MSG 110
#define ZMQ_DISCONNECT_MSG 111
#define ZMQ_PRIORITY 112
#define ZMQ_BUSY_POLL 113
#define ZMQ_HICCUP_MSG 114
#define ZMQ_XSUB_VERBOSE_UNSUBSCRIBE 115
#define ZMQ_TOPICS_COUNT 116
#define ZMQ_NORM_MODE 117
#define ZMQ_NORM_UNICAST_NACK 118
#define ZMQ_NORM_BUFFER_SIZE 119
#define ZMQ_NORM_SEGMENT_SIZE 120
#define ZMQ_NORM_BLOCK_SIZE 121
#define ZMQ_NORM_NUM_PARITY 122
#define ZMQ_NORM_NUM_AUTOPARITY 123
#define ZMQ_NORM_PUSH 124

/* Values of ZMQ_NORM_MODE.                                                 */
#define ZMQ_NORM_FIXED 0
#define ZMQ_NORM_CC 1
#define ZMQ_NORM_CCL 2
#define ZMQ_NORM_CCE 3
#define ZMQ_NORM_CCE_ECNONLY 4

/* Bits of ZMQ_RECONNECT_STOP.  (libzmq 4.3.4 had AFTER_DISCONNECT = 0x3;   */
/* 4.3.5 made it a distinct bit, 0x4, which is what we follow.)             */
#define ZMQ_RECONNECT_STOP_CONN_REFUSED 0x1
#define ZMQ_RECONNECT_STOP_HANDSHAKE_FAILED 0x2
#define ZMQ_RECONNECT_STOP_AFTER_DISCONNECT 0x4

/* Values of ZMQ_ROUTER_NOTIFY.                                             */
#define ZMQ_NOTIFY_CONNECT 1
#define ZMQ_NOTIFY_DISCONNECT 2

/* --- draft context option and calls ------------------------------------- */
#define ZMQ_ZERO_COPY_RECV 10

ZMQ_EXPORT int zmq_ctx_set_ext (void *context,
                                int option,
                                const void *optval,
                                size_t optvallen);
ZMQ_EXPORT int zmq_ctx_get_ext (void *context,
                                int option,
                                void *optval,
                                size_t *optvallen);

/* --- draft socket calls ------------------------------------------------- */
ZMQ_EXPORT int zmq_join (void *socket, const char *group);
ZMQ_EXPORT int zmq_leave (void *socket, const char *group);
ZMQ_EXPORT uint32_t zmq_connect_peer (void *socket, const char *endpoint);

/* --- draft message calls and property names ----------------------------- */
ZMQ_EXPORT int zmq_msg_set_routing_id (zmq_msg_t *msg, uint32_t routing_id);
ZMQ_EXPORT uint32_t zmq_msg_routing_id (zmq_msg_t *msg);
ZMQ_EXPORT int zmq_msg_set_group (zmq_msg_t *msg, const char *group);
ZMQ_EXPORT const char *zmq_msg_group (zmq_msg_t *msg);
ZMQ_EXPORT int
zmq_msg_init_buffer (zmq_msg_t *msg, const void *buf, size_t size);

/* Names understood by zmq_msg_gets().                                      */
#define ZMQ_MSG_PROPERTY_ROUTING_ID "Routing-Id"
#define ZMQ_MSG_PROPERTY_SOCKET_TYPE "Socket-Type"
#define ZMQ_MSG_PROPERTY_USER_ID "User-Id"
#define ZMQ_MSG_PROPERTY_PEER_ADDRESS "Peer-Address"

/* --- poller: waits on sockets (incl. thread-safe ones) and raw fds ------ */
#define ZMQ_HAVE_POLLER

typedef struct zmq_poller_event_t
{
    void *socket;    /* socket that is ready, or NULL for an fd entry */
    zmq_fd_t fd;     /* descriptor that is ready (fd entries only)    */
    void *user_data; /* value registered with the entry               */
    short events;    /* ZMQ_POLL* bits that fired                     */
} zmq_poller_event_t;

ZMQ_EXPORT void *zmq_poller_new (void);
ZMQ_EXPORT int zmq_poller_destroy (void **poller_p);
ZMQ_EXPORT int zmq_poller_size (void *poller);
ZMQ_EXPORT int
zmq_poller_add (void *poller, void *socket, void *user_data, short events);
ZMQ_EXPORT int zmq_poller_modify (void *poller, void *socket, short events);
ZMQ_EXPORT int zmq_poller_remove (void *poller, void *socket);
ZMQ_EXPORT int
zmq_poller_wait (void *poller, zmq_poller_event_t *event, long timeout);
ZMQ_EXPORT int zmq_poller_wait_all (void *poller,
                                    zmq_poller_event_t *events,
                                    int n_events,
                                    long timeout);
ZMQ_EXPORT int zmq_poller_fd (void *poller, zmq_fd_t *fd);
ZMQ_EXPORT int
zmq_poller_add_fd (void *poller, zmq_fd_t fd, void *user_data, short events);
ZMQ_EXPORT int zmq_poller_modify_fd (void *poller, zmq_fd_t fd, short events);
ZMQ_EXPORT int zmq_poller_remove_fd (void *poller, zmq_fd_t fd);

ZMQ_EXPORT int zmq_socket_get_peer_state (void *socket,
                                          const void *routing_id,
                                          size_t routing_id_size);

/* --- draft monitoring --------------------------------------------------- */
#define ZMQ_EVENT_PIPES_STATS 0x10000

#define ZMQ_CURRENT_EVENT_VERSION 1
#define ZMQ_CURRENT_EVENT_VERSION_DRAFT 2

#define ZMQ_EVENT_ALL_V1 ZMQ_EVENT_ALL
#define ZMQ_EVENT_ALL_V2 (ZMQ_EVENT_ALL_V1 | ZMQ_EVENT_PIPES_STATS)

ZMQ_EXPORT int zmq_socket_monitor_versioned (void *socket,
                                             const char *endpoint,
                                             uint64_t events,
                                             int event_version,
                                             int type);
ZMQ_EXPORT int zmq_socket_monitor_pipes_stats (void *socket);

/* --- zmq_poll() with a signal mask applied while waiting ---------------- */
#if !defined _WIN32
/* glibc hides sigset_t in strict ISO C mode (e.g. -std=c11 without a       */
/* POSIX feature macro); no sigset_t can exist there, so skip the prototype */
/* instead of failing to compile.                                           */
#if !defined __GLIBC__ || defined __USE_POSIX
ZMQ_EXPORT int zmq_ppoll (zmq_pollitem_t *items,
                          int nitems,
                          long timeout,
                          const sigset_t *sigmask);
#endif
#else
/* No sigset_t on Windows; the mask argument must be NULL there.            */
ZMQ_EXPORT int zmq_ppoll (zmq_pollitem_t *items,
                          int nitems,
                          long timeout,
                          const void *sigmask);
#endif

#endif /* ZMQ_BUILD_DRAFT_API */

#ifdef __cplusplus
}
#endif

#undef ZMQ_EXPORT

#endif /* __ZMQ_H_INCLUDED__ */
