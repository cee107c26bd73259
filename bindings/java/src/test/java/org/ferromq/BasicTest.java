package org.ferromq;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.*;

class BasicTest {
    @Test
    void versionIs43() {
        int[] v = Zmq.version();
        assertEquals(4, v[0], "major version of " + Zmq.libraryPath());
        assertEquals(3, v[1]);
        assertTrue(Zmq.versionString().startsWith("4.3."));
    }

    @Test
    void capabilitiesAndStrerror() {
        assertTrue(Zmq.has("ipc"), "ipc capability");
        assertFalse(Zmq.has("no-such-capability"));
        assertFalse(Zmq.strerror(Zmq.EFSM).isBlank());
        assertNotEquals(Zmq.strerror(Zmq.EFSM), Zmq.strerror(Zmq.ETERM));
    }

    @Test
    void pairOverInproc() {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PAIR);
             Socket b = ctx.socket(SocketType.PAIR)) {
            String ep = TestSupport.inproc("pair");
            a.bind(ep);
            b.connect(ep);
            assertTrue(a.send("hello", 0));
            assertEquals("hello", b.recvString());
            assertTrue(b.send("world".getBytes(StandardCharsets.UTF_8)));
            byte[] buf = new byte[16];
            assertEquals(5, a.recv(buf, 0));
            assertEquals("world", new String(buf, 0, 5, StandardCharsets.UTF_8));
        }
    }

    @Test
    void pushPullOverTcp() {
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL);
             Socket push = ctx.socket(SocketType.PUSH)) {
            String ep = TestSupport.bindTcp(pull);
            assertTrue(ep.startsWith("tcp://127.0.0.1:"), ep);
            assertNotEquals("tcp://127.0.0.1:0", ep);
            push.connect(ep);
            byte[] out = new byte[100];
            for (int i = 0; i < 1000; i++) {
                out[0] = (byte) i;
                out[99] = (byte) (i >> 8);
                assertTrue(push.send(out));
            }
            byte[] in = new byte[100];
            for (int i = 0; i < 1000; i++) {
                assertEquals(100, pull.recv(in, 0));
                assertEquals((byte) i, in[0]);
                assertEquals((byte) (i >> 8), in[99]);
            }
        }
    }

    @Test
    void reqRepOverIpc() {
        try (Context ctx = new Context(); Socket rep = ctx.socket(SocketType.REP);
             Socket req = ctx.socket(SocketType.REQ)) {
            String ep = TestSupport.ipc("reqrep");
            rep.bind(ep);
            req.connect(ep);
            for (int i = 0; i < 50; i++) {
                assertTrue(req.send("ping" + i, 0));
                assertEquals("ping" + i, rep.recvString());
                assertTrue(rep.send("pong" + i, 0));
                assertEquals("pong" + i, req.recvString());
            }
        }
    }

    @Test
    void largeMessageOverTcp() {
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL);
             Socket push = ctx.socket(SocketType.PUSH)) {
            push.connect(TestSupport.bindTcp(pull));
            byte[] big = new byte[3 * 1024 * 1024 + 7];
            for (int i = 0; i < big.length; i++) big[i] = (byte) (i * 31);
            assertTrue(push.send(big));
            byte[] got = pull.recv(0);
            assertArrayEquals(big, got);
        }
    }

    @Test
    void reqStateMachineThrowsEfsm() {
        try (Context ctx = new Context(); Socket req = ctx.socket(SocketType.REQ)) {
            req.connect(TestSupport.inproc("nobody"));
            // receiving before sending is a state-machine error, not EAGAIN
            ZmqException e = assertThrows(ZmqException.class, () -> req.recv(new byte[4], 0));
            assertEquals(Zmq.EFSM, e.errno());
            assertTrue(e.getMessage().contains(Zmq.strerror(Zmq.EFSM)), e.getMessage());
        }
    }

    @Test
    void nonBlockingPathsReturnInsteadOfThrowing() {
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL);
             Socket push = ctx.socket(SocketType.PUSH)) {
            pull.bind(TestSupport.inproc("eagain"));
            assertEquals(-1, pull.recv(new byte[8], Zmq.DONTWAIT));
            assertNull(pull.recv(Zmq.DONTWAIT));
            assertEquals(-1, pull.recv(java.nio.ByteBuffer.allocateDirect(8), Zmq.DONTWAIT));
            // PUSH with no peer cannot queue: non-blocking send reports false
            assertFalse(push.send(new byte[] {1}, Zmq.DONTWAIT));
            push.setSendTimeout(10);
            assertFalse(push.send(new byte[] {1}), "SNDTIMEO expiry is EAGAIN -> false");
            pull.setReceiveTimeout(10);
            assertEquals(-1, pull.recv(new byte[8], 0), "RCVTIMEO expiry is EAGAIN -> -1");
        }
    }

    @Test
    void endpointErrorsCarryErrno() {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PAIR);
             Socket b = ctx.socket(SocketType.PAIR)) {
            String ep = TestSupport.bindTcp(a);
            ZmqException inUse = assertThrows(ZmqException.class, () -> b.bind(ep));
            assertEquals(Zmq.EADDRINUSE, inUse.errno());
            ZmqException proto = assertThrows(ZmqException.class, () -> b.bind("bogus://x"));
            assertEquals(Zmq.EPROTONOSUPPORT, proto.errno());
            ZmqException notBound = assertThrows(ZmqException.class,
                    () -> b.unbind("tcp://127.0.0.1:1"));
            assertEquals(Zmq.ENOENT, notBound.errno());
        }
    }

    @Test
    void unbindAndDisconnect() {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PULL);
             Socket b = ctx.socket(SocketType.PUSH)) {
            String ep = TestSupport.bindTcp(a);
            b.connect(ep);
            assertTrue(b.send("one", 0));
            assertEquals("one", a.recvString());
            b.disconnect(ep);
            ZmqException again = assertThrows(ZmqException.class, () -> b.disconnect(ep));
            assertEquals(Zmq.ENOENT, again.errno());
            a.unbind(ep);
            // the port is free again: another socket can bind it
            // (libzmq closes the listener asynchronously: retry while it is still in use)
            try (Socket c = ctx.socket(SocketType.PULL)) {
                for (int attempt = 0; ; attempt++) {
                    try {
                        c.bind(ep);
                        break;
                    } catch (ZmqException e) {
                        assertEquals(Zmq.EADDRINUSE, e.errno());
                        assertTrue(attempt < 500, "port never released after unbind");
                        try { Thread.sleep(10); } catch (InterruptedException ie) { throw new AssertionError(ie); }
                    }
                }
                assertEquals(ep, c.lastEndpoint());
            }
        }
    }

    @Test
    void closedSocketRejectsUse() {
        try (Context ctx = new Context()) {
            Socket s = ctx.socket(SocketType.PAIR);
            s.close();
            s.close(); // idempotent
            assertTrue(s.isClosed());
            ZmqException e = assertThrows(ZmqException.class, () -> s.send(new byte[1]));
            assertEquals(Zmq.ENOTSOCK, e.errno());
        }
    }
}
