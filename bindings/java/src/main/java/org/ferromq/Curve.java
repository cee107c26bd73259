package org.ferromq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * CURVE key helpers over {@code zmq_curve_keypair} / {@code zmq_curve_public}.
 *
 * <p>Contract: keys are 40-character Z85 strings (32-byte keys), as libzmq produces them
 * and as {@link Socket#setString} accepts for ZMQ_CURVE_*KEY. A library built without CURVE
 * throws ZmqException with errno {@link Zmq#ENOTSUP}.
 */
public final class Curve {
    private Curve() {}

    /**
     * A public/secret key pair in Z85.
     *
     * @param publicKey 40-char Z85 public key
     * @param secretKey 40-char Z85 secret key
     */
    public record KeyPair(String publicKey, String secretKey) {}

    /** A new random key pair ({@code zmq_curve_keypair}). */
    public static KeyPair keyPair() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Native.newCapture(a);
            MemorySegment pub = a.allocate(41);
            MemorySegment sec = a.allocate(41);
            int rc = (int) Native.CURVE_KEYPAIR_E.invokeExact(cap, pub, sec);
            if (rc == -1) throw new ZmqException("zmq_curve_keypair", Native.errno(cap));
            return new KeyPair(pub.getString(0), sec.getString(0));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The public key of a Z85 secret key ({@code zmq_curve_public}). */
    public static String publicKey(String secretKey) {
        if (secretKey.length() != 40) throw new IllegalArgumentException("Z85 key must be 40 chars");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Native.newCapture(a);
            MemorySegment pub = a.allocate(41);
            int rc = (int) Native.CURVE_PUBLIC_E.invokeExact(cap, pub, a.allocateFrom(secretKey));
            if (rc == -1) throw new ZmqException("zmq_curve_public", Native.errno(cap));
            return pub.getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
