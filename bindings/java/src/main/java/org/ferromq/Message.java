package org.ferromq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A {@code zmq_msg_t} owned by Java: the zero-copy way to receive (read the library's buffer
 * through {@link #data()}) and a way to build a frame in native memory before sending it.
 *
 * <p>Contract: not thread-safe; reusable (every {@link Socket#recv(Message, int)} replaces
 * the content, every successful {@link Socket#send(Message, int)} leaves it empty). The
 * segment returned by {@link #data()} is valid only until the next receive, send or
 * {@link #close()} of this message. {@link #close()} releases the content
 * ({@code zmq_msg_close}); closing twice is a no-op.
 */
public final class Message implements AutoCloseable {
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment msg = arena.allocate(Native.MSG_SIZE, 8);
    private boolean closed;

    /** An empty message ({@code zmq_msg_init}). */
    public Message() {
        try {
            int rc = (int) Native.MSG_INIT.invokeExact(msg);
            assert rc == 0;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** A message of {@code size} uninitialised bytes ({@code zmq_msg_init_size}); fill via {@link #data()}. */
    public Message(long size) {
        try {
            MemorySegment cap = Native.newCapture(arena);
            int rc = (int) Native.MSG_INIT_SIZE_E.invokeExact(cap, msg, size);
            if (rc == -1) throw new ZmqException("zmq_msg_init_size", Native.errno(cap));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** A message holding a copy of {@code data}. */
    public Message(byte[] data) {
        this(data.length);
        MemorySegment.copy(data, 0, data(), JAVA_BYTE, 0, data.length);
    }

    MemorySegment segment() {
        if (closed) throw new IllegalStateException("message closed");
        return msg;
    }

    /** The content as a native segment of {@link #size()} bytes, without copying. */
    public MemorySegment data() {
        MemorySegment m = segment();
        try {
            long n = (long) Native.MSG_SIZE_FN.invokeExact(m);
            return ((MemorySegment) Native.MSG_DATA.invokeExact(m)).reinterpret(n);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The content size in bytes ({@code zmq_msg_size}). */
    public long size() {
        try {
            return (long) Native.MSG_SIZE_FN.invokeExact(segment());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** True when more frames of the same message follow this one ({@code zmq_msg_more}). */
    public boolean hasMore() {
        try {
            return (int) Native.MSG_MORE.invokeExact(segment()) != 0;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** A copy of the content. */
    public byte[] toArray() {
        return data().toArray(JAVA_BYTE);
    }

    /** The content decoded as UTF-8. */
    @Override
    public String toString() {
        return closed ? "Message[closed]" : new String(toArray(), StandardCharsets.UTF_8);
    }

    /**
     * {@code zmq_msg_gets(property)}: a metadata property of a received message such as
     * "Socket-Type", "Peer-Address" or "User-Id"; null if the message does not have it.
     */
    public String property(String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v = (MemorySegment) Native.MSG_GETS.invokeExact(segment(),
                    a.allocateFrom(name));
            if (v.equals(MemorySegment.NULL)) return null;
            return v.reinterpret(65536).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Releases the content ({@code zmq_msg_close}). */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        try {
            int rc = (int) Native.MSG_CLOSE.invokeExact(msg);
            assert rc == 0;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
