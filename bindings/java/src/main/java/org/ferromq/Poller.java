package org.ferromq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A set of sockets (and raw file descriptors) waited on together with {@code zmq_poll}.
 *
 * <p>Contract: items are numbered from 0 in registration order; {@link #poll(long)} fills
 * the returned events of every item, readable with {@link #revents(int)} and friends.
 * The item array lives in native memory allocated once per growth, so polling allocates
 * nothing. Not thread-safe. Closing it does not close the registered sockets.
 */
public final class Poller implements AutoCloseable {
    private static final long SOCKET_OFF = 0;
    private static final long FD_OFF = 8;
    private static final long EVENTS_OFF = 12;
    private static final long REVENTS_OFF = 14;

    private final Arena arena = Arena.ofAuto();
    private final MemorySegment capture = Native.newCapture(arena);
    private final List<Socket> sockets = new ArrayList<>();
    private MemorySegment items;
    private int count;

    /** An empty poller. */
    public Poller() {
        this(4);
    }

    /** An empty poller with room for {@code capacity} items before it grows. */
    public Poller(int capacity) {
        items = arena.allocate(Native.POLLITEM_SIZE * Math.max(1, capacity), 8);
    }

    /** Adds {@code socket} waiting for {@code events} (POLLIN|POLLOUT); returns its index. */
    public int register(Socket socket, int events) {
        int i = grow();
        MemorySegment it = item(i);
        it.set(ADDRESS, SOCKET_OFF, socket.handle());
        it.set(JAVA_INT, FD_OFF, 0);
        it.set(JAVA_SHORT, EVENTS_OFF, (short) events);
        it.set(JAVA_SHORT, REVENTS_OFF, (short) 0);
        sockets.add(socket);
        return i;
    }

    /** Adds a raw file descriptor (a non-ZeroMQ socket, pipe, ...) waiting for {@code events}. */
    public int registerFd(int fd, int events) {
        int i = grow();
        MemorySegment it = item(i);
        it.set(ADDRESS, SOCKET_OFF, MemorySegment.NULL);
        it.set(JAVA_INT, FD_OFF, fd);
        it.set(JAVA_SHORT, EVENTS_OFF, (short) events);
        it.set(JAVA_SHORT, REVENTS_OFF, (short) 0);
        sockets.add(null);
        return i;
    }

    /** Changes the events item {@code index} waits for. */
    public void setEvents(int index, int events) {
        item(checkIndex(index)).set(JAVA_SHORT, EVENTS_OFF, (short) events);
    }

    /** The socket at {@code index} (null for a raw fd item). */
    public Socket socket(int index) {
        return sockets.get(checkIndex(index));
    }

    /** Number of registered items. */
    public int size() {
        return count;
    }

    /**
     * {@code zmq_poll} over every item for up to {@code timeoutMs} (-1 = forever, 0 = check
     * and return).
     *
     * @return the number of items with events (0 on timeout)
     * @throws ZmqException on error, e.g. ETERM when the context was terminated
     */
    public int poll(long timeoutMs) {
        try {
            while (true) {
                int rc = (int) Native.POLL_E.invokeExact(capture, items, count, timeoutMs);
                if (rc >= 0) return rc;
                int e = Native.errno(capture);
                if (e != Zmq.EINTR) throw new ZmqException("zmq_poll", e);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The events returned for item {@code index} by the last {@link #poll(long)}. */
    public int revents(int index) {
        return items.get(JAVA_SHORT, checkIndex(index) * Native.POLLITEM_SIZE + REVENTS_OFF)
                & 0xFFFF;
    }

    /** True when the last poll reported POLLIN for item {@code index}. */
    public boolean isReadable(int index) {
        return (revents(index) & Zmq.POLLIN) != 0;
    }

    /** True when the last poll reported POLLOUT for item {@code index}. */
    public boolean isWritable(int index) {
        return (revents(index) & Zmq.POLLOUT) != 0;
    }

    /** Forgets every item (the native array is freed by the GC). */
    @Override
    public void close() {
        count = 0;
        sockets.clear();
    }

    private MemorySegment item(int i) {
        return items.asSlice(i * Native.POLLITEM_SIZE, Native.POLLITEM_SIZE);
    }

    private int checkIndex(int i) {
        if (i < 0 || i >= count) throw new IndexOutOfBoundsException(i);
        return i;
    }

    private int grow() {
        long need = (count + 1) * Native.POLLITEM_SIZE;
        if (need > items.byteSize()) {
            MemorySegment n = arena.allocate(items.byteSize() * 2, 8);
            MemorySegment.copy(items, 0, n, 0, count * Native.POLLITEM_SIZE);
            items = n;
        }
        return count++;
    }
}
