package org.ferromq;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.*;

class MultipartTest {
    @Test
    void framesAndMoreFlag() {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PAIR);
             Socket b = ctx.socket(SocketType.PAIR)) {
            String ep = TestSupport.inproc("multi");
            a.bind(ep);
            b.connect(ep);
            assertTrue(a.sendMore("A".getBytes(StandardCharsets.UTF_8)));
            assertTrue(a.send("B", Zmq.SNDMORE));
            assertTrue(a.send("C", 0));
            assertEquals("A", b.recvString());
            assertTrue(b.hasReceiveMore());
            assertEquals("B", b.recvString());
            assertTrue(b.hasReceiveMore());
            assertEquals("C", b.recvString());
            assertFalse(b.hasReceiveMore());
        }
    }

    @Test
    void routerRoutesByIdentityOverTcp() {
        try (Context ctx = new Context(); Socket router = ctx.socket(SocketType.ROUTER);
             Socket d1 = ctx.socket(SocketType.DEALER); Socket d2 = ctx.socket(SocketType.DEALER)) {
            router.setInt(Zmq.ROUTER_MANDATORY, 1);
            String ep = TestSupport.bindTcp(router);
            d1.setRoutingId("one".getBytes(StandardCharsets.UTF_8));
            d2.setRoutingId("two".getBytes(StandardCharsets.UTF_8));
            d1.connect(ep);
            d2.connect(ep);
            assertTrue(d1.send("from1", 0));
            assertTrue(d2.send("from2", 0));
            for (int i = 0; i < 2; i++) {
                byte[] id = router.recv(0);
                assertTrue(router.hasReceiveMore());
                String body = router.recvString();
                assertEquals("from" + ("one".equals(new String(id, StandardCharsets.UTF_8)) ? 1 : 2), body);
            }
            assertTrue(router.sendMore("two".getBytes(StandardCharsets.UTF_8)));
            assertTrue(router.send("to2", 0));
            assertEquals("to2", d2.recvString());
            assertNull(d1.recv(Zmq.DONTWAIT), "d1 must not get d2's message");
            // unknown peer with ROUTER_MANDATORY is an error, not EAGAIN
            ZmqException e = assertThrows(ZmqException.class,
                    () -> router.send("nobody".getBytes(StandardCharsets.UTF_8), Zmq.SNDMORE));
            assertEquals(Zmq.EHOSTUNREACH, e.errno());
        }
    }

    @Test
    void routerToRouterTwoFrames() {
        try (Context ctx = new Context(); Socket r1 = ctx.socket(SocketType.ROUTER);
             Socket r2 = ctx.socket(SocketType.ROUTER)) {
            r1.setRoutingId(new byte[] {'r', '1'});
            r2.setRoutingId(new byte[] {'r', '2'});
            r1.setInt(Zmq.ROUTER_MANDATORY, 1);
            String ep = TestSupport.bindTcp(r2);
            r1.connect(ep);
            // r1 learns r2's id only after the handshake: retry until routable
            byte[] payload = new byte[64];
            payload[63] = 42;
            int tries = 0;
            while (true) {
                try {
                    assertTrue(r1.send(new byte[] {'r', '2'}, Zmq.SNDMORE));
                    break;
                } catch (ZmqException e) {
                    assertEquals(Zmq.EHOSTUNREACH, e.errno());
                    assertTrue(++tries < 10_000, "never routable");
                    Thread.onSpinWait();
                    try { Thread.sleep(1); } catch (InterruptedException ie) { throw new RuntimeException(ie); }
                }
            }
            assertTrue(r1.send(payload, 0));
            byte[] id = new byte[8];
            assertEquals(2, r2.recv(id, 0));
            assertEquals('r', id[0]);
            assertEquals('1', id[1]);
            byte[] body = new byte[64];
            assertEquals(64, r2.recv(body, 0));
            assertEquals(42, body[63]);
        }
    }

    @Test
    void messageApiZeroCopyAndMore() {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PAIR);
             Socket b = ctx.socket(SocketType.PAIR); Message m = new Message()) {
            String ep = TestSupport.ipc("msg");
            a.bind(ep);
            b.connect(ep);
            try (Message first = new Message("head".getBytes(StandardCharsets.UTF_8));
                 Message second = new Message(5000)) {
                second.data().fill((byte) 7);
                assertTrue(a.send(first, Zmq.SNDMORE));
                assertEquals(0, first.size(), "a sent message is emptied");
                assertTrue(a.send(second, 0));
            }
            assertEquals(4, b.recv(m, 0));
            assertTrue(m.hasMore());
            assertEquals("head", m.toString());
            assertEquals(5000, b.recv(m, 0));
            assertFalse(m.hasMore());
            assertEquals(5000, m.data().byteSize());
            assertEquals(7, m.data().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4999));
            assertEquals("PAIR", m.property("Socket-Type"));
        }
    }
}
