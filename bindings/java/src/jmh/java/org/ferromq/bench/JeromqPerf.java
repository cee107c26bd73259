package org.ferromq.bench;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.util.Locale;

/**
 * {@link org.ferromq.perf.Perf}'s workload on JeroMQ, for comparison:
 * {@code JeromqPerf ROLE ENDPOINT SIZE COUNT [WARMUP]} with the same roles, the same
 * in-process JIT warm-up (inproc pair, FERROMQ_PERF_JIT_WARMUP rounds, default 20000)
 * and the same single {@code RESULT {...}} line on stdout.
 */
public final class JeromqPerf {
    private JeromqPerf() {}

    /** Entry point; see {@link org.ferromq.perf.Perf} for the arguments. */
    public static void main(String[] args) {
        if (args.length < 4) {
            System.err.println("usage: JeromqPerf ROLE ENDPOINT SIZE COUNT [WARMUP]");
            System.exit(2);
        }
        String role = args[0];
        String ep = args[1];
        int size = Integer.parseInt(args[2]);
        long count = Long.parseLong(args[3]);
        String w = args.length == 5 ? args[4] : System.getenv("FERROMQ_PERF_WARMUP");
        int warmup = w == null || w.isBlank() ? 100 : Integer.parseInt(w);
        String jw = System.getenv("FERROMQ_PERF_JIT_WARMUP");
        warmJit(size, jw == null || jw.isBlank() ? 20_000 : Integer.parseInt(jw));
        try (ZContext ctx = new ZContext()) {
            byte[] buf = new byte[size];
            switch (role) {
                case "local_thr" -> {
                    ZMQ.Socket s = ctx.createSocket(SocketType.PULL);
                    s.bind(ep);
                    check(s.recv(buf, 0, size, 0), size);
                    long t0 = System.nanoTime();
                    for (long i = 1; i < count; i++) check(s.recv(buf, 0, size, 0), size);
                    double r = (count - 1) / ((System.nanoTime() - t0) / 1e9);
                    System.out.printf(Locale.ROOT, "RESULT {\"msg_per_s\": %.3f}%n", r);
                }
                case "remote_thr" -> {
                    ZMQ.Socket s = ctx.createSocket(SocketType.PUSH);
                    s.setLinger(-1);
                    s.connect(ep);
                    for (long i = 0; i < count; i++) s.send(buf, 0, size, 0);
                    s.close();
                }
                case "local_lat" -> {
                    ZMQ.Socket s = ctx.createSocket(SocketType.REP);
                    s.bind(ep);
                    for (long i = 0; i < count + warmup; i++) {
                        check(s.recv(buf, 0, size, 0), size);
                        s.send(buf, 0, size, 0);
                    }
                }
                case "remote_lat" -> {
                    ZMQ.Socket s = ctx.createSocket(SocketType.REQ);
                    s.connect(ep);
                    for (int i = 0; i < warmup; i++) {
                        s.send(buf, 0, size, 0);
                        check(s.recv(buf, 0, size, 0), size);
                    }
                    long t0 = System.nanoTime();
                    for (long i = 0; i < count; i++) {
                        s.send(buf, 0, size, 0);
                        check(s.recv(buf, 0, size, 0), size);
                    }
                    double us = (System.nanoTime() - t0) / 1e3 / (2.0 * count);
                    System.out.printf(Locale.ROOT, "RESULT {\"latency_us\": %.4f}%n", us);
                }
                default -> {
                    System.err.println("unknown role " + role);
                    System.exit(2);
                }
            }
        }
    }

    private static void warmJit(int size, int rounds) {
        if (rounds <= 0) return;
        try (ZContext ctx = new ZContext()) {
            ZMQ.Socket a = ctx.createSocket(SocketType.PAIR);
            ZMQ.Socket b = ctx.createSocket(SocketType.PAIR);
            a.bind("inproc://jeromq-perf-jit-warmup");
            b.connect("inproc://jeromq-perf-jit-warmup");
            byte[] out = new byte[size];
            byte[] in = new byte[size];
            for (int i = 0; i < rounds; i++) {
                a.send(out, 0, size, 0);
                check(b.recv(in, 0, size, 0), size);
            }
        }
    }

    private static void check(int got, int size) {
        if (got != size) throw new IllegalStateException("message of " + got + " bytes, expected " + size);
    }
}
