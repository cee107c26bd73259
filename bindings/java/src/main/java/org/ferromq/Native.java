package org.ferromq;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Package-private table of downcall handles into the loaded {@code libzmq.so.5}.
 *
 * <p>Contract: every handle is a {@code static final} so the JIT can constant-fold it.
 * Handles whose name ends in {@code _E} take a leading capture segment (layout
 * {@link #CAPTURE_LAYOUT}) into which the linker stores {@code errno} right after the
 * call; handles whose name contains {@code CRIT} are linked with
 * {@code Linker.Option.critical(true)} (heap segments allowed) and are only ever called
 * with {@code ZMQ_DONTWAIT} or for calls that never block. Handles whose name ends in
 * {@code _A} take a raw native address as a {@code long} (used for direct buffers so that
 * no {@code MemorySegment} has to be allocated per call).
 */
final class Native {
    private Native() {}

    /** Absolute path of the library that was loaded (or its soname when found by search). */
    static final String LIB_PATH;
    private static final SymbolLookup LIB;
    private static final Linker LINKER = Linker.nativeLinker();

    /** Layout of the capture-state segment; holds errno after an {@code _E} call. */
    static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_VH =
            CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    static {
        String path = System.getProperty("ferromq.lib");
        if (path == null || path.isBlank()) path = System.getenv("FERROMQ_LIB");
        if (path == null || path.isBlank()) path = defaultLibrary();
        LIB_PATH = path;
        SymbolLookup lookup;
        if (path.contains("/")) {
            lookup = SymbolLookup.libraryLookup(Path.of(path), Arena.global());
        } else {
            lookup = SymbolLookup.libraryLookup(path, Arena.global());
        }
        LIB = lookup;
    }

    /**
     * Default library: {@code ../../dist/lib/libzmq.so.5} relative to the bindings/java
     * directory, found from where these classes were loaded ({@code bindings/java/target/...})
     * or from the working directory; the soname {@code libzmq.so.5} (dlopen search) otherwise.
     */
    private static String defaultLibrary() {
        try {
            var src = Native.class.getProtectionDomain().getCodeSource();
            if (src != null) {
                Path p = Path.of(src.getLocation().toURI()).toAbsolutePath();
                for (Path d = p; d != null; d = d.getParent()) {
                    Path cand = d.resolve("../../dist/lib/libzmq.so.5").normalize();
                    if (Files.exists(d.resolve("pom.xml")) && Files.exists(cand)) {
                        return cand.toString();
                    }
                }
            }
        } catch (URISyntaxException | SecurityException | IllegalArgumentException ignored) {
            // fall through to the working directory
        }
        Path cand = Path.of(System.getProperty("user.dir"), "../../dist/lib/libzmq.so.5")
                .toAbsolutePath().normalize();
        if (Files.exists(cand)) return cand.toString();
        return "libzmq.so.5";
    }

    private static MethodHandle h(String name, FunctionDescriptor fd, Linker.Option... opts) {
        MemorySegment sym = LIB.find(name).orElseThrow(
                () -> new UnsatisfiedLinkError(name + " not found in " + LIB_PATH));
        return LINKER.downcallHandle(sym, fd, opts);
    }

    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final Linker.Option CRIT = Linker.Option.critical(true);

    // --- context ----------------------------------------------------------------------
    static final MethodHandle CTX_NEW = h("zmq_ctx_new", FunctionDescriptor.of(ADDRESS));
    static final MethodHandle CTX_TERM_E = h("zmq_ctx_term",
            FunctionDescriptor.of(JAVA_INT, ADDRESS), ERRNO);
    static final MethodHandle CTX_SHUTDOWN = h("zmq_ctx_shutdown",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle CTX_SET_E = h("zmq_ctx_set",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), ERRNO);
    static final MethodHandle CTX_GET_E = h("zmq_ctx_get",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), ERRNO);

    // --- socket lifecycle -------------------------------------------------------------
    static final MethodHandle SOCKET_E = h("zmq_socket",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT), ERRNO);
    static final MethodHandle CLOSE_E = h("zmq_close",
            FunctionDescriptor.of(JAVA_INT, ADDRESS), ERRNO);
    static final MethodHandle BIND_E = h("zmq_bind",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), ERRNO);
    static final MethodHandle CONNECT_E = h("zmq_connect",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), ERRNO);
    static final MethodHandle UNBIND_E = h("zmq_unbind",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), ERRNO);
    static final MethodHandle DISCONNECT_E = h("zmq_disconnect",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), ERRNO);
    static final MethodHandle SETSOCKOPT_E = h("zmq_setsockopt",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG), ERRNO);
    static final MethodHandle GETSOCKOPT_E = h("zmq_getsockopt",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS), ERRNO);
    static final MethodHandle SOCKET_MONITOR_E = h("zmq_socket_monitor",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), ERRNO);

    // --- send / recv (buffer API) -----------------------------------------------------
    private static final FunctionDescriptor SENDRECV =
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT);
    private static final FunctionDescriptor SENDRECV_A =
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT);
    /** zmq_send, may block: native segments only. */
    static final MethodHandle SEND_E = h("zmq_send", SENDRECV, ERRNO);
    /** zmq_send, critical: heap segments allowed, caller must pass ZMQ_DONTWAIT. */
    static final MethodHandle SEND_CRIT_E = h("zmq_send", SENDRECV, ERRNO, CRIT);
    /** zmq_send with the buffer as a raw address, may block. */
    static final MethodHandle SEND_A_E = h("zmq_send", SENDRECV_A, ERRNO);
    static final MethodHandle RECV_E = h("zmq_recv", SENDRECV, ERRNO);
    static final MethodHandle RECV_CRIT_E = h("zmq_recv", SENDRECV, ERRNO, CRIT);
    static final MethodHandle RECV_A_E = h("zmq_recv", SENDRECV_A, ERRNO);

    // --- zmq_msg_t --------------------------------------------------------------------
    static final long MSG_SIZE = 64;
    static final MethodHandle MSG_INIT = h("zmq_msg_init",
            FunctionDescriptor.of(JAVA_INT, ADDRESS), CRIT);
    static final MethodHandle MSG_INIT_SIZE_E = h("zmq_msg_init_size",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG), ERRNO);
    static final MethodHandle MSG_CLOSE = h("zmq_msg_close",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle MSG_DATA = h("zmq_msg_data",
            FunctionDescriptor.of(ADDRESS, ADDRESS), CRIT);
    static final MethodHandle MSG_SIZE_FN = h("zmq_msg_size",
            FunctionDescriptor.of(JAVA_LONG, ADDRESS), CRIT);
    static final MethodHandle MSG_MORE = h("zmq_msg_more",
            FunctionDescriptor.of(JAVA_INT, ADDRESS), CRIT);
    static final MethodHandle MSG_GETS = h("zmq_msg_gets",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle MSG_SEND_E = h("zmq_msg_send",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), ERRNO);
    static final MethodHandle MSG_SEND_CRIT_E = h("zmq_msg_send",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), ERRNO, CRIT);
    static final MethodHandle MSG_RECV_E = h("zmq_msg_recv",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), ERRNO);
    static final MethodHandle MSG_RECV_CRIT_E = h("zmq_msg_recv",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), ERRNO, CRIT);

    // --- poll ---------------------------------------------------------------------------
    /** sizeof(zmq_pollitem_t) on LP64: void *socket; int fd; short events; short revents. */
    static final long POLLITEM_SIZE = 16;
    static final MethodHandle POLL_E = h("zmq_poll",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG), ERRNO);

    // --- misc ---------------------------------------------------------------------------
    static final MethodHandle STRERROR = h("zmq_strerror",
            FunctionDescriptor.of(ADDRESS, JAVA_INT));
    static final MethodHandle VERSION = h("zmq_version",
            FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle HAS = h("zmq_has", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle CURVE_KEYPAIR_E = h("zmq_curve_keypair",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), ERRNO);
    static final MethodHandle CURVE_PUBLIC_E = h("zmq_curve_public",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), ERRNO);
    static final MethodHandle Z85_ENCODE_E = h("zmq_z85_encode",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG), ERRNO);
    static final MethodHandle Z85_DECODE_E = h("zmq_z85_decode",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), ERRNO);
    static final MethodHandle PROXY_E = h("zmq_proxy",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), ERRNO);

    /** Reads errno out of a capture segment filled by an {@code _E} call. */
    static int errno(MemorySegment capture) {
        return (int) ERRNO_VH.get(capture, 0L);
    }

    /** Allocates a capture segment in {@code arena}. */
    static MemorySegment newCapture(Arena arena) {
        return arena.allocate(CAPTURE_LAYOUT);
    }

    /** Rethrows a Throwable from {@code invokeExact} unchanged (errors, runtime exceptions). */
    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) throw r;
        if (t instanceof Error e) throw e;
        throw new IllegalStateException("unexpected checked exception from a downcall", t);
    }
}
