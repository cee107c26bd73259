package org.ferromq;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class PubSubTest {
    @Test
    void prefixFilteringOverTcp() {
        try (Context ctx = new Context(); Socket pub = ctx.socket(SocketType.PUB);
             Socket sub = ctx.socket(SocketType.SUB); Poller p = new Poller()) {
            String ep = TestSupport.bindTcp(pub);
            sub.subscribe("weather.");
            sub.connect(ep);
            p.register(sub, Zmq.POLLIN);
            // slow joiner: publish until the subscription has reached the publisher
            while (true) {
                assertTrue(pub.send("weather.sync", 0));
                if (p.poll(10) == 1) break;
            }
            while (sub.recv(Zmq.DONTWAIT) != null) { /* drain syncs */ }
            pub.send("sports.result", 0);
            pub.send("weather.rain", 0);
            assertEquals("weather.rain", nextNotSync(sub), "non-matching topic filtered");
            sub.unsubscribe("weather.".getBytes());
            sub.subscribe("");
            while (true) { // the new subscription takes effect asynchronously too
                pub.send("any.sync", 0);
                if (p.poll(10) == 1) break;
            }
            while (sub.recv(Zmq.DONTWAIT) != null) { /* drain syncs */ }
            pub.send("sports.final", 0);
            assertEquals("sports.final", nextNotSync(sub));
        }
    }

    /** The next message that is not a sync probe: a probe sent just before the poll saw
     *  the first one can arrive after the drain, on a slow machine. */
    private static String nextNotSync(Socket sub) {
        while (true) {
            String s = sub.recvString();
            if (s == null || !s.endsWith(".sync")) {
                return s;
            }
        }
    }

    @Test
    void xpubSeesSubscriptions() {
        try (Context ctx = new Context(); Socket xpub = ctx.socket(SocketType.XPUB);
             Socket sub = ctx.socket(SocketType.SUB)) {
            String ep = TestSupport.inproc("xpub");
            xpub.bind(ep);
            sub.connect(ep);
            sub.subscribe("abc");
            byte[] m = xpub.recv(0);
            assertArrayEquals(new byte[] {1, 'a', 'b', 'c'}, m);
        }
    }
}
