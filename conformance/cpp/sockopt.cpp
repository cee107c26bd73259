// Socket options through cppzmq's typed set(zmq::sockopt::...)/get(...).
#include "check.hpp"
#include <zmq.hpp>
#include <chrono>

int main() {
    check::watchdog(20);
    zmq::context_t ctx;
    check::guarded("options", [&] {
        zmq::socket_t s(ctx, zmq::socket_type::dealer);
        s.set(zmq::sockopt::linger, 0);
        check::eq("linger.set0", s.get(zmq::sockopt::linger), 0);
        s.set(zmq::sockopt::linger, 250);
        check::eq("linger.set250", s.get(zmq::sockopt::linger), 250);

        check::eq("sndhwm.default", s.get(zmq::sockopt::sndhwm), 1000);
        s.set(zmq::sockopt::sndhwm, 42);
        check::eq("sndhwm.set", s.get(zmq::sockopt::sndhwm), 42);
        s.set(zmq::sockopt::rcvhwm, 7);
        check::eq("rcvhwm.set", s.get(zmq::sockopt::rcvhwm), 7);

        check::eq("rcvtimeo.default", s.get(zmq::sockopt::rcvtimeo), -1);
        s.set(zmq::sockopt::rcvtimeo, 100);
        check::eq("rcvtimeo.set", s.get(zmq::sockopt::rcvtimeo), 100);
        s.set(zmq::sockopt::sndtimeo, 150);
        check::eq("sndtimeo.set", s.get(zmq::sockopt::sndtimeo), 150);

        // routing_id: string and binary overloads, and get into string
        check::eq("routing_id.default_empty", s.get(zmq::sockopt::routing_id), std::string());
        s.set(zmq::sockopt::routing_id, "alice");
        check::eq("routing_id.set_str", s.get(zmq::sockopt::routing_id), std::string("alice"));
        const char bin[] = {'\x01', '\x00', '\x02'};
        s.set(zmq::sockopt::routing_id, zmq::buffer(bin, 3));
        check::eq("routing_id.set_binary", s.get(zmq::sockopt::routing_id), std::string(bin, 3));
        char idbuf[256];
        size_t n = s.get(zmq::sockopt::routing_id, zmq::buffer(idbuf));
        check::eq("routing_id.get_buffer_len", n, 3u);

        // bool options
        s.set(zmq::sockopt::immediate, true);
        check::eq("immediate.bool", s.get(zmq::sockopt::immediate), true);
        s.set(zmq::sockopt::ipv6, false);
        check::eq("ipv6.bool", s.get(zmq::sockopt::ipv6), false);

        // int64
        s.set(zmq::sockopt::maxmsgsize, int64_t(1) << 20);
        check::eq("maxmsgsize.int64", s.get(zmq::sockopt::maxmsgsize), int64_t(1) << 20);

        check::eq("last_endpoint.unbound", s.get(zmq::sockopt::last_endpoint), std::string());
        s.bind("tcp://127.0.0.1:*");
        std::string ep = s.get(zmq::sockopt::last_endpoint);
        check::expect("last_endpoint.tcp_wildcard",
                      ep.rfind("tcp://127.0.0.1:", 0) == 0 && ep.size() > 16 && ep.back() != '*',
                      "got '" + ep + "'");
        s.bind("inproc://sockopt-ep");
        check::eq("last_endpoint.inproc", s.get(zmq::sockopt::last_endpoint),
                  std::string("inproc://sockopt-ep"));
        // unbind via the endpoint cppzmq users read back
        s.unbind(ep);
        check::pass("unbind.last_endpoint");

        // events/fd are readable
        int ev = s.get(zmq::sockopt::events);
        check::expect("events.readable", (ev & ~(ZMQ_POLLIN | ZMQ_POLLOUT)) == 0, "weird events value");
        auto fd = s.get(zmq::sockopt::fd);
        check::expect("fd.valid", fd >= 0, "fd < 0");
    });

    check::guarded("routing", [&] {
        // ROUTER sees DEALER's routing_id; router_mandatory makes unknown peers an error
        zmq::socket_t router(ctx, zmq::socket_type::router);
        zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
        router.set(zmq::sockopt::router_mandatory, true);
        router.set(zmq::sockopt::rcvtimeo, 5000);
        dealer.set(zmq::sockopt::rcvtimeo, 5000);
        dealer.set(zmq::sockopt::routing_id, "bob");
        router.bind("inproc://routing");
        dealer.connect("inproc://routing");
        dealer.send(zmq::str_buffer("ping"));
        zmq::message_t id, body;
        auto r = router.recv(id);
        check::expect("router.recv_id", r.has_value(), "router recv timed out");
        check::eq("router.routing_id_seen", id.to_string(), std::string("bob"));
        (void)router.recv(body);
        check::eq("router.body", body.to_string(), std::string("ping"));
        router.send(zmq::str_buffer("bob"), zmq::send_flags::sndmore);
        router.send(zmq::str_buffer("pong"));
        zmq::message_t reply;
        auto rr = dealer.recv(reply);
        check::expect("dealer.reply", rr && reply.to_string() == "pong", "reply wrong");
        try {
            router.send(zmq::str_buffer("nobody"), zmq::send_flags::sndmore);
            router.send(zmq::str_buffer("x"));
            check::fail("router_mandatory.ehostunreach", "no exception");
        } catch (const zmq::error_t &e) {
            check::eq("router_mandatory.ehostunreach", e.num(), EHOSTUNREACH);
        }
    });

    check::guarded("subscribe", [&] {
        zmq::socket_t pub(ctx, zmq::socket_type::pub);
        zmq::socket_t sub(ctx, zmq::socket_type::sub);
        pub.bind("inproc://subopt");
        sub.connect("inproc://subopt");
        sub.set(zmq::sockopt::subscribe, "keep");
        sub.set(zmq::sockopt::rcvtimeo, 200);
        // pub/sub subscription propagation is async; retry briefly
        bool got = false;
        for (int i = 0; i < 50 && !got; ++i) {
            pub.send(zmq::str_buffer("drop-me"));
            pub.send(zmq::str_buffer("keep-me"));
            zmq::message_t m;
            if (sub.recv(m)) {
                got = true;
                check::eq("subscribe.filter", m.to_string(), std::string("keep-me"));
            }
        }
        check::expect("subscribe.delivered", got, "nothing received on subscribed topic");
    });
    return check::result();
}
