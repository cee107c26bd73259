package org.ferromq;

/**
 * One event read from a socket monitor: the {@code ZMQ_EVENT_*} code, its value (an fd,
 * errno, reconnect interval or protocol error code, depending on the event) and the
 * endpoint it concerns.
 *
 * @param event the ZMQ_EVENT_* code (one bit)
 * @param value the event's 32-bit value
 * @param endpoint the endpoint string sent in the second frame
 */
public record MonitorEvent(int event, int value, String endpoint) {
    /** The symbolic name of {@link #event()}, e.g. "CONNECTED", or "0x…" if unknown. */
    public String name() {
        return switch (event) {
            case Zmq.EVENT_CONNECTED -> "CONNECTED";
            case Zmq.EVENT_CONNECT_DELAYED -> "CONNECT_DELAYED";
            case Zmq.EVENT_CONNECT_RETRIED -> "CONNECT_RETRIED";
            case Zmq.EVENT_LISTENING -> "LISTENING";
            case Zmq.EVENT_BIND_FAILED -> "BIND_FAILED";
            case Zmq.EVENT_ACCEPTED -> "ACCEPTED";
            case Zmq.EVENT_ACCEPT_FAILED -> "ACCEPT_FAILED";
            case Zmq.EVENT_CLOSED -> "CLOSED";
            case Zmq.EVENT_CLOSE_FAILED -> "CLOSE_FAILED";
            case Zmq.EVENT_DISCONNECTED -> "DISCONNECTED";
            case Zmq.EVENT_MONITOR_STOPPED -> "MONITOR_STOPPED";
            case Zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL -> "HANDSHAKE_FAILED_NO_DETAIL";
            case Zmq.EVENT_HANDSHAKE_SUCCEEDED -> "HANDSHAKE_SUCCEEDED";
            case Zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL -> "HANDSHAKE_FAILED_PROTOCOL";
            case Zmq.EVENT_HANDSHAKE_FAILED_AUTH -> "HANDSHAKE_FAILED_AUTH";
            default -> "0x" + Integer.toHexString(event);
        };
    }
}
