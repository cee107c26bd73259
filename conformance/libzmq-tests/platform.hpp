/* What libzmq's own tests read from the platform header of a Linux build (they include
 * it before zmq.h; ZMQ_CUSTOM_PLATFORM_HPP makes them take this one). Only the macros
 * the tests look at: transports and features a Linux libzmq 4.3 has. */
#ifndef FERROMQ_LIBZMQ_TESTS_PLATFORM_HPP
#define FERROMQ_LIBZMQ_TESTS_PLATFORM_HPP
#define ZMQ_HAVE_LINUX 1
#define ZMQ_HAVE_IPC 1
#define ZMQ_HAVE_CURVE 1
#define ZMQ_USE_TWEETNACL 1
#define ZMQ_HAVE_SO_PEERCRED 1
#define ZMQ_HAVE_SO_KEEPALIVE 1
#define ZMQ_HAVE_TCP_KEEPCNT 1
#define ZMQ_HAVE_TCP_KEEPIDLE 1
#define ZMQ_HAVE_TCP_KEEPINTVL 1
#define ZMQ_HAVE_SOCK_CLOEXEC 1
#define ZMQ_HAVE_EVENTFD 1
#define ZMQ_HAVE_UIO 1
#define ZMQ_HAVE_STRNLEN 1
#define HAVE_FORK 1
#define ZMQ_CACHELINE_SIZE 64
#endif
