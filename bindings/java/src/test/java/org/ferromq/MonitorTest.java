package org.ferromq;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class MonitorTest {
    @Test
    void tcpLifecycleEvents() {
        try (Context ctx = new Context(); Socket server = ctx.socket(SocketType.REP);
             Socket client = ctx.socket(SocketType.REQ)) {
            try (SocketMonitor sm = new SocketMonitor(server, TestSupport.inproc("mon-s"),
                         Zmq.EVENT_ALL);
                 SocketMonitor cm = new SocketMonitor(client, TestSupport.inproc("mon-c"),
                         Zmq.EVENT_CONNECTED | Zmq.EVENT_HANDSHAKE_SUCCEEDED
                                 | Zmq.EVENT_DISCONNECTED)) {
                String ep = TestSupport.bindTcp(server);
                MonitorEvent listening = sm.next(5000);
                assertNotNull(listening, "LISTENING event");
                assertEquals(Zmq.EVENT_LISTENING, listening.event(), listening.name());
                assertEquals(ep, listening.endpoint());
                assertEquals("LISTENING", listening.name());

                client.connect(ep);
                MonitorEvent connected = cm.await(Zmq.EVENT_CONNECTED, 5000);
                assertNotNull(connected, "CONNECTED event");
                assertEquals(ep, connected.endpoint());
                assertTrue(connected.value() >= 0, "value of CONNECTED is the fd");
                MonitorEvent accepted = sm.await(Zmq.EVENT_ACCEPTED, 5000);
                assertNotNull(accepted, "ACCEPTED event");
                assertNotNull(cm.await(Zmq.EVENT_HANDSHAKE_SUCCEEDED, 5000), "client handshake");

                assertTrue(client.send("hi", 0));
                assertEquals("hi", server.recvString());
                server.send("ok", 0);
                assertEquals("ok", client.recvString());

                client.close();
                MonitorEvent disc = sm.await(Zmq.EVENT_DISCONNECTED, 5000);
                assertNotNull(disc, "server sees the disconnect");
                assertEquals("DISCONNECTED", disc.name());
            }
        }
    }

    @Test
    void filteredEventsAreNotDelivered() {
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.PULL);
             SocketMonitor m = new SocketMonitor(s, TestSupport.inproc("mon-f"),
                     Zmq.EVENT_ACCEPTED)) {
            s.bind("tcp://127.0.0.1:*");
            assertNull(m.next(100), "LISTENING was not in the mask");
        }
    }
}
