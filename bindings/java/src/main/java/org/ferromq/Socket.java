package org.ferromq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A ZeroMQ socket ({@code zmq_socket}), created by {@link Context#socket(SocketType)}.
 *
 * <p>Contract:
 * <ul>
 * <li>Like a libzmq socket, a Socket is <b>not thread-safe</b>: use it from one thread at a
 *     time (handing it over between threads with a happens-before edge is fine).</li>
 * <li>Failures throw {@link ZmqException} with the library's errno, with one exception: when
 *     a send or receive cannot complete now ({@code EAGAIN}: {@link Zmq#DONTWAIT} given and
 *     the call would block, or SNDTIMEO/RCVTIMEO expired) the send methods return
 *     {@code false} and the receive methods return {@code -1} (or {@code null}); that path
 *     allocates nothing. {@code EINTR} is retried internally.</li>
 * <li>Sending or receiving with a reused {@code byte[]}, a direct {@code ByteBuffer}, a
 *     native {@code MemorySegment} or a {@link Message} allocates nothing per message: the
 *     data is handed to the library in place (heap arrays are passed to a non-blocking
 *     critical downcall directly; only when that would block is the data copied once into
 *     a per-socket native buffer for the blocking call).</li>
 * <li>Receive methods taking a buffer return the size of the message, which can be larger
 *     than the buffer: then the message was truncated to the buffer, as in {@code zmq_recv}.</li>
 * </ul>
 */
public final class Socket implements AutoCloseable {
    private static final int EAGAIN = Zmq.EAGAIN;
    private static final int EINTR = Zmq.EINTR;
    private static final int DONTWAIT = Zmq.DONTWAIT;
    private static final long OPT_BUF = 1024;

    private final Context context;
    private final SocketType type;
    private final MemorySegment handle;
    /** Per-socket native memory; GC-managed so a racing close never faults a blocked call. */
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment capture;
    private final MemorySegment optBuf;
    private final MemorySegment optLen;
    private final MemorySegment msg;
    private MemorySegment scratch;
    // The heap segments of the last two arrays sent from / received into: a multipart
    // message (routing id + payload) alternates between two reused arrays.
    private byte[] sendArr;
    private MemorySegment sendArrSeg;
    private byte[] sendArr2;
    private MemorySegment sendArrSeg2;
    private byte[] recvArr;
    private MemorySegment recvArrSeg;
    private byte[] recvArr2;
    private MemorySegment recvArrSeg2;
    private ByteBuffer directBuf;
    private long directBase;
    private boolean closed;
    /** Blocking heap sends left that skip the non-blocking attempt (set when it hit HWM). */
    private int sendSkipFast;
    private static final int SKIP_FAST_AFTER_EAGAIN = 64;

    Socket(Context context, SocketType type) {
        this.context = context;
        this.type = type;
        this.capture = Native.newCapture(arena);
        this.optBuf = arena.allocate(OPT_BUF, 8);
        this.optLen = arena.allocate(JAVA_LONG);
        this.msg = arena.allocate(Native.MSG_SIZE, 8);
        this.scratch = arena.allocate(256, 8);
        MemorySegment h;
        try {
            h = (MemorySegment) Native.SOCKET_E.invokeExact(capture, context.handle(), type.value());
            if (h.equals(MemorySegment.NULL)) {
                throw new ZmqException("zmq_socket", Native.errno(capture));
            }
            int rc = (int) Native.MSG_INIT.invokeExact(msg);
            assert rc == 0;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        this.handle = h;
    }

    /** The socket type this socket was created with. */
    public SocketType type() {
        return type;
    }

    /** The context that created this socket. */
    public Context context() {
        return context;
    }

    MemorySegment handle() {
        if (closed) throw new ZmqException("socket", Zmq.ENOTSOCK);
        return handle;
    }

    // ------------------------------------------------------------------------------------
    // endpoints

    /** {@code zmq_bind(endpoint)}; use {@link #lastEndpoint()} to learn a wildcard port. */
    public void bind(String endpoint) {
        endpointCall(Native.BIND_E, "zmq_bind", endpoint);
    }

    /** {@code zmq_connect(endpoint)}; asynchronous: returns before the peer is reached. */
    public void connect(String endpoint) {
        endpointCall(Native.CONNECT_E, "zmq_connect", endpoint);
    }

    /** {@code zmq_unbind(endpoint)}; throws ZmqException ENOENT if not bound there. */
    public void unbind(String endpoint) {
        endpointCall(Native.UNBIND_E, "zmq_unbind", endpoint);
    }

    /** {@code zmq_disconnect(endpoint)}; throws ZmqException ENOENT if not connected there. */
    public void disconnect(String endpoint) {
        endpointCall(Native.DISCONNECT_E, "zmq_disconnect", endpoint);
    }

    private void endpointCall(java.lang.invoke.MethodHandle mh, String name, String endpoint) {
        Objects.requireNonNull(endpoint, "endpoint");
        MemorySegment h = handle();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ep = a.allocateFrom(endpoint);
            int rc = (int) mh.invokeExact(capture, h, ep);
            if (rc == -1) throw new ZmqException(name + "(" + endpoint + ")", Native.errno(capture));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The endpoint of the last bind or connect (ZMQ_LAST_ENDPOINT), e.g. with the real port. */
    public String lastEndpoint() {
        return getString(Zmq.LAST_ENDPOINT);
    }

    // ------------------------------------------------------------------------------------
    // send

    /** Sends {@code data} as a whole single-frame message; blocks until queued. */
    public boolean send(byte[] data) {
        return send(data, 0, data.length, 0);
    }

    /** Sends {@code data} as a frame with the given flags ({@link Zmq#DONTWAIT}, {@link Zmq#SNDMORE}). */
    public boolean send(byte[] data, int flags) {
        return send(data, 0, data.length, flags);
    }

    /** Sends {@code data} followed by more frames ({@code SNDMORE}); blocks until queued. */
    public boolean sendMore(byte[] data) {
        return send(data, 0, data.length, Zmq.SNDMORE);
    }

    /** Sends the UTF-8 bytes of {@code s} as one frame with the given flags. */
    public boolean send(String s, int flags) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return send(b, 0, b.length, flags);
    }

    /**
     * Sends {@code len} bytes of {@code data} from {@code off} as one frame.
     *
     * @return true when queued; false on EAGAIN (DONTWAIT and would block, or SNDTIMEO expired)
     * @throws ZmqException on any other error (e.g. EFSM, ETERM, EHOSTUNREACH)
     */
    public boolean send(byte[] data, int off, int len, int flags) {
        Objects.checkFromIndexSize(off, len, data.length);
        MemorySegment seg = sendArr == data ? sendArrSeg
                : sendArr2 == data ? sendArrSeg2 : cacheSendArray(data);
        if (off != 0) seg = seg.asSlice(off);
        return sendHeap(seg, len, flags);
    }

    private MemorySegment cacheSendArray(byte[] data) {
        sendArr2 = sendArr;
        sendArrSeg2 = sendArrSeg;
        sendArr = data;
        return sendArrSeg = MemorySegment.ofArray(data);
    }

    /**
     * Sends {@code seg} (all {@code byteSize()} bytes) as one frame; a native segment is
     * passed to the library in place, a heap segment as {@link #send(byte[], int, int, int)}.
     *
     * @return true when queued; false on EAGAIN
     */
    public boolean send(MemorySegment seg, int flags) {
        long len = seg.byteSize();
        if (!seg.isNative()) return sendHeap(seg, len, flags);
        MemorySegment h = handle();
        try {
            while (true) {
                int rc = (flags & DONTWAIT) != 0
                        ? (int) Native.SEND_CRIT_E.invokeExact(capture, h, seg, len, flags)
                        : (int) Native.SEND_E.invokeExact(capture, h, seg, len, flags);
                if (rc >= 0) return true;
                int e = Native.errno(capture);
                if (e == EAGAIN) return false;
                if (e != EINTR) throw new ZmqException("zmq_send", e);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Sends the bytes between {@code buf}'s position and limit as one frame; on success the
     * position is advanced to the limit. Direct buffers are passed in place.
     *
     * @return true when queued; false on EAGAIN (position unchanged)
     */
    public boolean send(ByteBuffer buf, int flags) {
        int pos = buf.position();
        int len = buf.limit() - pos;
        boolean ok;
        if (buf.hasArray()) {
            ok = send(buf.array(), buf.arrayOffset() + pos, len, flags);
        } else if (buf.isDirect()) {
            ok = sendAddress(directAddress(buf) + pos, len, flags);
            Reference.reachabilityFence(buf);
        } else {
            byte[] copy = new byte[len];
            buf.duplicate().get(copy);
            ok = send(copy, 0, len, flags);
        }
        if (ok) buf.position(buf.limit());
        return ok;
    }

    /** Sends a {@link Message}; on success the message becomes empty (zmq_msg_send semantics). */
    public boolean send(Message m, int flags) {
        MemorySegment h = handle();
        MemorySegment ms = m.segment();
        try {
            while (true) {
                int rc = (flags & DONTWAIT) != 0
                        ? (int) Native.MSG_SEND_CRIT_E.invokeExact(capture, ms, h, flags)
                        : (int) Native.MSG_SEND_E.invokeExact(capture, ms, h, flags);
                if (rc >= 0) return true;
                int e = Native.errno(capture);
                if (e == EAGAIN) return false;
                if (e != EINTR) throw new ZmqException("zmq_msg_send", e);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private boolean sendHeap(MemorySegment seg, long len, int flags) {
        MemorySegment h = handle();
        try {
            int rc;
            int e;
            if (sendSkipFast == 0 || (flags & DONTWAIT) != 0) {
                // Fast path: non-blocking critical call straight from the Java heap, no copy.
                rc = (int) Native.SEND_CRIT_E.invokeExact(capture, h, seg, len, flags | DONTWAIT);
                if (rc >= 0) return true;
                e = Native.errno(capture);
                if (e != EAGAIN && e != EINTR) throw new ZmqException("zmq_send", e);
                if ((flags & DONTWAIT) != 0 && e == EAGAIN) return false;
                // At HWM: the next sends would fail the fast path too; go straight to the
                // blocking call for a while instead of paying two calls per message.
                sendSkipFast = SKIP_FAST_AFTER_EAGAIN;
            } else {
                sendSkipFast--;
            }
            return sendBlocking(h, seg, len, flags);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Slow path of sendHeap: copy once into native memory and make the (possibly blocking)
     * call. A separate method on purpose: as a cold branch inside sendHeap/recvHeap the
     * downcall was not inlined and its capture-segment check allocated ~40 bytes per call
     * (seen with JFR on libzmq); compiled on its own it allocates nothing.
     */
    private boolean sendBlocking(MemorySegment h, MemorySegment seg, long len, int flags) {
        MemorySegment s = scratch(len);
        MemorySegment.copy(seg, 0, s, 0, len);
        try {
            while (true) {
                int rc = (int) Native.SEND_E.invokeExact(capture, h, s, len, flags);
                if (rc >= 0) return true;
                int e = Native.errno(capture);
                if (e == EAGAIN) return false;
                if (e != EINTR) throw new ZmqException("zmq_send", e);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private boolean sendAddress(long addr, long len, int flags) {
        MemorySegment h = handle();
        try {
            while (true) {
                int rc = (int) Native.SEND_A_E.invokeExact(capture, h, addr, len, flags);
                if (rc >= 0) return true;
                int e = Native.errno(capture);
                if (e == EAGAIN) return false;
                if (e != EINTR) throw new ZmqException("zmq_send", e);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    // ------------------------------------------------------------------------------------
    // receive

    /**
     * Receives one frame into {@code buf}.
     *
     * @return the frame's size (may exceed {@code buf.length}: truncated), or -1 on EAGAIN
     */
    public int recv(byte[] buf, int flags) {
        return recv(buf, 0, buf.length, flags);
    }

    /**
     * Receives one frame into {@code buf[off, off+len)}.
     *
     * @return the frame's size (may exceed {@code len}: truncated), or -1 on EAGAIN
     * @throws ZmqException on any other error
     */
    public int recv(byte[] buf, int off, int len, int flags) {
        Objects.checkFromIndexSize(off, len, buf.length);
        MemorySegment seg = recvArr == buf ? recvArrSeg
                : recvArr2 == buf ? recvArrSeg2 : cacheRecvArray(buf);
        if (off != 0) seg = seg.asSlice(off);
        return recvHeap(seg, len, flags);
    }

    private MemorySegment cacheRecvArray(byte[] buf) {
        recvArr2 = recvArr;
        recvArrSeg2 = recvArrSeg;
        recvArr = buf;
        return recvArrSeg = MemorySegment.ofArray(buf);
    }

    /**
     * Receives one frame into {@code seg} (native: in place; heap: as for byte[]).
     *
     * @return the frame's size (may exceed {@code seg.byteSize()}: truncated), or -1 on EAGAIN
     */
    public int recv(MemorySegment seg, int flags) {
        if (seg.isReadOnly()) throw new IllegalArgumentException("read-only segment");
        long len = seg.byteSize();
        if (!seg.isNative()) return recvHeap(seg, len, flags);
        MemorySegment h = handle();
        try {
            while (true) {
                int rc = (flags & DONTWAIT) != 0
                        ? (int) Native.RECV_CRIT_E.invokeExact(capture, h, seg, len, flags)
                        : (int) Native.RECV_E.invokeExact(capture, h, seg, len, flags);
                if (rc >= 0) return rc;
                int e = Native.errno(capture);
                if (e == EAGAIN) return -1;
                if (e != EINTR) throw new ZmqException("zmq_recv", e);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Receives one frame into {@code buf} between position and limit; the position advances
     * by the number of bytes stored (min of frame size and remaining).
     *
     * @return the frame's size (may exceed the remaining space: truncated), or -1 on EAGAIN
     */
    public int recv(ByteBuffer buf, int flags) {
        if (buf.isReadOnly()) throw new ReadOnlyBufferException();
        int pos = buf.position();
        int len = buf.limit() - pos;
        int n;
        if (buf.hasArray()) {
            n = recv(buf.array(), buf.arrayOffset() + pos, len, flags);
        } else {
            n = recvAddress(directAddress(buf) + pos, len, flags);
            Reference.reachabilityFence(buf);
        }
        if (n >= 0) buf.position(pos + Math.min(n, len));
        return n;
    }

    /**
     * Receives one frame into {@code m} (replacing its content); zero-copy: read it through
     * {@link Message#data()}.
     *
     * @return the frame's size, or -1 on EAGAIN
     */
    public int recv(Message m, int flags) {
        return msgRecv(m.segment(), flags);
    }

    /**
     * Receives one whole frame as a new array (any size).
     *
     * @return the frame, or null on EAGAIN
     */
    public byte[] recv(int flags) {
        int n = msgRecv(msg, flags);
        if (n < 0) return null;
        try {
            MemorySegment data = ((MemorySegment) Native.MSG_DATA.invokeExact(msg)).reinterpret(n);
            byte[] out = new byte[n];
            MemorySegment.copy(data, JAVA_BYTE, 0, out, 0, n);
            if (n > 4096) { // do not pin a large buffer until the next receive
                int rc = (int) Native.MSG_CLOSE.invokeExact(msg);
                rc |= (int) Native.MSG_INIT.invokeExact(msg);
                assert rc == 0;
            }
            return out;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Receives one whole frame (blocking) and decodes it as UTF-8; null on EAGAIN (RCVTIMEO). */
    public String recvString() {
        return recvString(0);
    }

    /** Receives one whole frame with {@code flags} as UTF-8; null on EAGAIN. */
    public String recvString(int flags) {
        byte[] b = recv(flags);
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    /** True when the last frame received has more frames following (ZMQ_RCVMORE). */
    public boolean hasReceiveMore() {
        return getInt(Zmq.RCVMORE) != 0;
    }

    private int recvHeap(MemorySegment seg, long len, int flags) {
        MemorySegment h = handle();
        try {
            int rc = (int) Native.RECV_CRIT_E.invokeExact(capture, h, seg, len, flags | DONTWAIT);
            if (rc >= 0) return rc;
            int e = Native.errno(capture);
            if (e != EAGAIN && e != EINTR) throw new ZmqException("zmq_recv", e);
            if ((flags & DONTWAIT) != 0 && e == EAGAIN) return -1;
            return recvBlocking(h, seg, len, flags);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Slow path of recvHeap (see {@link #sendBlocking}): blocking receive into native memory, then copy. */
    private int recvBlocking(MemorySegment h, MemorySegment seg, long len, int flags) {
        MemorySegment s = scratch(len);
        try {
            while (true) {
                int rc = (int) Native.RECV_E.invokeExact(capture, h, s, len, flags);
                if (rc >= 0) {
                    MemorySegment.copy(s, 0, seg, 0, Math.min(rc, len));
                    return rc;
                }
                int e = Native.errno(capture);
                if (e == EAGAIN) return -1;
                if (e != EINTR) throw new ZmqException("zmq_recv", e);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private int recvAddress(long addr, long len, int flags) {
        MemorySegment h = handle();
        try {
            while (true) {
                int rc = (int) Native.RECV_A_E.invokeExact(capture, h, addr, len, flags);
                if (rc >= 0) return rc;
                int e = Native.errno(capture);
                if (e == EAGAIN) return -1;
                if (e != EINTR) throw new ZmqException("zmq_recv", e);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private int msgRecv(MemorySegment m, int flags) {
        MemorySegment h = handle();
        try {
            while (true) {
                int rc = (flags & DONTWAIT) != 0
                        ? (int) Native.MSG_RECV_CRIT_E.invokeExact(capture, m, h, flags)
                        : (int) Native.MSG_RECV_E.invokeExact(capture, m, h, flags);
                if (rc >= 0) return rc;
                int e = Native.errno(capture);
                if (e == EAGAIN) return -1;
                if (e != EINTR) throw new ZmqException("zmq_msg_recv", e);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private MemorySegment scratch(long len) {
        MemorySegment s = scratch;
        if (s.byteSize() < len) {
            long cap = Math.max(len, s.byteSize() * 2);
            scratch = s = arena.allocate(cap, 8);
        }
        return s;
    }

    private long directAddress(ByteBuffer buf) {
        if (buf == directBuf) return directBase;
        long base = MemorySegment.ofBuffer(buf).address() - buf.position();
        directBuf = buf;
        directBase = base;
        return base;
    }

    // ------------------------------------------------------------------------------------
    // options

    /** {@code zmq_setsockopt} with a C int value. */
    public void setInt(int option, int value) {
        optBuf.set(JAVA_INT, 0, value);
        setRaw(option, optBuf, 4);
    }

    /** {@code zmq_getsockopt} of a C int option. */
    public int getInt(int option) {
        getRaw(option, 4);
        return optBuf.get(JAVA_INT, 0);
    }

    /** {@code zmq_setsockopt} with an int64/uint64 value (e.g. MAXMSGSIZE, AFFINITY). */
    public void setLong(int option, long value) {
        optBuf.set(JAVA_LONG, 0, value);
        setRaw(option, optBuf, 8);
    }

    /** {@code zmq_getsockopt} of an int64/uint64 option. */
    public long getLong(int option) {
        getRaw(option, 8);
        return optBuf.get(JAVA_LONG, 0);
    }

    /** {@code zmq_setsockopt} with a binary value (e.g. ROUTING_ID, SUBSCRIBE; may be empty). */
    public void setBytes(int option, byte[] value) {
        if (value.length > OPT_BUF) throw new IllegalArgumentException("option value too long");
        MemorySegment.copy(value, 0, optBuf, JAVA_BYTE, 0, value.length);
        setRaw(option, optBuf, value.length);
    }

    /** {@code zmq_getsockopt} of a binary option (up to 1024 bytes). */
    public byte[] getBytes(int option) {
        long n = getRaw(option, OPT_BUF);
        return optBuf.asSlice(0, n).toArray(JAVA_BYTE);
    }

    /** {@code zmq_setsockopt} with the UTF-8 bytes of {@code value} (no NUL terminator). */
    public void setString(int option, String value) {
        setBytes(option, value.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code zmq_getsockopt} of a string option; the trailing NUL is stripped. */
    public String getString(int option) {
        long n = getRaw(option, OPT_BUF);
        int end = 0;
        while (end < n && optBuf.get(JAVA_BYTE, end) != 0) end++;
        return new String(optBuf.asSlice(0, end).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
    }

    private void setRaw(int option, MemorySegment value, long len) {
        MemorySegment h = handle();
        try {
            int rc = (int) Native.SETSOCKOPT_E.invokeExact(capture, h, option, value, len);
            if (rc == -1) {
                throw new ZmqException("zmq_setsockopt(" + option + ")", Native.errno(capture));
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private long getRaw(int option, long len) {
        MemorySegment h = handle();
        optLen.set(JAVA_LONG, 0, len);
        try {
            int rc = (int) Native.GETSOCKOPT_E.invokeExact(capture, h, option, optBuf, optLen);
            if (rc == -1) {
                throw new ZmqException("zmq_getsockopt(" + option + ")", Native.errno(capture));
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        return optLen.get(JAVA_LONG, 0);
    }

    // convenience setters for the options almost every program sets

    /** ZMQ_LINGER in ms (-1 = wait forever, 0 = drop pending messages at close). */
    public void setLinger(int ms) {
        setInt(Zmq.LINGER, ms);
    }

    /** ZMQ_SNDHWM (0 = unlimited). */
    public void setSendHwm(int hwm) {
        setInt(Zmq.SNDHWM, hwm);
    }

    /** ZMQ_RCVHWM (0 = unlimited). */
    public void setReceiveHwm(int hwm) {
        setInt(Zmq.RCVHWM, hwm);
    }

    /** ZMQ_RCVTIMEO in ms (-1 = block forever): a blocking receive returns -1/null after it. */
    public void setReceiveTimeout(int ms) {
        setInt(Zmq.RCVTIMEO, ms);
    }

    /** ZMQ_SNDTIMEO in ms (-1 = block forever): a blocking send returns false after it. */
    public void setSendTimeout(int ms) {
        setInt(Zmq.SNDTIMEO, ms);
    }

    /** ZMQ_ROUTING_ID. */
    public void setRoutingId(byte[] id) {
        setBytes(Zmq.ROUTING_ID, id);
    }

    /** ZMQ_SUBSCRIBE (SUB/XSUB): an empty prefix subscribes to everything. */
    public void subscribe(byte[] prefix) {
        setBytes(Zmq.SUBSCRIBE, prefix);
    }

    /** ZMQ_SUBSCRIBE with the UTF-8 bytes of {@code prefix}. */
    public void subscribe(String prefix) {
        setString(Zmq.SUBSCRIBE, prefix);
    }

    /** ZMQ_UNSUBSCRIBE. */
    public void unsubscribe(byte[] prefix) {
        setBytes(Zmq.UNSUBSCRIBE, prefix);
    }

    // ------------------------------------------------------------------------------------
    // monitor / lifecycle

    /**
     * {@code zmq_socket_monitor(endpoint, events)}: publishes this socket's events on an
     * inproc PAIR endpoint; read them with {@link SocketMonitor}. A null endpoint stops it.
     */
    public void monitor(String endpoint, int events) {
        MemorySegment h = handle();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ep = endpoint == null ? MemorySegment.NULL : a.allocateFrom(endpoint);
            int rc = (int) Native.SOCKET_MONITOR_E.invokeExact(capture, h, ep, events);
            if (rc == -1) throw new ZmqException("zmq_socket_monitor", Native.errno(capture));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** True once {@link #close()} has run. */
    public boolean isClosed() {
        return closed;
    }

    /** {@code zmq_close}; pending messages are handled per LINGER. Closing twice is a no-op. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) return;
            closed = true;
        }
        context.forget(this);
        try {
            int rc = (int) Native.MSG_CLOSE.invokeExact(msg);
            assert rc == 0;
            rc = (int) Native.CLOSE_E.invokeExact(capture, handle);
            if (rc == -1) throw new ZmqException("zmq_close", Native.errno(capture));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public String toString() {
        return "Socket[" + type + (closed ? ", closed]" : "]");
    }
}
