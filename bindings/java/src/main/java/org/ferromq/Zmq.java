package org.ferromq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * zmq.h constants (numerically identical to libzmq 4.3) and library-wide functions.
 *
 * <p>Contract: every constant has the value of the {@code ZMQ_*} / {@code E*} macro of the
 * same name (without the prefix) in zmq.h on Linux; options are passed to
 * {@link Socket#setInt}, {@link Socket#getInt} and friends by these numbers.
 */
public final class Zmq {
    private Zmq() {}

    // --- send/recv flags ---
    /** ZMQ_DONTWAIT: fail with EAGAIN instead of blocking. */
    public static final int DONTWAIT = 1;
    /** ZMQ_SNDMORE: more frames of this message follow. */
    public static final int SNDMORE = 2;

    // --- poll events ---
    /** ZMQ_POLLIN. */
    public static final int POLLIN = 1;
    /** ZMQ_POLLOUT. */
    public static final int POLLOUT = 2;
    /** ZMQ_POLLERR. */
    public static final int POLLERR = 4;

    // --- context options ---
    /** ZMQ_IO_THREADS. */
    public static final int IO_THREADS = 1;
    /** ZMQ_MAX_SOCKETS. */
    public static final int MAX_SOCKETS = 2;
    /** ZMQ_SOCKET_LIMIT. */
    public static final int SOCKET_LIMIT = 3;
    /** ZMQ_MAX_MSGSZ. */
    public static final int MAX_MSGSZ = 5;
    /** ZMQ_MSG_T_SIZE. */
    public static final int MSG_T_SIZE = 6;

    // --- socket options ---
    /** ZMQ_AFFINITY (long). */
    public static final int AFFINITY = 4;
    /** ZMQ_ROUTING_ID (bytes). */
    public static final int ROUTING_ID = 5;
    /** ZMQ_SUBSCRIBE (bytes). */
    public static final int SUBSCRIBE = 6;
    /** ZMQ_UNSUBSCRIBE (bytes). */
    public static final int UNSUBSCRIBE = 7;
    /** ZMQ_RATE (int). */
    public static final int RATE = 8;
    /** ZMQ_RECOVERY_IVL (int). */
    public static final int RECOVERY_IVL = 9;
    /** ZMQ_SNDBUF (int). */
    public static final int SNDBUF = 11;
    /** ZMQ_RCVBUF (int). */
    public static final int RCVBUF = 12;
    /** ZMQ_RCVMORE (int). */
    public static final int RCVMORE = 13;
    /** ZMQ_FD (int). */
    public static final int FD = 14;
    /** ZMQ_EVENTS (int). */
    public static final int EVENTS = 15;
    /** ZMQ_TYPE (int). */
    public static final int TYPE = 16;
    /** ZMQ_LINGER (int, ms). */
    public static final int LINGER = 17;
    /** ZMQ_RECONNECT_IVL (int, ms). */
    public static final int RECONNECT_IVL = 18;
    /** ZMQ_BACKLOG (int). */
    public static final int BACKLOG = 19;
    /** ZMQ_RECONNECT_IVL_MAX (int, ms). */
    public static final int RECONNECT_IVL_MAX = 21;
    /** ZMQ_MAXMSGSIZE (long). */
    public static final int MAXMSGSIZE = 22;
    /** ZMQ_SNDHWM (int). */
    public static final int SNDHWM = 23;
    /** ZMQ_RCVHWM (int). */
    public static final int RCVHWM = 24;
    /** ZMQ_MULTICAST_HOPS (int). */
    public static final int MULTICAST_HOPS = 25;
    /** ZMQ_RCVTIMEO (int, ms). */
    public static final int RCVTIMEO = 27;
    /** ZMQ_SNDTIMEO (int, ms). */
    public static final int SNDTIMEO = 28;
    /** ZMQ_IPV4ONLY (int, deprecated). */
    public static final int IPV4ONLY = 31;
    /** ZMQ_LAST_ENDPOINT (string). */
    public static final int LAST_ENDPOINT = 32;
    /** ZMQ_ROUTER_MANDATORY (int). */
    public static final int ROUTER_MANDATORY = 33;
    /** ZMQ_TCP_KEEPALIVE (int). */
    public static final int TCP_KEEPALIVE = 34;
    /** ZMQ_TCP_KEEPALIVE_CNT (int). */
    public static final int TCP_KEEPALIVE_CNT = 35;
    /** ZMQ_TCP_KEEPALIVE_IDLE (int). */
    public static final int TCP_KEEPALIVE_IDLE = 36;
    /** ZMQ_TCP_KEEPALIVE_INTVL (int). */
    public static final int TCP_KEEPALIVE_INTVL = 37;
    /** ZMQ_IMMEDIATE (int). */
    public static final int IMMEDIATE = 39;
    /** ZMQ_XPUB_VERBOSE (int). */
    public static final int XPUB_VERBOSE = 40;
    /** ZMQ_ROUTER_RAW (int). */
    public static final int ROUTER_RAW = 41;
    /** ZMQ_IPV6 (int). */
    public static final int IPV6 = 42;
    /** ZMQ_MECHANISM (int: NULL=0, PLAIN=1, CURVE=2). */
    public static final int MECHANISM = 43;
    /** ZMQ_PLAIN_SERVER (int). */
    public static final int PLAIN_SERVER = 44;
    /** ZMQ_PLAIN_USERNAME (string). */
    public static final int PLAIN_USERNAME = 45;
    /** ZMQ_PLAIN_PASSWORD (string). */
    public static final int PLAIN_PASSWORD = 46;
    /** ZMQ_CURVE_SERVER (int). */
    public static final int CURVE_SERVER = 47;
    /** ZMQ_CURVE_PUBLICKEY (32 bytes or 40-char Z85). */
    public static final int CURVE_PUBLICKEY = 48;
    /** ZMQ_CURVE_SECRETKEY (32 bytes or 40-char Z85). */
    public static final int CURVE_SECRETKEY = 49;
    /** ZMQ_CURVE_SERVERKEY (32 bytes or 40-char Z85). */
    public static final int CURVE_SERVERKEY = 50;
    /** ZMQ_PROBE_ROUTER (int). */
    public static final int PROBE_ROUTER = 51;
    /** ZMQ_REQ_CORRELATE (int). */
    public static final int REQ_CORRELATE = 52;
    /** ZMQ_REQ_RELAXED (int). */
    public static final int REQ_RELAXED = 53;
    /** ZMQ_CONFLATE (int). */
    public static final int CONFLATE = 54;
    /** ZMQ_ZAP_DOMAIN (string). */
    public static final int ZAP_DOMAIN = 55;
    /** ZMQ_ROUTER_HANDOVER (int). */
    public static final int ROUTER_HANDOVER = 56;
    /** ZMQ_TOS (int). */
    public static final int TOS = 57;
    /** ZMQ_CONNECT_ROUTING_ID (bytes). */
    public static final int CONNECT_ROUTING_ID = 61;
    /** ZMQ_HANDSHAKE_IVL (int, ms). */
    public static final int HANDSHAKE_IVL = 66;
    /** ZMQ_SOCKS_PROXY (string). */
    public static final int SOCKS_PROXY = 68;
    /** ZMQ_XPUB_NODROP (int). */
    public static final int XPUB_NODROP = 69;
    /** ZMQ_BLOCKY (ctx option). */
    public static final int BLOCKY = 70;
    /** ZMQ_XPUB_MANUAL (int). */
    public static final int XPUB_MANUAL = 71;
    /** ZMQ_XPUB_WELCOME_MSG (bytes). */
    public static final int XPUB_WELCOME_MSG = 72;
    /** ZMQ_STREAM_NOTIFY (int). */
    public static final int STREAM_NOTIFY = 73;
    /** ZMQ_INVERT_MATCHING (int). */
    public static final int INVERT_MATCHING = 74;
    /** ZMQ_HEARTBEAT_IVL (int, ms). */
    public static final int HEARTBEAT_IVL = 75;
    /** ZMQ_HEARTBEAT_TTL (int, ms). */
    public static final int HEARTBEAT_TTL = 76;
    /** ZMQ_HEARTBEAT_TIMEOUT (int, ms). */
    public static final int HEARTBEAT_TIMEOUT = 77;
    /** ZMQ_XPUB_VERBOSER (int). */
    public static final int XPUB_VERBOSER = 78;
    /** ZMQ_CONNECT_TIMEOUT (int, ms). */
    public static final int CONNECT_TIMEOUT = 79;
    /** ZMQ_TCP_MAXRT (int, ms). */
    public static final int TCP_MAXRT = 80;
    /** ZMQ_THREAD_SAFE (int, read-only). */
    public static final int THREAD_SAFE = 81;
    /** ZMQ_MULTICAST_MAXTPDU (int). */
    public static final int MULTICAST_MAXTPDU = 84;
    /** ZMQ_BINDTODEVICE (string). */
    public static final int BINDTODEVICE = 92;

    // --- security mechanisms (values of MECHANISM) ---
    /** ZMQ_NULL. */
    public static final int MECHANISM_NULL = 0;
    /** ZMQ_PLAIN. */
    public static final int MECHANISM_PLAIN = 1;
    /** ZMQ_CURVE. */
    public static final int MECHANISM_CURVE = 2;

    // --- monitor events ---
    /** ZMQ_EVENT_CONNECTED. */
    public static final int EVENT_CONNECTED = 0x0001;
    /** ZMQ_EVENT_CONNECT_DELAYED. */
    public static final int EVENT_CONNECT_DELAYED = 0x0002;
    /** ZMQ_EVENT_CONNECT_RETRIED. */
    public static final int EVENT_CONNECT_RETRIED = 0x0004;
    /** ZMQ_EVENT_LISTENING. */
    public static final int EVENT_LISTENING = 0x0008;
    /** ZMQ_EVENT_BIND_FAILED. */
    public static final int EVENT_BIND_FAILED = 0x0010;
    /** ZMQ_EVENT_ACCEPTED. */
    public static final int EVENT_ACCEPTED = 0x0020;
    /** ZMQ_EVENT_ACCEPT_FAILED. */
    public static final int EVENT_ACCEPT_FAILED = 0x0040;
    /** ZMQ_EVENT_CLOSED. */
    public static final int EVENT_CLOSED = 0x0080;
    /** ZMQ_EVENT_CLOSE_FAILED. */
    public static final int EVENT_CLOSE_FAILED = 0x0100;
    /** ZMQ_EVENT_DISCONNECTED. */
    public static final int EVENT_DISCONNECTED = 0x0200;
    /** ZMQ_EVENT_MONITOR_STOPPED. */
    public static final int EVENT_MONITOR_STOPPED = 0x0400;
    /** ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL. */
    public static final int EVENT_HANDSHAKE_FAILED_NO_DETAIL = 0x0800;
    /** ZMQ_EVENT_HANDSHAKE_SUCCEEDED. */
    public static final int EVENT_HANDSHAKE_SUCCEEDED = 0x1000;
    /** ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL. */
    public static final int EVENT_HANDSHAKE_FAILED_PROTOCOL = 0x2000;
    /** ZMQ_EVENT_HANDSHAKE_FAILED_AUTH. */
    public static final int EVENT_HANDSHAKE_FAILED_AUTH = 0x4000;
    /** ZMQ_EVENT_ALL. */
    public static final int EVENT_ALL = 0xFFFF;

    // --- errno values (Linux) ---
    /** EINTR. */
    public static final int EINTR = 4;
    /** EAGAIN. */
    public static final int EAGAIN = 11;
    /** EFAULT. */
    public static final int EFAULT = 14;
    /** EINVAL. */
    public static final int EINVAL = 22;
    /** EMFILE. */
    public static final int EMFILE = 24;
    /** ENOTSOCK. */
    public static final int ENOTSOCK = 88;
    /** EMSGSIZE. */
    public static final int EMSGSIZE = 90;
    /** EPROTONOSUPPORT. */
    public static final int EPROTONOSUPPORT = 93;
    /** ENOTSUP (EOPNOTSUPP on Linux). */
    public static final int ENOTSUP = 95;
    /** EADDRINUSE. */
    public static final int EADDRINUSE = 98;
    /** EADDRNOTAVAIL. */
    public static final int EADDRNOTAVAIL = 99;
    /** ENOENT. */
    public static final int ENOENT = 2;
    /** ECONNREFUSED. */
    public static final int ECONNREFUSED = 111;
    /** EHOSTUNREACH. */
    public static final int EHOSTUNREACH = 113;
    private static final int HAUSNUMERO = 156384712;
    /** EFSM: operation not valid in the socket's current state. */
    public static final int EFSM = HAUSNUMERO + 51;
    /** ENOCOMPATPROTO. */
    public static final int ENOCOMPATPROTO = HAUSNUMERO + 52;
    /** ETERM: the context was terminated. */
    public static final int ETERM = HAUSNUMERO + 53;
    /** EMTHREAD. */
    public static final int EMTHREAD = HAUSNUMERO + 54;

    /** Path (or soname) of the libzmq.so.5 this binding loaded. */
    public static String libraryPath() {
        return Native.LIB_PATH;
    }

    /** {@code zmq_version} as {major, minor, patch}. */
    public static int[] version() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v = a.allocate(JAVA_INT, 3);
            Native.VERSION.invokeExact(v, v.asSlice(4), v.asSlice(8));
            return new int[] {v.getAtIndex(JAVA_INT, 0), v.getAtIndex(JAVA_INT, 1),
                    v.getAtIndex(JAVA_INT, 2)};
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code zmq_version} as "major.minor.patch". */
    public static String versionString() {
        int[] v = version();
        return v[0] + "." + v[1] + "." + v[2];
    }

    /** {@code zmq_has(capability)}: true when the library supports e.g. "curve", "ipc". */
    public static boolean has(String capability) {
        try (Arena a = Arena.ofConfined()) {
            return (int) Native.HAS.invokeExact(a.allocateFrom(capability)) != 0;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code zmq_strerror(errno)}: the library's text for an errno value (never null). */
    public static String strerror(int errno) {
        try {
            MemorySegment s = (MemorySegment) Native.STRERROR.invokeExact(errno);
            if (s.equals(MemorySegment.NULL)) return "errno " + errno;
            return s.reinterpret(4096).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * {@code zmq_proxy(frontend, backend, capture)}: runs the built-in proxy until the
     * context is terminated; then throws ZmqException with errno ETERM (as libzmq does).
     * {@code capture} may be null.
     */
    public static void proxy(Socket frontend, Socket backend, Socket capture) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Native.newCapture(a);
            int rc = (int) Native.PROXY_E.invokeExact(cap, frontend.handle(), backend.handle(),
                    capture == null ? MemorySegment.NULL : capture.handle());
            if (rc == -1) throw new ZmqException("zmq_proxy", Native.errno(cap));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
