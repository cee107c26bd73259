package org.ferromq;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.*;

class BufferTest {
    @Test
    void offsetsAndTruncation() {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PAIR);
             Socket b = ctx.socket(SocketType.PAIR)) {
            String ep = TestSupport.inproc("buf");
            a.bind(ep);
            b.connect(ep);
            byte[] src = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
            assertTrue(a.send(src, 3, 4, 0));
            byte[] dst = new byte[10];
            assertEquals(4, b.recv(dst, 5, 5, 0));
            assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 3, 4, 5, 6, 0}, dst);
            // a 10-byte frame into a 3-byte window: size reported, data truncated
            assertTrue(a.send(src));
            byte[] small = new byte[3];
            assertEquals(10, b.recv(small, 0));
            assertArrayEquals(new byte[] {0, 1, 2}, small);
            assertThrows(IndexOutOfBoundsException.class, () -> a.send(src, 8, 5, 0));
        }
    }

    @Test
    void byteBuffersHeapAndDirect() {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PAIR);
             Socket b = ctx.socket(SocketType.PAIR)) {
            String ep = TestSupport.bindTcp(a);
            b.connect(ep);
            ByteBuffer direct = ByteBuffer.allocateDirect(32);
            direct.put(new byte[] {9, 8, 7, 6}).flip();
            assertTrue(a.send(direct, 0));
            assertEquals(direct.limit(), direct.position(), "send consumes the buffer");
            ByteBuffer heap = ByteBuffer.allocate(32);
            heap.position(2);
            assertEquals(4, b.recv(heap, 0));
            assertEquals(6, heap.position());
            assertEquals(9, heap.get(2));
            assertEquals(6, heap.get(5));
            heap.flip().position(2);
            assertTrue(b.send(heap, 0));
            ByteBuffer in = ByteBuffer.allocateDirect(2);
            assertEquals(4, a.recv(in, 0), "truncated receive reports the full size");
            assertEquals(2, in.position());
            assertEquals(9, in.get(0));
            assertEquals(8, in.get(1));
            assertThrows(java.nio.ReadOnlyBufferException.class,
                    () -> a.recv(ByteBuffer.allocate(4).asReadOnlyBuffer(), 0));
        }
    }

    @Test
    void memorySegmentsNativeAndHeap() {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PAIR);
             Socket b = ctx.socket(SocketType.PAIR); Arena arena = Arena.ofConfined()) {
            String ep = TestSupport.ipc("seg");
            a.bind(ep);
            b.connect(ep);
            MemorySegment out = arena.allocate(1500);
            for (int i = 0; i < 1500; i++) out.set(JAVA_BYTE, i, (byte) i);
            assertTrue(a.send(out, 0));
            MemorySegment in = arena.allocate(2000);
            assertEquals(1500, b.recv(in, 0));
            assertEquals(-1L, out.mismatch(in.asSlice(0, 1500)));
            assertTrue(a.send(MemorySegment.ofArray(new byte[] {5, 6}), 0));
            byte[] h = new byte[2];
            assertEquals(2, b.recv(MemorySegment.ofArray(h), 0));
            assertArrayEquals(new byte[] {5, 6}, h);
        }
    }

    @Test
    void blockingReceiveWaitsForLateSender() throws Exception {
        // exercises the slow path: the first non-blocking attempt misses, the blocking call waits
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL);
             Socket push = ctx.socket(SocketType.PUSH)) {
            String ep = TestSupport.inproc("late");
            pull.bind(ep);
            push.connect(ep);
            Thread t = new Thread(() -> {
                try { Thread.sleep(100); } catch (InterruptedException e) { return; }
                push.send(new byte[] {1, 2, 3});
            });
            t.start();
            byte[] buf = new byte[8];
            assertEquals(3, pull.recv(buf, 0));
            assertEquals(3, buf[2]);
            t.join();
        }
    }

    @Test
    void blockingSendWaitsAtHwm() throws Exception {
        // PUSH at SNDHWM blocks; the heap fast path fails with EAGAIN and falls back
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL);
             Socket push = ctx.socket(SocketType.PUSH)) {
            push.setSendHwm(1);
            pull.setReceiveHwm(1);
            String ep = TestSupport.bindTcp(pull);
            push.connect(ep);
            int n = 5000;
            Thread t = new Thread(() -> {
                byte[] m = new byte[256];
                for (int i = 0; i < n; i++) {
                    m[0] = (byte) i;
                    push.send(m);
                }
            });
            t.start();
            byte[] buf = new byte[256];
            for (int i = 0; i < n; i++) {
                assertEquals(256, pull.recv(buf, 0));
                assertEquals((byte) i, buf[0], "order preserved at message " + i);
            }
            t.join();
        }
    }
}
