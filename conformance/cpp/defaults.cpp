// Default values of socket options as read through cppzmq's get(zmq::sockopt::...),
// compared with libzmq 4.3's documented defaults; plus HWM and last_endpoint behaviour.
#include "check.hpp"
#include <zmq.hpp>
#include <chrono>
#include <thread>

int main() {
    check::watchdog(20);
    zmq::context_t ctx;
    check::guarded("defaults", [&] {
        zmq::socket_t s(ctx, zmq::socket_type::dealer);
        check::eq("default.affinity", s.get(zmq::sockopt::affinity), uint64_t(0));
        check::eq("default.backlog", s.get(zmq::sockopt::backlog), 100);
        check::eq("default.linger", s.get(zmq::sockopt::linger), -1);
        check::eq("default.rcvhwm", s.get(zmq::sockopt::rcvhwm), 1000);
        check::eq("default.sndtimeo", s.get(zmq::sockopt::sndtimeo), -1);
        check::eq("default.sndbuf", s.get(zmq::sockopt::sndbuf), -1);
        check::eq("default.rcvbuf", s.get(zmq::sockopt::rcvbuf), -1);
        check::eq("default.reconnect_ivl", s.get(zmq::sockopt::reconnect_ivl), 100);
        check::eq("default.reconnect_ivl_max", s.get(zmq::sockopt::reconnect_ivl_max), 0);
        check::eq("default.maxmsgsize", s.get(zmq::sockopt::maxmsgsize), int64_t(-1));
        check::eq("default.multicast_hops", s.get(zmq::sockopt::multicast_hops), 1);
        check::eq("default.rate", s.get(zmq::sockopt::rate), 100);
        check::eq("default.recovery_ivl", s.get(zmq::sockopt::recovery_ivl), 10000);
        check::eq("default.tcp_keepalive", s.get(zmq::sockopt::tcp_keepalive), -1);
        check::eq("default.tcp_keepalive_idle", s.get(zmq::sockopt::tcp_keepalive_idle), -1);
        check::eq("default.tos", s.get(zmq::sockopt::tos), 0);
        check::eq("default.handshake_ivl", s.get(zmq::sockopt::handshake_ivl), 30000);
        check::eq("default.heartbeat_ivl", s.get(zmq::sockopt::heartbeat_ivl), 0);
        check::eq("default.heartbeat_ttl", s.get(zmq::sockopt::heartbeat_ttl), 0);
        check::eq("default.heartbeat_timeout", s.get(zmq::sockopt::heartbeat_timeout), -1);
        check::eq("default.connect_timeout", s.get(zmq::sockopt::connect_timeout), 0);
        check::eq("default.immediate", s.get(zmq::sockopt::immediate), false);
        check::eq("default.ipv6", s.get(zmq::sockopt::ipv6), false);
        check::eq("default.mechanism", s.get(zmq::sockopt::mechanism), 0);
        check::eq("default.thread_safe", s.get(zmq::sockopt::thread_safe), false);
        check::eq("default.zap_domain", s.get(zmq::sockopt::zap_domain), std::string());
        check::eq("default.plain_server", s.get(zmq::sockopt::plain_server), false);
        check::eq("default.use_fd", s.get(zmq::sockopt::use_fd), -1);
        check::eq("default.invert_matching", s.get(zmq::sockopt::invert_matching), false);
        check::eq("default.rcvmore", s.get(zmq::sockopt::rcvmore), false);
    });
    check::guarded("hwm", [&] {
        // inproc PUSH->PULL with nobody reading: dontwait sends succeed until sndhwm+rcvhwm
        zmq::socket_t push(ctx, zmq::socket_type::push), pull(ctx, zmq::socket_type::pull);
        push.set(zmq::sockopt::sndhwm, 5);
        pull.set(zmq::sockopt::rcvhwm, 5);
        pull.bind("inproc://hwm");
        push.connect("inproc://hwm");
        int sent = 0;
        while (sent < 1000 && push.send(zmq::str_buffer("m"), zmq::send_flags::dontwait)) ++sent;
        check::eq("hwm.inproc_sum", sent, 10);
        check::eq("hwm.eagain", zmq_errno(), EAGAIN);
        // sndtimeo: a blocking send at HWM gives up after the timeout with an empty optional
        push.set(zmq::sockopt::sndtimeo, 50);
        auto t0 = std::chrono::steady_clock::now();
        auto r = push.send(zmq::str_buffer("m"), zmq::send_flags::none);
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
        check::expect("hwm.sndtimeo", !r && ms >= 40 && ms < 10000, "r=" + std::to_string(r.has_value()) + " ms=" + std::to_string(ms));
        // draining the queue lets sends through again (libzmq returns credit in batches of
        // about hwm/2 reads, so drain everything rather than one message)
        zmq::message_t m;
        for (int i = 0; i < sent; ++i) (void)pull.recv(m);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        check::expect("hwm.after_drain", push.send(zmq::str_buffer("m"), zmq::send_flags::dontwait).has_value(),
                      "send still blocked after draining the queue");
    });
    check::guarded("last_endpoint_connect", [&] {
        zmq::socket_t s(ctx, zmq::socket_type::dealer);
        s.set(zmq::sockopt::linger, 0);
        s.connect("tcp://127.0.0.1:5");
        check::eq("last_endpoint.after_connect", s.get(zmq::sockopt::last_endpoint), std::string("tcp://127.0.0.1:5"));
        s.disconnect("tcp://127.0.0.1:5");
        check::pass("disconnect.by_connect_endpoint");
    });
    return check::result();
}
