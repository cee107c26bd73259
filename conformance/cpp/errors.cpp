// Error handling: zmq::error_t with num(), EAGAIN -> empty optional, EFSM, bad endpoints.
#include "check.hpp"
#include <zmq.hpp>
#include <chrono>
#include <cstring>

int main() {
    check::watchdog(20);
    zmq::context_t ctx;
    check::guarded("eagain", [&] {
        zmq::socket_t pull(ctx, zmq::socket_type::pull);
        pull.bind("inproc://errors-eagain");
        zmq::message_t m;
        auto r = pull.recv(m, zmq::recv_flags::dontwait);
        check::expect("recv.dontwait_empty_optional", !r.has_value(), "recv returned a value with no message");
        check::eq("recv.dontwait_errno", zmq_errno(), EAGAIN);
        char buf[8];
        auto rb = pull.recv(zmq::buffer(buf), zmq::recv_flags::dontwait);
        check::expect("recv_buffer.dontwait_empty_optional", !rb.has_value(), "buffer recv returned a value");

        // rcvtimeo: blocking recv returns empty optional after roughly the timeout
        pull.set(zmq::sockopt::rcvtimeo, 100);
        auto t0 = std::chrono::steady_clock::now();
        auto rt = pull.recv(m);
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - t0).count();
        check::expect("recv.rcvtimeo_empty", !rt.has_value(), "recv with rcvtimeo returned a value");
        check::expect("recv.rcvtimeo_elapsed", ms >= 80 && ms < 10000,
                      "elapsed " + std::to_string(ms) + " ms for rcvtimeo=100");

        // send dontwait on an unconnected PUSH -> empty optional
        zmq::socket_t push(ctx, zmq::socket_type::push);
        auto s = push.send(zmq::str_buffer("x"), zmq::send_flags::dontwait);
        check::expect("send.dontwait_empty_optional", !s.has_value(), "send with no peer returned a value");
    });

    check::guarded("efsm", [&] {
        zmq::socket_t rep(ctx, zmq::socket_type::rep);
        zmq::socket_t req(ctx, zmq::socket_type::req);
        rep.bind("inproc://errors-efsm");
        req.connect("inproc://errors-efsm");
        req.send(zmq::str_buffer("one"));
        try {
            req.send(zmq::str_buffer("two"));
            check::fail("req.double_send_efsm", "second send did not throw");
        } catch (const zmq::error_t &e) {
            check::eq("req.double_send_efsm", e.num(), EFSM);
            check::eq("req.efsm_what", std::string(e.what()), std::string(zmq_strerror(EFSM)));
        }
        zmq::message_t m;
        try {
            (void)rep.send(zmq::str_buffer("early"));
            check::fail("rep.send_before_recv_efsm", "send before recv did not throw");
        } catch (const zmq::error_t &e) {
            check::eq("rep.send_before_recv_efsm", e.num(), EFSM);
        }
        rep.set(zmq::sockopt::rcvtimeo, 5000);
        req.set(zmq::sockopt::rcvtimeo, 5000);
        (void)rep.recv(m);
        check::eq("req.first_delivered", m.to_string(), std::string("one"));
        rep.send(zmq::str_buffer("ack"));
        auto r = req.recv(m);
        check::expect("req.reply", r && m.to_string() == "ack", "reply wrong");
        try {
            (void)req.recv(m, zmq::recv_flags::dontwait);
            check::fail("req.recv_twice_efsm", "recv in send state did not throw");
        } catch (const zmq::error_t &e) {
            check::eq("req.recv_twice_efsm", e.num(), EFSM);
        }
    });

    check::guarded("endpoints", [&] {
        zmq::socket_t s(ctx, zmq::socket_type::pair);
        try { s.bind("bogus://nowhere"); check::fail("bind.unknown_transport", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("bind.unknown_transport", e.num(), EPROTONOSUPPORT); }
        try { s.connect("tcp://"); check::fail("connect.malformed", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("connect.malformed", e.num(), EINVAL); }
        try { s.connect("no-scheme"); check::fail("connect.no_scheme", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("connect.no_scheme", e.num(), EINVAL); }
        s.bind("inproc://errors-dup");
        zmq::socket_t t(ctx, zmq::socket_type::pair);
        try { t.bind("inproc://errors-dup"); check::fail("bind.inproc_in_use", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("bind.inproc_in_use", e.num(), EADDRINUSE); }
        try { s.unbind("inproc://never-bound"); check::fail("unbind.not_bound", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("unbind.not_bound", e.num(), ENOENT); }
        try { s.disconnect("tcp://127.0.0.1:1"); check::fail("disconnect.not_connected", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("disconnect.not_connected", e.num(), ENOENT); }
        try { s.set(zmq::sockopt::subscribe, "x"); check::fail("setsockopt.wrong_type", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("setsockopt.wrong_type", e.num(), EINVAL); }
        try { zmq::socket_t bad(ctx, 12345); check::fail("socket.bad_type", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("socket.bad_type", e.num(), EINVAL); }
    });

    check::guarded("eterm", [&] {
        zmq::context_t c2;
        zmq::socket_t s(c2, zmq::socket_type::pull);
        s.set(zmq::sockopt::linger, 0);
        c2.shutdown();
        zmq::message_t m;
        try { (void)s.recv(m); check::fail("recv.after_shutdown_eterm", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("recv.after_shutdown_eterm", e.num(), ETERM); }
        try { zmq::socket_t s2(c2, zmq::socket_type::pull); check::fail("socket.after_shutdown_eterm", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("socket.after_shutdown_eterm", e.num(), ETERM); }
    });
    return check::result();
}
