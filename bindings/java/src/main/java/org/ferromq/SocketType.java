package org.ferromq;

/**
 * The standard socket types of zmq.h, with their numeric {@code ZMQ_*} values.
 *
 * <p>Contract: {@link #value()} is exactly the constant {@code zmq_socket} expects. Draft
 * types (SERVER, CLIENT, RADIO, ...) are deliberately absent: they are not part of the
 * stable libzmq 4.3 ABI this binding targets.
 */
public enum SocketType {
    /** ZMQ_PAIR (0). */
    PAIR(0),
    /** ZMQ_PUB (1). */
    PUB(1),
    /** ZMQ_SUB (2). */
    SUB(2),
    /** ZMQ_REQ (3). */
    REQ(3),
    /** ZMQ_REP (4). */
    REP(4),
    /** ZMQ_DEALER (5). */
    DEALER(5),
    /** ZMQ_ROUTER (6). */
    ROUTER(6),
    /** ZMQ_PULL (7). */
    PULL(7),
    /** ZMQ_PUSH (8). */
    PUSH(8),
    /** ZMQ_XPUB (9). */
    XPUB(9),
    /** ZMQ_XSUB (10). */
    XSUB(10),
    /** ZMQ_STREAM (11). */
    STREAM(11);

    private final int value;

    SocketType(int value) {
        this.value = value;
    }

    /** The numeric ZMQ_* socket type. */
    public int value() {
        return value;
    }

    /** The enum constant for a numeric ZMQ_* type; throws IllegalArgumentException if unknown. */
    public static SocketType of(int value) {
        for (SocketType t : values()) {
            if (t.value == value) return t;
        }
        throw new IllegalArgumentException("unknown socket type " + value);
    }
}
