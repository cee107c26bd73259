package org.ferromq;

import org.junit.jupiter.api.Test;

import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Z85 and CURVE. While the library under test lacks CURVE (ferromq before CURVE lands
 * returns ENOTSUP from zmq_curve_keypair and zmq_has("curve") is false), the CURVE tests
 * FAIL with a message starting "CURVE NOT YET SUPPORTED" unless the run explicitly allows
 * it with -Dferromq.allowMissingCurve=true, in which case they are reported as skipped with
 * that same message (run-tests.sh prints them). They are never skipped silently.
 */
class CurveTest {
    static final String NOT_SUPPORTED = "CURVE NOT YET SUPPORTED by " + Zmq.libraryPath();

    @Test
    void z85KnownVector() {
        // the test vector of ZeroMQ RFC 32
        byte[] data = HexFormat.of().parseHex("864FD26FB559F75B");
        assertEquals("HelloWorld", Z85.encode(data));
        assertArrayEquals(data, Z85.decode("HelloWorld"));
    }

    @Test
    void z85RejectsBadLengths() {
        assertEquals(Zmq.EINVAL, assertThrows(ZmqException.class,
                () -> Z85.encode(new byte[3])).errno());
        assertEquals(Zmq.EINVAL, assertThrows(ZmqException.class,
                () -> Z85.decode("abcd")).errno());
    }

    @Test
    void z85RoundTripOf32ByteKey() {
        byte[] key = new byte[32];
        for (int i = 0; i < 32; i++) key[i] = (byte) (i * 37 + 11);
        String text = Z85.encode(key);
        assertEquals(40, text.length());
        assertArrayEquals(key, Z85.decode(text));
    }

    private static Curve.KeyPair keyPairOrReport() {
        try {
            Curve.KeyPair kp = Curve.keyPair();
            assertTrue(Zmq.has("curve"), "keypair works but zmq_has(\"curve\") is false");
            return kp;
        } catch (ZmqException e) {
            if (e.errno() != Zmq.ENOTSUP) throw e;
            assertFalse(Zmq.has("curve"), "zmq_has(\"curve\") is true but keypair is ENOTSUP");
            String msg = NOT_SUPPORTED + ": zmq_curve_keypair -> ENOTSUP";
            if (Boolean.getBoolean("ferromq.allowMissingCurve")) {
                org.junit.jupiter.api.Assumptions.abort(msg);
            }
            fail(msg);
            return null;
        }
    }

    @Test
    void keyPairAndPublicKeyAgree() {
        Curve.KeyPair kp = keyPairOrReport();
        assertEquals(40, kp.publicKey().length());
        assertEquals(40, kp.secretKey().length());
        assertEquals(32, Z85.decode(kp.publicKey()).length);
        assertEquals(kp.publicKey(), Curve.publicKey(kp.secretKey()));
        assertNotEquals(kp.publicKey(), keyPairOrReport().publicKey(), "keys are random");
    }

    @Test
    void curveHandshakeOverTcp() {
        Curve.KeyPair server = keyPairOrReport();
        Curve.KeyPair client = keyPairOrReport();
        try (Context ctx = new Context(); Socket rep = ctx.socket(SocketType.REP);
             Socket req = ctx.socket(SocketType.REQ)) {
            rep.setInt(Zmq.CURVE_SERVER, 1);
            rep.setString(Zmq.CURVE_SECRETKEY, server.secretKey());
            String ep = TestSupport.bindTcp(rep);
            req.setString(Zmq.CURVE_SERVERKEY, server.publicKey());
            req.setString(Zmq.CURVE_PUBLICKEY, client.publicKey());
            req.setString(Zmq.CURVE_SECRETKEY, client.secretKey());
            assertEquals(Zmq.MECHANISM_CURVE, req.getInt(Zmq.MECHANISM));
            req.connect(ep);
            assertTrue(req.send("secret hello", 0));
            try (Message m = new Message()) {
                assertEquals(12, rep.recv(m, 0));
                assertEquals("secret hello", m.toString());
                assertEquals(client.publicKey(), Z85.encode(Z85.decode(client.publicKey())));
            }
            rep.send("secret reply", 0);
            assertEquals("secret reply", req.recvString());
        }
    }

    @Test
    void curveWrongServerKeyNeverDelivers() {
        Curve.KeyPair server = keyPairOrReport();
        Curve.KeyPair wrong = keyPairOrReport();
        Curve.KeyPair client = keyPairOrReport();
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL);
             Socket push = ctx.socket(SocketType.PUSH)) {
            pull.setInt(Zmq.CURVE_SERVER, 1);
            pull.setString(Zmq.CURVE_SECRETKEY, server.secretKey());
            String ep = TestSupport.bindTcp(pull);
            push.setString(Zmq.CURVE_SERVERKEY, wrong.publicKey());
            push.setString(Zmq.CURVE_PUBLICKEY, client.publicKey());
            push.setString(Zmq.CURVE_SECRETKEY, client.secretKey());
            push.setLinger(0);
            try (SocketMonitor mon = new SocketMonitor(pull, TestSupport.inproc("curve-mon"),
                    Zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | Zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
                            | Zmq.EVENT_HANDSHAKE_FAILED_AUTH | Zmq.EVENT_HANDSHAKE_SUCCEEDED)) {
                push.connect(ep);
                push.send("leak?", Zmq.DONTWAIT);
                MonitorEvent ev = mon.next(5000);
                assertNotNull(ev, "the server reports the handshake outcome");
                assertNotEquals(Zmq.EVENT_HANDSHAKE_SUCCEEDED, ev.event(), ev.name());
                pull.setReceiveTimeout(200);
                assertNull(pull.recv(0), "nothing is delivered with a wrong server key");
            }
        }
    }
}
