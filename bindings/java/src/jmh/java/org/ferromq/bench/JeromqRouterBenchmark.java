package org.ferromq.bench;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The same workload as {@link RouterBenchmark} on JeroMQ (pure-Java ZeroMQ), for a
 * side-by-side comparison in one JMH run: ROUTER r1 sends {@code messageCount} two-frame
 * messages to ROUTER r2 over tcp while a persistent receiver thread drains them into reused
 * buffers; msg/s = ops/s × messageCount.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
public class JeromqRouterBenchmark {
    @Param({"64", "1500", "65536"})
    public int messageSize;

    @Param({"10000"})
    public int messageCount;

    /** As in {@link RouterBenchmark#hwm}. */
    @Param({"default", "0"})
    public String hwm;

    private static final byte[] R1 = {'r', '1'};
    private static final byte[] R2 = {'r', '2'};

    private ZContext ctx;
    private ZMQ.Socket router1;
    private ZMQ.Socket router2;
    private byte[] payload;
    private final Semaphore go = new Semaphore(0);
    private final Semaphore done = new Semaphore(0);
    private volatile boolean stopping;
    private volatile Throwable failure;
    private Thread receiver;

    /** Connects r1 → r2, waits until r2 is routable and starts the receiver thread. */
    @Setup(Level.Trial)
    public void setup() throws InterruptedException {
        ctx = new ZContext();
        router1 = ctx.createSocket(org.zeromq.SocketType.ROUTER);
        router2 = ctx.createSocket(org.zeromq.SocketType.ROUTER);
        router1.setIdentity(R1);
        router2.setIdentity(R2);
        router1.setRouterMandatory(true);
        router1.setLinger(0);
        router2.setLinger(0);
        if (!"default".equals(hwm)) {
            int h = Integer.parseInt(hwm);
            router1.setSndHWM(h);
            router1.setRcvHWM(h);
            router2.setSndHWM(h);
            router2.setRcvHWM(h);
        }
        router1.setSendTimeOut(RouterBenchmark.STALL_MS);
        router2.setReceiveTimeOut(RouterBenchmark.STALL_MS);
        int port = router2.bindToRandomPort("tcp://127.0.0.1");
        router1.connect("tcp://127.0.0.1:" + port);
        while (true) { // r1 can route to "r2" once the connection is up
            try {
                if (router1.send(R2, ZMQ.SNDMORE)) {
                    router1.send(new byte[] {0}, 0);
                    break;
                }
            } catch (org.zeromq.ZMQException e) {
                if (e.getErrorCode() != ZMQ.Error.EHOSTUNREACH.getCode()) throw e;
            }
            Thread.sleep(1);
        }
        byte[] sink = new byte[16];
        router2.recv(sink, 0, sink.length, 0);
        router2.recv(sink, 0, sink.length, 0);
        payload = new byte[messageSize];
        final int size = messageSize;
        final int count = messageCount;
        final ZMQ.Socket s2 = router2;
        receiver = new Thread(() -> {
            byte[] idBuf = new byte[256];
            byte[] body = new byte[size];
            try {
                while (true) {
                    go.acquire();
                    if (stopping) return;
                    for (int i = 0; i < count; i++) {
                        if (s2.recv(idBuf, 0, idBuf.length, 0) < 0
                                || s2.recv(body, 0, body.length, 0) != size) {
                            throw new IllegalStateException("receive stalled or bad size");
                        }
                    }
                    done.release();
                }
            } catch (Throwable t) {
                failure = t;
                done.release();
            }
        }, "jeromq-receiver");
        receiver.setDaemon(true);
        receiver.start();
    }

    /** One operation: send messageCount messages while the receiver drains them. */
    @Benchmark
    public void routerToRouter() throws InterruptedException {
        go.release();
        final ZMQ.Socket s = router1;
        final byte[] p = payload;
        for (int i = 0; i < messageCount; i++) {
            if (!s.send(R2, ZMQ.SNDMORE) || !s.send(p, 0)) {
                throw new IllegalStateException("send stalled at message " + i);
            }
        }
        if (!done.tryAcquire(2L * RouterBenchmark.STALL_MS, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("receiver stuck");
        }
        if (failure != null) throw new IllegalStateException("receiver failed", failure);
    }

    /** Stops the receiver and closes the context. */
    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        stopping = true;
        go.release();
        receiver.join(5000);
        ctx.close();
    }
}
