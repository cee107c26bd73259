package org.ferromq;

/**
 * A failed libzmq call: carries the {@code errno} the library reported and its
 * {@code zmq_strerror} text.
 *
 * <p>Contract: thrown by every binding call that fails, except the {@code EAGAIN} outcome
 * of a non-blocking send or receive (those return {@code false} / {@code -1} / {@code null}
 * so that a polling loop never allocates an exception).
 */
public final class ZmqException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int errno;

    /**
     * Creates an exception for {@code errno} raised by {@code call}; the message is
     * {@code call + ": " + zmq_strerror(errno) + " (errno " + errno + ")"}.
     */
    public ZmqException(String call, int errno) {
        super(call + ": " + Zmq.strerror(errno) + " (errno " + errno + ")");
        this.errno = errno;
    }

    /** The errno value reported by the library (compare with the {@code Zmq.E*} constants). */
    public int errno() {
        return errno;
    }
}
