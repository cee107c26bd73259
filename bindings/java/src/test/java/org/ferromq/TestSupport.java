package org.ferromq;

import java.util.concurrent.atomic.AtomicInteger;

/** Helpers shared by the tests: unique endpoints. */
final class TestSupport {
    private static final AtomicInteger SEQ = new AtomicInteger();

    private TestSupport() {}

    /** A fresh inproc endpoint name. */
    static String inproc(String tag) {
        return "inproc://" + tag + "-" + SEQ.incrementAndGet();
    }

    /** A fresh ipc endpoint under /tmp. */
    static String ipc(String tag) {
        return "ipc:///tmp/ferromq-java-" + ProcessHandle.current().pid() + "-" + tag + "-"
                + SEQ.incrementAndGet() + ".sock";
    }

    /** Binds {@code s} to a wildcard tcp port on 127.0.0.1 and returns the real endpoint. */
    static String bindTcp(Socket s) {
        s.bind("tcp://127.0.0.1:*");
        return s.lastEndpoint();
    }
}
