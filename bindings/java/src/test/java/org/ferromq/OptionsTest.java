package org.ferromq;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.junit.jupiter.api.Assertions.*;

class OptionsTest {
    @Test
    void intLongBytesStringRoundTrip() {
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.DEALER)) {
            s.setInt(Zmq.SNDHWM, 1234);
            assertEquals(1234, s.getInt(Zmq.SNDHWM));
            s.setLinger(250);
            assertEquals(250, s.getInt(Zmq.LINGER));
            s.setReceiveTimeout(77);
            assertEquals(77, s.getInt(Zmq.RCVTIMEO));
            s.setLong(Zmq.MAXMSGSIZE, 1L << 33);
            assertEquals(1L << 33, s.getLong(Zmq.MAXMSGSIZE));
            s.setBytes(Zmq.ROUTING_ID, new byte[] {0x41, 0, (byte) 0xFF});
            assertArrayEquals(new byte[] {0x41, 0, (byte) 0xFF}, s.getBytes(Zmq.ROUTING_ID));
            s.setString(Zmq.ZAP_DOMAIN, "global");
            assertEquals("global", s.getString(Zmq.ZAP_DOMAIN));
            assertEquals(Zmq.MECHANISM_NULL, s.getInt(Zmq.MECHANISM));
            s.setInt(Zmq.RECONNECT_IVL, 42);
            assertEquals(42, s.getInt(Zmq.RECONNECT_IVL));
        }
    }

    @Test
    void lastEndpointAfterBind() {
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.PULL)) {
            String ipc = TestSupport.ipc("opt");
            s.bind(ipc);
            assertEquals(ipc, s.lastEndpoint());
            s.bind("tcp://127.0.0.1:*");
            assertTrue(s.lastEndpoint().matches("tcp://127\\.0\\.0\\.1:\\d+"), s.lastEndpoint());
        }
    }

    @Test
    void invalidOptionIsEinval() {
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.PAIR)) {
            ZmqException e = assertThrows(ZmqException.class, () -> s.setInt(9999, 1));
            assertEquals(Zmq.EINVAL, e.errno());
            ZmqException g = assertThrows(ZmqException.class, () -> s.getInt(9999));
            assertEquals(Zmq.EINVAL, g.errno());
        }
    }

    @Test
    void contextOptions() {
        try (Context ctx = new Context(2)) {
            assertEquals(2, ctx.get(Zmq.IO_THREADS));
            ctx.set(Zmq.MAX_SOCKETS, 77);
            assertEquals(77, ctx.get(Zmq.MAX_SOCKETS));
            assertEquals(64, ctx.get(Zmq.MSG_T_SIZE), "zmq_msg_t is 64 bytes");
        }
    }

    @ParameterizedTest
    @EnumSource(SocketType.class)
    void everySocketTypeReportsItsType(SocketType type) {
        try (Context ctx = new Context(); Socket s = ctx.socket(type)) {
            assertEquals(type.value(), s.getInt(Zmq.TYPE));
            assertEquals(type, SocketType.of(s.getInt(Zmq.TYPE)));
        }
    }
}
