package org.ferromq;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Reader of the events a monitored socket publishes: starts {@code zmq_socket_monitor} on
 * the target socket and connects a PAIR socket to the monitor endpoint.
 *
 * <p>Contract: {@link #next(int)} returns the events in the order the library emitted them,
 * decoding libzmq's v1 format (frame 1: 16-bit event + 32-bit value, native byte order;
 * frame 2: endpoint). Closing stops the monitor on the target (if still open) and closes the
 * PAIR socket. Not thread-safe.
 */
public final class SocketMonitor implements AutoCloseable {
    private final Socket target;
    private final Socket pair;
    private final byte[] head = new byte[6];
    private final ByteBuffer headView = ByteBuffer.wrap(head).order(ByteOrder.nativeOrder());

    /**
     * Monitors {@code target} for {@code events} (ZMQ_EVENT_* mask) over the inproc endpoint
     * {@code endpoint} (e.g. "inproc://mon-1", unique per context).
     */
    public SocketMonitor(Socket target, String endpoint, int events) {
        this.target = target;
        target.monitor(endpoint, events);
        this.pair = target.context().socket(SocketType.PAIR);
        try {
            pair.connect(endpoint);
        } catch (RuntimeException e) {
            pair.close();
            throw e;
        }
    }

    /**
     * The next event, waiting at most {@code timeoutMs} ms (-1 = forever).
     *
     * @return the event, or null when none arrived in time
     */
    public MonitorEvent next(int timeoutMs) {
        pair.setReceiveTimeout(timeoutMs);
        int n = pair.recv(head, 0);
        if (n < 0) return null;
        if (n != 6 || !pair.hasReceiveMore()) {
            throw new IllegalStateException("unexpected monitor frame of " + n + " bytes");
        }
        int event = headView.getShort(0) & 0xFFFF;
        int value = headView.getInt(2);
        pair.setReceiveTimeout(-1); // second frame is already queued with the first
        byte[] ep = pair.recv(0);
        return new MonitorEvent(event, value, new String(ep, StandardCharsets.UTF_8));
    }

    /**
     * Waits until an event with code {@code event} arrives (discarding others), at most
     * {@code timeoutMs} ms per event read; returns it, or null if none came in time.
     */
    public MonitorEvent await(int event, int timeoutMs) {
        while (true) {
            MonitorEvent e = next(timeoutMs);
            if (e == null || e.event() == event) return e;
        }
    }

    /** Stops monitoring and closes the PAIR socket. */
    @Override
    public void close() {
        if (!target.isClosed()) {
            try {
                target.monitor(null, 0);
            } catch (ZmqException ignored) {
                // monitor already stopped
            }
        }
        pair.setLinger(0);
        pair.close();
    }
}
