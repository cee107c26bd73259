package org.ferromq;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.*;

class ContextTest {
    @Test
    void closeClosesRemainingSockets() {
        Context ctx = new Context();
        Socket a = ctx.socket(SocketType.PUSH);
        Socket b = ctx.socket(SocketType.PULL);
        a.setLinger(0);
        b.bind(TestSupport.inproc("ctxclose"));
        ctx.close();
        assertTrue(ctx.isClosed());
        assertTrue(a.isClosed());
        assertTrue(b.isClosed());
        ctx.close(); // idempotent
        assertEquals(Zmq.ETERM,
                assertThrows(ZmqException.class, () -> ctx.socket(SocketType.PAIR)).errno());
    }

    @Test
    void shutdownWakesBlockedReceiverWithEterm() throws Exception {
        try (Context ctx = new Context()) {
            Socket s = ctx.socket(SocketType.PULL);
            s.bind(TestSupport.inproc("term"));
            AtomicReference<Throwable> seen = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    s.recv(new byte[8], 0);
                    seen.set(new AssertionError("recv returned"));
                } catch (Throwable e) {
                    seen.set(e);
                } finally {
                    s.close();
                }
            });
            t.start();
            Thread.sleep(100);
            ctx.shutdown();
            t.join();
            assertInstanceOf(ZmqException.class, seen.get());
            assertEquals(Zmq.ETERM, ((ZmqException) seen.get()).errno());
        }
    }

    @Test
    void lingerZeroCloseDoesNotBlockOnUndeliverable() {
        try (Context ctx = new Context()) {
            Socket push = ctx.socket(SocketType.PUSH);
            push.setLinger(0);
            push.connect("tcp://127.0.0.1:1"); // nobody listens
            // the connect-side pipe exists before the peer does: the message is queued
            assertTrue(push.send(new byte[10], Zmq.DONTWAIT));
            push.close();
            assertTrue(push.isClosed());
        } // ctx.close() returns: nothing lingers
    }
}
