// RAII context/socket with move semantics, message_t construction/copy/move,
// send/recv with send_flags/recv_flags and zmq::buffer.
#include "check.hpp"
#include <zmq.hpp>
#include <cstring>
#include <utility>
#include <vector>

int main() {
    check::watchdog(20);
    zmq::context_t ctx;
    check::expect("context.handle_nonnull", ctx.handle() != nullptr, "context handle is null");
    check::eq("context.io_threads_default", ctx.get(zmq::ctxopt::io_threads), 1);

    // --- message_t construction ----------------------------------------------------
    check::guarded("message", [&] {
        zmq::message_t empty;
        check::eq("message.default_empty", empty.size(), 0u);
        check::expect("message.default_empty_flag", empty.empty(), "empty() false for default message");

        zmq::message_t sized(16);
        check::eq("message.sized", sized.size(), 16u);

        std::string s = "hello world";
        zmq::message_t from_str(s);
        check::eq("message.from_string.size", from_str.size(), s.size());
        check::eq("message.from_string.to_string", from_str.to_string(), s);
        check::eq("message.to_string_view", std::string(from_str.to_string_view()), s);

        const char raw[] = {'a', 'b', '\0', 'c'};
        zmq::message_t from_buf(raw, sizeof raw);
        check::expect("message.from_buffer.binary",
                      from_buf.size() == 4 && std::memcmp(from_buf.data(), raw, 4) == 0,
                      "binary payload with embedded NUL not preserved");

        std::vector<int> ints{1, 2, 3};
        zmq::message_t from_range(ints.begin(), ints.end());
        check::expect("message.from_iter_range",
                      from_range.size() == 3 * sizeof(int) && from_range.data<int>()[2] == 3,
                      "iterator-range message wrong");

        // move construction leaves the source empty
        zmq::message_t moved(std::move(from_str));
        check::eq("message.move.target", moved.to_string(), s);
        check::eq("message.move.source_empty", from_str.size(), 0u);

        // copy() shares content; both stay valid and equal
        zmq::message_t copy;
        copy.copy(moved);
        check::eq("message.copy.content", copy.to_string(), s);
        check::eq("message.copy.source_kept", moved.to_string(), s);
        check::expect("message.equal_op", copy == moved, "copied message not == to source");

        // move() transfers content
        zmq::message_t dst;
        dst.move(copy);
        check::eq("message.move_fn.dst", dst.to_string(), s);
        check::eq("message.move_fn.src_empty", copy.size(), 0u);

        // rebuild
        dst.rebuild("xyz", 3);
        check::eq("message.rebuild", dst.to_string(), std::string("xyz"));

        // zero-copy with free fn
        static int freed = 0;
        char *heap = static_cast<char *>(std::malloc(5));
        std::memcpy(heap, "zcopy", 5);
        {
            zmq::message_t zc(heap, 5, [](void *d, void *) { std::free(d); ++freed; }, nullptr);
            check::eq("message.zero_copy.content", zc.to_string(), std::string("zcopy"));
        }
        check::eq("message.zero_copy.freed", freed, 1);
    });

    // --- socket RAII + move semantics -------------------------------------------------
    check::guarded("socket", [&] {
        zmq::socket_t a(ctx, zmq::socket_type::pair);
        check::expect("socket.valid", static_cast<bool>(a), "new socket tests false");
        void *h = a.handle();
        zmq::socket_t b(std::move(a));
        check::expect("socket.move.source_invalid", !a && a.handle() == nullptr, "moved-from socket still valid");
        check::expect("socket.move.target_handle", b.handle() == h, "moved socket handle changed");
        zmq::socket_t c;
        check::expect("socket.default_invalid", !c, "default socket tests true");
        c = std::move(b);
        check::expect("socket.move_assign", c.handle() == h && !b, "move-assign did not transfer handle");
        check::eq("socket.get_type", c.get(zmq::sockopt::type), ZMQ_PAIR);
        check::expect("socket.get_socket_type",
                      c.get(zmq::sockopt::socket_type) == zmq::socket_type::pair, "socket_type mismatch");
        c.close();
        check::expect("socket.close_invalidates", !c, "closed socket still valid");
    });

    // --- send/recv PAIR over inproc --------------------------------------------------------
    check::guarded("pair", [&] {
        zmq::socket_t srv(ctx, zmq::socket_type::pair);
        zmq::socket_t cli(ctx, zmq::socket_type::pair);
        srv.bind("inproc://basics");
        cli.connect("inproc://basics");

        auto sent = cli.send(zmq::buffer(std::string("part1")), zmq::send_flags::sndmore);
        check::expect("send.buffer.sndmore", sent && *sent == 5, "send returned wrong size/empty");
        auto sent2 = cli.send(zmq::str_buffer("part2"), zmq::send_flags::none);
        check::expect("send.str_buffer", sent2 && *sent2 == 5, "send of str_buffer failed");

        zmq::message_t m1, m2;
        auto r1 = srv.recv(m1, zmq::recv_flags::none);
        check::expect("recv.msg.size", r1 && *r1 == 5, "recv size wrong");
        check::eq("recv.msg.content", m1.to_string(), std::string("part1"));
        check::expect("recv.msg.more", m1.more(), "more() false on first part");
        check::eq("recv.rcvmore_opt", srv.get(zmq::sockopt::rcvmore), true);
        auto r2 = srv.recv(m2);
        check::expect("recv.msg2", r2 && m2.to_string() == "part2", "second part wrong");
        check::expect("recv.msg2.no_more", !m2.more(), "more() true on last part");

        // recv into a mutable buffer, with truncation
        cli.send(zmq::str_buffer("0123456789"));
        char small[4];
        auto rb = srv.recv(zmq::buffer(small), zmq::recv_flags::none);
        check::expect("recv.buffer.truncated",
                      rb && rb->size == 4 && rb->untruncated_size == 10 && rb->truncated(),
                      "recv_buffer_size wrong");
        check::expect("recv.buffer.content", std::memcmp(small, "0123", 4) == 0, "buffer content wrong");

        // send a message_t (moved in), it is emptied by send
        zmq::message_t out("payload", 7);
        cli.send(out, zmq::send_flags::none);
        check::eq("send.msg.emptied", out.size(), 0u);
        zmq::message_t in;
        srv.recv(in);
        check::eq("send.msg.received", in.to_string(), std::string("payload"));

        // socket_ref
        zmq::socket_ref ref = cli;
        ref.send(zmq::str_buffer("via-ref"), zmq::send_flags::dontwait);
        zmq::message_t viaref;
        srv.recv(viaref);
        check::eq("socket_ref.send", viaref.to_string(), std::string("via-ref"));
    });

    // --- gets("Socket-Type") on a received message (tcp, ZMTP metadata) -----------------------
    check::guarded("gets", [&] {
        zmq::socket_t rep(ctx, zmq::socket_type::dealer);
        zmq::socket_t req(ctx, zmq::socket_type::router);
        rep.bind("tcp://127.0.0.1:*");
        std::string ep = rep.get(zmq::sockopt::last_endpoint);
        req.connect(ep);
        rep.set(zmq::sockopt::rcvtimeo, 5000);
        // ROUTER can't send until it knows the peer; let DEALER talk first.
        rep.send(zmq::str_buffer("hi"));
        zmq::message_t id, body;
        req.set(zmq::sockopt::rcvtimeo, 5000);
        auto ok = req.recv(id);
        check::expect("gets.router_recv", ok.has_value() && id.more(), "router got no identity frame");
        req.recv(body);
        const char *st = nullptr;
        try { st = body.gets("Socket-Type"); } catch (const zmq::error_t &e) {
            check::fail("gets.socket_type", std::string("threw ") + e.what());
        }
        if (st) check::eq("gets.socket_type", std::string(st), std::string("DEALER"));
        try {
            body.gets("No-Such-Property");
            check::fail("gets.unknown_throws", "no exception for unknown property");
        } catch (const zmq::error_t &e) {
            check::eq("gets.unknown_throws", e.num(), EINVAL);
        }
    });

    ctx.shutdown();
    ctx.close();
    check::expect("context.close_invalidates", ctx.handle() == nullptr, "handle not null after close");
    return check::result();
}
