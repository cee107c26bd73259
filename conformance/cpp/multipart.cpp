// zmq_addon.hpp: zmq::multipart_t and send_multipart/recv_multipart.
#include "check.hpp"
#include <zmq.hpp>
#include <zmq_addon.hpp>
#include <array>
#include <iterator>
#include <vector>

int main() {
    check::watchdog(20);
    zmq::context_t ctx;
    check::guarded("multipart_t", [&] {
        zmq::socket_t a(ctx, zmq::socket_type::pair), b(ctx, zmq::socket_type::pair);
        a.bind("inproc://mp");
        b.connect("inproc://mp");
        b.set(zmq::sockopt::rcvtimeo, 5000);

        zmq::multipart_t out;
        out.addstr("header");
        out.addtyp<int>(42);
        out.add(zmq::message_t("", 0));          // empty frame in the middle
        out.pushstr("first");                     // prepend
        out.addmem("tail", 4);
        check::eq("multipart.size_before_send", out.size(), 5u);
        check::expect("multipart.send", out.send(a), "send() returned false");
        check::expect("multipart.emptied_after_send", out.empty(), "multipart not empty after send");

        zmq::multipart_t in;
        check::expect("multipart.recv", in.recv(b), "recv() returned false");
        check::eq("multipart.recv_size", in.size(), 5u);
        check::eq("multipart.peekstr0", in.peekstr(0), std::string("first"));
        check::eq("multipart.peektyp1", in.peekstr(1), std::string("header"));
        check::eq("multipart.popstr", in.popstr(), std::string("first"));
        check::eq("multipart.popstr2", in.popstr(), std::string("header"));
        check::eq("multipart.poptyp", in.poptyp<int>(), 42);
        auto empty = in.pop();
        check::eq("multipart.empty_frame", empty.size(), 0u);
        check::eq("multipart.last", in.popstr(), std::string("tail"));
        check::expect("multipart.drained", in.empty(), "frames left over");

        // clone / equality / move
        zmq::multipart_t m1;
        m1.addstr("x");
        m1.addstr("y");
        zmq::multipart_t m2 = m1.clone();
        check::expect("multipart.clone_equal", m1.equal(&m2), "clone not equal");
        zmq::multipart_t m3(std::move(m2));
        check::expect("multipart.move", m3.size() == 2 && m2.empty(), "move did not transfer");
        check::expect("multipart.str_nonempty", !m3.str().empty(), "str() empty");

        // construct directly from a socket (receives one message)
        m3.send(a);
        zmq::multipart_t m4(b);
        check::expect("multipart.ctor_from_socket", m4.size() == 2 && m4.peekstr(1) == "y",
                      "constructed multipart wrong");

        // dontwait with nothing queued -> false
        zmq::multipart_t none;
        check::expect("multipart.recv_dontwait_false", !none.recv(b, ZMQ_DONTWAIT),
                      "recv(dontwait) returned true with no message");
    });

    check::guarded("free_functions", [&] {
        zmq::socket_t router(ctx, zmq::socket_type::router), dealer(ctx, zmq::socket_type::dealer);
        router.bind("tcp://127.0.0.1:*");
        dealer.set(zmq::sockopt::routing_id, "d1");
        dealer.connect(router.get(zmq::sockopt::last_endpoint));
        router.set(zmq::sockopt::rcvtimeo, 5000);
        dealer.set(zmq::sockopt::rcvtimeo, 5000);

        std::array<zmq::const_buffer, 3> parts = {zmq::str_buffer("a"), zmq::str_buffer("bb"),
                                                  zmq::str_buffer("ccc")};
        auto n = zmq::send_multipart(dealer, parts);
        check::expect("send_multipart.count", n && *n == 3, "send_multipart did not report 3");

        std::vector<zmq::message_t> got;
        auto r = zmq::recv_multipart(router, std::back_inserter(got));
        check::expect("recv_multipart.count", r && *r == 4 && got.size() == 4,
                      "expected 4 frames (id + 3), got " + std::to_string(got.size()));
        if (got.size() == 4) {
            check::eq("recv_multipart.id", got[0].to_string(), std::string("d1"));
            check::eq("recv_multipart.frame3", got[3].to_string(), std::string("ccc"));
            check::expect("recv_multipart.more_flags", got[0].more() && got[2].more() && !got[3].more(),
                          "more() flags wrong");
        }
        // reply by moving received frames back
        std::vector<zmq::message_t> reply;
        reply.emplace_back(std::move(got[0]));
        reply.emplace_back(std::string("reply"));
        auto sr = zmq::send_multipart(router, reply);
        check::expect("send_multipart.messages", sr && *sr == 2, "send_multipart of messages failed");
        std::vector<zmq::message_t> back;
        auto rb = zmq::recv_multipart(dealer, std::back_inserter(back));
        check::expect("recv_multipart.reply", rb && back.size() == 1 && back[0].to_string() == "reply",
                      "reply wrong");

        std::vector<zmq::message_t> nothing;
        auto rn = zmq::recv_multipart(dealer, std::back_inserter(nothing), zmq::recv_flags::dontwait);
        check::expect("recv_multipart.dontwait_empty", !rn.has_value() && nothing.empty(),
                      "dontwait returned frames");

        // recv_multipart_n into a fixed array
        zmq::send_multipart(dealer, parts);
        std::array<zmq::message_t, 4> fixed;
        auto rf = zmq::recv_multipart_n(router, fixed.data(), fixed.size());
        check::expect("recv_multipart_n", rf && *rf == 4 && fixed[1].to_string() == "a", "recv_multipart_n wrong");
        zmq::send_multipart(dealer, parts);
        std::array<zmq::message_t, 2> toosmall;
        try {
            (void)zmq::recv_multipart_n(router, toosmall.data(), toosmall.size());
            check::fail("recv_multipart_n.too_small_throws", "no exception");
        } catch (const std::runtime_error &) {
            check::pass("recv_multipart_n.too_small_throws");
        }
    });
    return check::result();
}
