package org.ferromq.perf;

import org.ferromq.Context;
import org.ferromq.Socket;
import org.ferromq.SocketType;
import org.ferromq.Zmq;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * Java version of libzmq's perf tools (workloads A/C of BENCHMARKS.md), one role per process:
 * {@code Perf ROLE ENDPOINT SIZE COUNT [WARMUP]}.
 *
 * <ul>
 * <li>{@code local_thr}: binds PULL, receives the first message, starts the clock, receives
 *     COUNT-1 more, prints {@code RESULT {"msg_per_s": x}} with x = (COUNT-1)/elapsed.</li>
 * <li>{@code remote_thr}: connects PUSH and sends COUNT messages of SIZE bytes, then closes
 *     (LINGER -1: returns once everything was handed to the peer).</li>
 * <li>{@code local_lat}: binds REP and echoes WARMUP+COUNT messages.</li>
 * <li>{@code remote_lat}: connects REQ, does WARMUP untimed round trips, then times COUNT
 *     round trips and prints {@code RESULT {"latency_us": x}}, x = elapsed/(2*COUNT) in µs.</li>
 * </ul>
 * WARMUP defaults to $FERROMQ_PERF_WARMUP or 100 and must be the same for both latency
 * roles. Before touching the benchmark endpoint every role JIT-warms the binding's send and
 * receive paths on a private tcp loopback pair in its own context, in passes of
 * FERROMQ_PERF_JIT_WARMUP messages (default 20,000; 0 skips it) until a pass leaves the JIT
 * compilers nothing new to do, so that C2-compiled code is measured, as for a C program;
 * nothing of the measured workload happens during that warm-up. Stdout carries only the
 * RESULT line; details go to stderr. Exit status 2 on usage errors, 1 on a failed call.
 */
public final class Perf {
    private Perf() {}

    /** Messages per call of sendN/receiveN during the JIT warm-up (see {@link #warmJit}). */
    private static final int WARMUP_CHUNK = 16;

    /** Entry point; see the class documentation for the arguments. */
    public static void main(String[] args) {
        if (args.length < 4 || args.length > 5) {
            System.err.println("usage: Perf {local_thr|remote_thr|local_lat|remote_lat} "
                    + "ENDPOINT SIZE COUNT [WARMUP]");
            System.exit(2);
        }
        String role = args[0];
        String endpoint = args[1];
        int size = Integer.parseInt(args[2]);
        long count = Long.parseLong(args[3]);
        String w = args.length == 5 ? args[4] : System.getenv("FERROMQ_PERF_WARMUP");
        int warmup = w == null || w.isBlank() ? 100 : Integer.parseInt(w);
        if (size < 1 || count < 2 || warmup < 0) {
            System.err.println("SIZE >= 1, COUNT >= 2, WARMUP >= 0 required");
            System.exit(2);
        }
        String jw = System.getenv("FERROMQ_PERF_JIT_WARMUP");
        int jitRounds = jw == null || jw.isBlank() ? 20_000 : Integer.parseInt(jw);
        warmUntilCompiled(size, jitRounds, role.endsWith("_lat"));
        try (Context ctx = new Context()) {
            switch (role) {
                case "local_thr" -> localThr(ctx, endpoint, size, count);
                case "remote_thr" -> remoteThr(ctx, endpoint, size, count);
                case "local_lat" -> localLat(ctx, endpoint, size, count + warmup);
                case "remote_lat" -> remoteLat(ctx, endpoint, size, count, warmup);
                default -> {
                    System.err.println("unknown role " + role);
                    System.exit(2);
                }
            }
        } catch (RuntimeException e) {
            System.err.println("perf " + role + " failed: " + e);
            System.exit(1);
        }
    }

