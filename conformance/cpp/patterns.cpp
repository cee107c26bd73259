// Socket-pattern options as cppzmq users set them: xpub/xsub, req_relaxed/correlate,
// probe_router, connect_routing_id (ZMQ_CONFLATE is in conflate.cpp).
#include "check.hpp"
#include <zmq.hpp>
#include <zmq_addon.hpp>
#include <chrono>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

static bool recv_str(zmq::socket_t &s, std::string &out) {
    zmq::message_t m;
    if (!s.recv(m)) return false;
    out = m.to_string();
    return true;
}

int main() {
    check::watchdog(25);
    zmq::context_t ctx;
    check::guarded("xpub", [&] {
        zmq::socket_t xpub(ctx, zmq::socket_type::xpub), sub(ctx, zmq::socket_type::sub);
        xpub.set(zmq::sockopt::xpub_verbose, true);
        xpub.set(zmq::sockopt::rcvtimeo, 3000);
        xpub.bind("inproc://xpub");
        sub.connect("inproc://xpub");
        sub.set(zmq::sockopt::subscribe, "topic");
        std::string s;
        bool ok = recv_str(xpub, s);
        check::expect("xpub.sub_msg", ok && s == std::string("\x01topic", 6),
                      ok ? "subscription message wrong: '" + s + "'" : "no subscription message");
        sub.set(zmq::sockopt::unsubscribe, "topic");
        ok = recv_str(xpub, s);
        check::expect("xpub.unsub_msg", ok && s == std::string("\x00topic", 6),
                      "unsubscription message wrong");
        zmq::socket_t xsub(ctx, zmq::socket_type::xsub), pub(ctx, zmq::socket_type::pub);
        pub.bind("inproc://xsub");
        xsub.connect("inproc://xsub");
        xsub.send(zmq::buffer(std::string("\x01", 1) + "a"));
        xsub.set(zmq::sockopt::rcvtimeo, 200);
        bool got = false;
        for (int i = 0; i < 25 && !got; ++i) {
            pub.send(zmq::str_buffer("abc"));
            got = recv_str(xsub, s) && s == "abc";
        }
        check::expect("xsub.manual_subscribe", got, "xsub did not receive after sending \\x01a");
    });
    check::guarded("req_relaxed", [&] {
        zmq::socket_t rep(ctx, zmq::socket_type::rep), req(ctx, zmq::socket_type::req);
        req.set(zmq::sockopt::req_relaxed, true);
        req.set(zmq::sockopt::req_correlate, true);
        req.set(zmq::sockopt::rcvtimeo, 3000);
        rep.set(zmq::sockopt::rcvtimeo, 3000);
        rep.bind("inproc://relaxed");
        req.connect("inproc://relaxed");
        req.send(zmq::str_buffer("first"));
        try { req.send(zmq::str_buffer("second")); check::pass("req_relaxed.second_send_ok"); }
        catch (const zmq::error_t &e) { check::fail("req_relaxed.second_send_ok", e.what()); }
        std::string s;
        recv_str(rep, s);   // "first" (whichever arrives first)
        rep.send(zmq::str_buffer("reply-to-first"));
        recv_str(rep, s);
        check::eq("req_relaxed.rep_sees_second", s, std::string("second"));
        rep.send(zmq::str_buffer("reply-to-second"));
        std::string r;
        bool ok = recv_str(req, r);
        check::expect("req_correlate.only_matching_reply", ok && r == "reply-to-second",
                      ok ? "got '" + r + "'" : "no reply");
    });
    check::guarded("probe_router", [&] {
        zmq::socket_t router(ctx, zmq::socket_type::router), dealer(ctx, zmq::socket_type::dealer);
        router.set(zmq::sockopt::rcvtimeo, 3000);
        router.bind("tcp://127.0.0.1:*");
        dealer.set(zmq::sockopt::probe_router, true);
        dealer.set(zmq::sockopt::routing_id, "prober");
        dealer.connect(router.get(zmq::sockopt::last_endpoint));
        std::vector<zmq::message_t> parts;
        auto n = zmq::recv_multipart(router, std::back_inserter(parts));
        check::expect("probe_router.empty_probe",
                      n && parts.size() == 2 && parts[0].to_string() == "prober" && parts[1].size() == 0,
                      "expected [prober][], got " + std::to_string(parts.size()) + " frames");
    });
    check::guarded("connect_routing_id", [&] {
        zmq::socket_t router(ctx, zmq::socket_type::router), peer(ctx, zmq::socket_type::router);
        router.bind("inproc://cri");
        peer.set(zmq::sockopt::routing_id, "server-side-name");
        router.set(zmq::sockopt::connect_routing_id, "alias");
        peer.set(zmq::sockopt::rcvtimeo, 3000);
        zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
        dealer.set(zmq::sockopt::rcvtimeo, 3000);
        dealer.bind("inproc://cri-d");
        router.set(zmq::sockopt::connect_routing_id, "d-alias");
        router.connect("inproc://cri-d");
        router.set(zmq::sockopt::router_mandatory, true);
        bool sent = false;
        for (int i = 0; i < 50 && !sent; ++i) {
            try {
                router.send(zmq::str_buffer("d-alias"), zmq::send_flags::sndmore);
                router.send(zmq::str_buffer("hello"));
                sent = true;
            } catch (const zmq::error_t &) { std::this_thread::sleep_for(10ms); }
        }
        check::expect("connect_routing_id.addressable", sent, "peer never routable by connect_routing_id");
        std::string s;
        bool ok = sent && recv_str(dealer, s);
        check::expect("connect_routing_id.delivered", ok && s == "hello", ok ? "got '" + s + "'" : "nothing received");
    });
    return check::result();
}
