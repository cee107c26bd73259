package org.ferromq.bench;

import org.ferromq.Context;
import org.ferromq.Socket;
import org.ferromq.SocketType;
import org.ferromq.Zmq;
import org.ferromq.ZmqException;
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

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Seed 004's ROUTER→ROUTER parallel throughput over tcp, on this FFM binding.
 *
 * <p>One operation = the benchmark thread sends {@code messageCount} two-frame messages
 * (routing id "r2" + payload of {@code messageSize} bytes) from ROUTER r1 while a receiver
 * thread takes them off ROUTER r2 (routing id frame + payload frame each); the operation
 * ends when the receiver has all of them. msg/s = ops/s × messageCount.
 *
 * <p>{@code lib} selects the libzmq.so.5 under test in the forked JVM before any binding
 * class loads: "ferromq" = property {@code bench.lib.ferromq} (default dist/lib/libzmq.so.5),
 * "libzmq" = property {@code bench.lib.libzmq} (default Debian's). The receiver thread is
 * started once per trial and handed each operation through {@link Handoff}, so no thread
 * creation is timed. r1 sets ROUTER_MANDATORY so that HWM means back-pressure, not drops;
 * {@code hwm} sets SNDHWM/RCVHWM on both sockets. A send or receive that makes no progress
 * for {@link #STALL_MS} (SNDTIMEO/RCVTIMEO) fails the trial rather than hanging the run.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class RouterBenchmark {
    @Param({"ferromq", "libzmq"})
    public String lib;

    @Param({"64", "1500", "65536"})
    public int messageSize;

    @Param({"10000"})
    public int messageCount;

    /** "default" = library default HWM (1000) with back-pressure; "0" = unlimited (seeds 001/003). */
    @Param({"default", "0"})
    public String hwm;

    /** A stalled send or receive fails the trial after this long instead of hanging JMH. */
    static final int STALL_MS = 10_000;

    private static final byte[] R1 = {'r', '1'};
    private static final byte[] R2 = {'r', '2'};

    private Context ctx;
    private Socket router1;
    private Socket router2;
    private byte[] payload;
    private Handoff handoff;

    /** Loads the library, connects r1 → r2 and waits until r2 is routable from r1. */
    @Setup(Level.Trial)
    public void setup() throws InterruptedException {
        String path = switch (lib) {
            case "ferromq" -> System.getProperty("bench.lib.ferromq",
                    Path.of("../../dist/lib/libzmq.so.5").toAbsolutePath().normalize().toString());
            case "libzmq" -> System.getProperty("bench.lib.libzmq",
                    "/usr/lib/x86_64-linux-gnu/libzmq.so.5");
            default -> throw new IllegalArgumentException(lib);
        };
        System.setProperty("ferromq.lib", path);
        ctx = new Context();
        router1 = ctx.socket(SocketType.ROUTER);
        router2 = ctx.socket(SocketType.ROUTER);
        router1.setRoutingId(R1);
        router2.setRoutingId(R2);
        router1.setInt(Zmq.ROUTER_MANDATORY, 1);
        router1.setLinger(0);
        router2.setLinger(0);
        if (!"default".equals(hwm)) {
            int h = Integer.parseInt(hwm);
            router1.setSendHwm(h);
            router1.setReceiveHwm(h);
            router2.setSendHwm(h);
            router2.setReceiveHwm(h);
        }
        router1.setSendTimeout(STALL_MS);
        router2.setReceiveTimeout(STALL_MS);
        router2.bind("tcp://127.0.0.1:*");
        router1.connect(router2.lastEndpoint());
        // handshake: r1 can route to "r2" once the connection is up; r2 learns "r1"
        while (true) {
            try {
                router1.send(R2, Zmq.SNDMORE);
                router1.send(new byte[] {0}, 0);
                break;
            } catch (ZmqException e) {
                if (e.errno() != Zmq.EHOSTUNREACH) throw e;
                Thread.sleep(1);
            }
        }
        byte[] sink = new byte[16];
        router2.recv(sink, 0);
        router2.recv(sink, 0);
        payload = new byte[messageSize];
        handoff = new Handoff(router2, messageSize, messageCount);
        System.err.println("RouterBenchmark: " + lib + " = " + Zmq.libraryPath()
                + " (zmq_version " + Zmq.versionString() + ")");
    }

    /** One operation: send messageCount messages while the receiver drains them. */
    @Benchmark
    public void routerToRouter() throws InterruptedException {
        handoff.start();
        final Socket s = router1;
        final byte[] id = R2;
        final byte[] p = payload;
        for (int i = 0; i < messageCount; i++) {
            if (!s.send(id, Zmq.SNDMORE) || !s.send(p, 0)) {
                throw new IllegalStateException("send stalled for " + STALL_MS + " ms at message "
                        + i + " of " + messageCount + " (" + Zmq.libraryPath() + ", hwm " + hwm + ")");
            }
        }
        handoff.awaitDone();
    }

    /** Stops the receiver and closes everything. */
    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        handoff.stop();
        ctx.close();
    }

    /** The persistent receiver thread and its per-operation start/done signals. */
    static final class Handoff {
        private final java.util.concurrent.Semaphore go = new java.util.concurrent.Semaphore(0);
        private final java.util.concurrent.Semaphore done = new java.util.concurrent.Semaphore(0);
        private final Thread thread;
        private volatile boolean stopping;
        private volatile Throwable failure;

        Handoff(Socket socket, int size, int count) {
            thread = new Thread(() -> {
                byte[] idBuf = new byte[256];
                byte[] body = new byte[size];
                try {
                    while (true) {
                        go.acquire();
                        if (stopping) return;
                        for (int i = 0; i < count; i++) {
                            if (socket.recv(idBuf, 0) < 0 || socket.recv(body, 0) != size) {
                                throw new IllegalStateException("receive stalled or bad size at "
                                        + i + " of " + count);
                            }
                        }
                        done.release();
                    }
                } catch (Throwable t) {
                    failure = t;
                    done.release();
                }
            }, "router-receiver");
            thread.setDaemon(true);
            thread.start();
        }

        void start() {
            go.release();
        }

        void awaitDone() throws InterruptedException {
            if (!done.tryAcquire(2L * STALL_MS, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("receiver did not finish");
            }
            if (failure != null) throw new IllegalStateException("receiver failed", failure);
        }

        void stop() throws InterruptedException {
            stopping = true;
            go.release();
            thread.join(5000);
        }
    }
}