    /**
     * JIT warm-up: {@code rounds} messages of {@code size} bytes from a PUSH thread to a PULL
     * over a private tcp loopback connection with HWM 16, so that the non-blocking fast paths
     * and the blocking slow paths (sender at HWM, receiver on an empty queue) of the same
     * Socket methods the benchmark uses are all compiled before anything is timed.
     */
    static void warmJit(int size, int rounds) {
        if (rounds <= 0) return;
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL);
             Socket push = ctx.socket(SocketType.PUSH)) {
            for (Socket s : new Socket[] {pull, push}) {
                s.setSendHwm(16);
                s.setReceiveHwm(16);
            }
            pull.bind("tcp://127.0.0.1:*");
            push.connect(pull.lastEndpoint());
            // In chunks, so that sendN and receiveN are invoked often enough to be compiled
            // as whole methods, not only as a loop entered in the interpreter (OSR).
            Thread sender = new Thread(() -> {
                byte[] out = new byte[size];
                for (int i = 0; i < rounds; i += WARMUP_CHUNK) {
                    sendN(push, out, size, Math.min(WARMUP_CHUNK, rounds - i));
                }
            }, "jit-warmup-sender");
            sender.start();
            byte[] in = new byte[size];
            for (int i = 0; i < rounds; i += WARMUP_CHUNK) {
                receiveN(pull, in, size, Math.min(WARMUP_CHUNK, rounds - i));
            }
            try {
                sender.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * JIT warm-up of the latency roles' own code: {@code rounds} round trips over a private
     * tcp loopback REQ/REP pair, a thread running {@link #echo} and this one
     * {@link #roundTrip}, the methods the measured run calls. Warming only the PUSH/PULL
     * paths left a 20,000-round-trip run at 7.0-8.3 µs one-way where it runs 4.5-5.8 µs
     * once those methods are compiled (docs/results/2026-11-27-java-jit-warmup.md).
     */
    static void warmJitRoundTrips(int size, int rounds) {
        if (rounds <= 0) return;
        try (Context ctx = new Context(); Socket rep = ctx.socket(SocketType.REP);
             Socket req = ctx.socket(SocketType.REQ)) {
            rep.bind("tcp://127.0.0.1:*");
            req.connect(rep.lastEndpoint());
            Thread server = new Thread(() -> echo(rep, new byte[size], size, rounds),
                    "jit-warmup-echo");
            server.start();
            byte[] buf = new byte[size];
            for (int i = 0; i < rounds; i++) roundTrip(req, buf, size);
            try {
                server.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Repeats the JIT warm-up ({@link #warmJit}, and {@link #warmJitRoundTrips} for the
     * latency roles) until one pass of {@code rounds} messages leaves the compilers with
     * nothing new to do, at most {@link #MAX_WARMUP_PASSES} passes. One pass of 20,000 left
     * the hot methods in C1 code: C2 compiled {@code recvHeap} and {@code receiveN} ~40 ms
     * into a measured 1,000,000-message run, and a compiler thread took a core meanwhile
     * (docs/results/2026-11-28-java-warmup-passes.md).
     */
    static void warmUntilCompiled(int size, int rounds, boolean roundTrips) {
        if (rounds <= 0) return;
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean timed = jit != null && jit.isCompilationTimeMonitoringSupported();
        int passes = 0;
        while (passes < MAX_WARMUP_PASSES) {
            long before = timed ? jit.getTotalCompilationTime() : 0;
            warmJit(size, rounds);
            if (roundTrips) warmJitRoundTrips(size, rounds);
            awaitCompilerIdle();
            passes++;
            if (DEBUG && timed) {
                System.err.printf(Locale.ROOT, "java perf: warm-up pass %d: +%d ms compiling%n",
                        passes, jit.getTotalCompilationTime() - before);
            }
            if (!timed || jit.getTotalCompilationTime() == before) break;
        }
        System.err.printf(Locale.ROOT, "java perf: JIT warm-up %d pass(es) of %d%n", passes, rounds);
    }

    /** $PERF_DEBUG set: the warm-up reports each pass's compilation time on stderr. */
    private static final boolean DEBUG = System.getenv("PERF_DEBUG") != null;

    /**
     * Most warm-up passes (each {@code rounds} messages) before the measured run starts
     * anyway. The 64 KiB latency roles use them all: C2 still spent ~175-257 ms on a sixth
     * pass after passes of 1-27 ms.
     */
    private static final int MAX_WARMUP_PASSES = 8;

    /**
     * Waits (at most 2 s) until the JIT compilers have been idle for 3 consecutive 20 ms
     * polls, so that compilations the warm-up queued do not run inside the timed window
     * (on a 2-core machine they take a core from the measured threads).
     */
    static void awaitCompilerIdle() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) return;
        long deadline = System.nanoTime() + 2_000_000_000L;
        long last = jit.getTotalCompilationTime();
        int idle = 0;
        while (idle < 3 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            long now = jit.getTotalCompilationTime();
            idle = now == last ? idle + 1 : 0;
            last = now;
        }
    }

    private static void check(int got, int size) {
        if (got != size) throw new IllegalStateException("message of " + got + " bytes, expected " + size);
    }

    static void localThr(Context ctx, String endpoint, int size, long count) {
        try (Socket s = ctx.socket(SocketType.PULL)) {
            s.bind(endpoint);
            byte[] buf = new byte[size];
            check(s.recv(buf, 0), size);
            long t0 = System.nanoTime();
            receiveN(s, buf, size, count - 1);
            long ns = System.nanoTime() - t0;
            double msgPerS = (count - 1) / (ns / 1e9);
            System.err.printf(Locale.ROOT, "java local_thr (%s): %d x %d B: %.0f msg/s, %.3f Mb/s%n",
                    Zmq.libraryPath(), count, size, msgPerS, msgPerS * size * 8 / 1e6);
            System.out.printf(Locale.ROOT, "RESULT {\"msg_per_s\": %.3f}%n", msgPerS);
        }
    }

    static void remoteThr(Context ctx, String endpoint, int size, long count) {
        try (Socket s = ctx.socket(SocketType.PUSH)) {
            s.connect(endpoint);
            sendN(s, new byte[size], size, count);
        }
    }

    /** Sends {@code n} messages of {@code size} bytes from {@code buf}: the throughput loop. */
    private static void sendN(Socket s, byte[] buf, int size, long n) {
        for (long i = 0; i < n; i++) {
            if (!s.send(buf, 0, size, 0)) throw new IllegalStateException("send failed");
        }
    }

    /** Receives {@code n} messages of {@code size} bytes into {@code buf}: the throughput loop. */
    private static void receiveN(Socket s, byte[] buf, int size, long n) {
        for (long i = 0; i < n; i++) check(s.recv(buf, 0), size);
    }

    static void localLat(Context ctx, String endpoint, int size, long total) {
        try (Socket s = ctx.socket(SocketType.REP)) {
            s.bind(endpoint);
            echo(s, new byte[size], size, total);
        }
    }

    private static void echo(Socket s, byte[] buf, int size, long total) {
        for (long i = 0; i < total; i++) {
            check(s.recv(buf, 0), size);
            if (!s.send(buf, 0, size, 0)) throw new IllegalStateException("send failed");
        }
    }

    static void remoteLat(Context ctx, String endpoint, int size, long count, int warmup) {
        try (Socket s = ctx.socket(SocketType.REQ)) {
            s.connect(endpoint);
            byte[] buf = new byte[size];
            for (int i = 0; i < warmup; i++) roundTrip(s, buf, size);
            long t0 = System.nanoTime();
            for (long i = 0; i < count; i++) roundTrip(s, buf, size);
            long ns = System.nanoTime() - t0;
            double us = ns / 1e3 / (2.0 * count);
            System.err.printf(Locale.ROOT, "java remote_lat (%s): %d x %d B: %.3f us one-way%n",
                    Zmq.libraryPath(), count, size, us);
            System.out.printf(Locale.ROOT, "RESULT {\"latency_us\": %.4f}%n", us);
        }
    }

    private static void roundTrip(Socket s, byte[] buf, int size) {
        if (!s.send(buf, 0, size, 0)) throw new IllegalStateException("send failed");
        check(s.recv(buf, 0), size);
    }
}
