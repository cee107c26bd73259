package org.ferromq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Z85 encoding ({@code zmq_z85_encode} / {@code zmq_z85_decode}) as implemented by the
 * loaded library.
 *
 * <p>Contract: encode takes a length divisible by 4 and returns 5/4 as many characters;
 * decode takes a length divisible by 5. Invalid input throws ZmqException (EINVAL).
 */
public final class Z85 {
    private Z85() {}

    /** Encodes {@code data} (length % 4 == 0) into Z85 text. */
    public static String encode(byte[] data) {
        if (data.length % 4 != 0) throw new ZmqException("zmq_z85_encode", Zmq.EINVAL);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Native.newCapture(a);
            MemorySegment src = a.allocate(Math.max(1, data.length));
            MemorySegment.copy(data, 0, src, JAVA_BYTE, 0, data.length);
            MemorySegment dst = a.allocate(data.length / 4 * 5 + 1);
            MemorySegment r = (MemorySegment) Native.Z85_ENCODE_E.invokeExact(cap, dst, src,
                    (long) data.length);
            if (r.equals(MemorySegment.NULL)) throw new ZmqException("zmq_z85_encode", Native.errno(cap));
            return dst.getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Decodes Z85 {@code text} (length % 5 == 0) into bytes. */
    public static byte[] decode(String text) {
        if (text.length() % 5 != 0) throw new ZmqException("zmq_z85_decode", Zmq.EINVAL);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Native.newCapture(a);
            MemorySegment dst = a.allocate(Math.max(1, text.length() / 5 * 4));
            MemorySegment r = (MemorySegment) Native.Z85_DECODE_E.invokeExact(cap, dst,
                    a.allocateFrom(text));
            if (r.equals(MemorySegment.NULL)) throw new ZmqException("zmq_z85_decode", Native.errno(cap));
            return dst.asSlice(0, text.length() / 5 * 4).toArray(JAVA_BYTE);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
