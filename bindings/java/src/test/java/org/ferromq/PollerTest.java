package org.ferromq;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class PollerTest {
    @Test
    void readableAfterSendAndTimeoutWhenIdle() {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PULL);
             Socket b = ctx.socket(SocketType.PULL); Socket push = ctx.socket(SocketType.PUSH);
             Poller p = new Poller(1)) {
            String ea = TestSupport.bindTcp(a);
            b.bind(TestSupport.inproc("pollb"));
            int ia = p.register(a, Zmq.POLLIN);
            int ib = p.register(b, Zmq.POLLIN); // forces the item array to grow
            assertEquals(2, p.size());
            assertEquals(0, p.poll(0), "nothing to read yet");
            assertEquals(0, p.poll(20), "timeout with nothing to read");
            push.connect(ea);
            assertTrue(push.send("x", 0));
            assertEquals(1, p.poll(-1));
            assertTrue(p.isReadable(ia));
            assertFalse(p.isReadable(ib));
            assertSame(a, p.socket(ia));
            assertEquals("x", a.recvString());
            assertEquals(0, p.poll(0));
        }
    }

    @Test
    void writableWhenPeerConnected() {
        try (Context ctx = new Context(); Socket push = ctx.socket(SocketType.PUSH);
             Socket pull = ctx.socket(SocketType.PULL); Poller p = new Poller()) {
            int i = p.register(push, Zmq.POLLOUT | Zmq.POLLIN);
            assertEquals(0, p.poll(0), "PUSH without a peer is not writable");
            String ep = TestSupport.inproc("pollout");
            pull.bind(ep);
            push.connect(ep);
            assertEquals(1, p.poll(-1));
            assertTrue(p.isWritable(i));
            assertFalse(p.isReadable(i));
        }
    }

    @Test
    void rawFdItem() throws Exception {
        // a raw descriptor item: the socket's own ZMQ_FD (an eventfd-like signaler)
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PAIR);
             Poller p = new Poller()) {
            int fd = a.getInt(Zmq.FD);
            assertTrue(fd >= 0, "ZMQ_FD is a valid descriptor");
            int i = p.registerFd(fd, Zmq.POLLOUT);
            assertEquals(1, p.poll(1000), "an idle signaling fd is writable");
            assertTrue(p.isWritable(i));
            assertNull(p.socket(i));
        }
    }
}
