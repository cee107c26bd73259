package org.ferromq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A ZeroMQ context ({@code zmq_ctx_new}): the owner of sockets and I/O threads.
 *
 * <p>Contract: a Context is thread-safe. {@link #close()} closes every socket created from
 * it that is still open (respecting each socket's LINGER) and then calls
 * {@code zmq_ctx_term}, which blocks until pending messages are flushed or dropped
 * according to LINGER. Closing twice is a no-op.
 */
public final class Context implements AutoCloseable {
    private final MemorySegment handle;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** Creates a context with the library's defaults; throws ZmqException if it cannot. */
    public Context() {
        MemorySegment h;
        try {
            h = (MemorySegment) Native.CTX_NEW.invokeExact();
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        if (h.equals(MemorySegment.NULL)) throw new ZmqException("zmq_ctx_new", Zmq.EMFILE);
        this.handle = h;
    }

    /** Creates a context and sets {@code ZMQ_IO_THREADS} to {@code ioThreads}. */
    public Context(int ioThreads) {
        this();
        set(Zmq.IO_THREADS, ioThreads);
    }

    /** Creates a socket of the given type; throws ZmqException (e.g. ETERM, EMFILE). */
    public Socket socket(SocketType type) {
        ensureOpen();
        Socket s = new Socket(this, type);
        sockets.add(s);
        return s;
    }

    /** {@code zmq_ctx_set(option, value)}; throws ZmqException on EINVAL. */
    public void set(int option, int value) {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Native.newCapture(a);
            int rc = (int) Native.CTX_SET_E.invokeExact(cap, handle, option, value);
            if (rc == -1) throw new ZmqException("zmq_ctx_set", Native.errno(cap));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code zmq_ctx_get(option)}; throws ZmqException on EINVAL. */
    public int get(int option) {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Native.newCapture(a);
            int rc = (int) Native.CTX_GET_E.invokeExact(cap, handle, option);
            if (rc == -1) throw new ZmqException("zmq_ctx_get", Native.errno(cap));
            return rc;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * {@code zmq_ctx_shutdown}: makes every blocking call on this context's sockets fail
     * with ETERM; the sockets must still be closed and the context closed afterwards.
     */
    public void shutdown() {
        if (closed) return;
        try {
            int rc = (int) Native.CTX_SHUTDOWN.invokeExact(handle);
            assert rc == 0 || rc == -1;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** True once {@link #close()} has run. */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Closes the remaining sockets, then terminates the context ({@code zmq_ctx_term},
     * retried on EINTR). Blocks as LINGER dictates.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) return;
            closed = true;
        }
        for (Socket s : new ArrayList<>(sockets)) s.close();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Native.newCapture(a);
            while (true) {
                int rc = (int) Native.CTX_TERM_E.invokeExact(cap, handle);
                if (rc == 0) break;
                int e = Native.errno(cap);
                if (e != Zmq.EINTR) throw new ZmqException("zmq_ctx_term", e);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    MemorySegment handle() {
        return handle;
    }

    void forget(Socket s) {
        sockets.remove(s);
    }

    private void ensureOpen() {
        if (closed) throw new ZmqException("context", Zmq.ETERM);
    }
}
