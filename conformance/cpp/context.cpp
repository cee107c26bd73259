// zmq::context_t options/lifecycle, zmq::version, socket_t over several transports.
#include "check.hpp"
#include <zmq.hpp>
#include <atomic>
#include <thread>
#include <tuple>
#include <unistd.h>

int main() {
    check::watchdog(20);
    check::guarded("version", [] {
        int maj, min, pat;
        std::tie(maj, min, pat) = zmq::version();
        check::eq("version.major", maj, 4);
        check::expect("version.minor", min >= 3, "minor " + std::to_string(min));
    });
    check::guarded("ctxopts", [] {
        zmq::context_t ctx(2, 100);
        check::eq("ctx.io_threads_ctor", ctx.get(zmq::ctxopt::io_threads), 2);
        check::eq("ctx.max_sockets_ctor", ctx.get(zmq::ctxopt::max_sockets), 100);
        ctx.set(zmq::ctxopt::ipv6, 1);
        check::eq("ctx.ipv6", ctx.get(zmq::ctxopt::ipv6), 1);
        ctx.set(zmq::ctxopt::blocky, false);
        check::eq("ctx.blocky", ctx.get(zmq::ctxopt::blocky), 0);
        check::expect("ctx.socket_limit", ctx.get(zmq::ctxopt::socket_limit) >= 100, "socket_limit too small");
        try { ctx.set(static_cast<zmq::ctxopt>(9999), 1); check::fail("ctx.bad_option_einval", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("ctx.bad_option_einval", e.num(), EINVAL); }

        // max_sockets is enforced: EMFILE when exceeded
        zmq::context_t small;
        small.set(zmq::ctxopt::max_sockets, 2);
        zmq::socket_t s1(small, zmq::socket_type::pair), s2(small, zmq::socket_type::pair);
        try { zmq::socket_t s3(small, zmq::socket_type::pair); check::fail("ctx.max_sockets_emfile", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("ctx.max_sockets_emfile", e.num(), EMFILE); }
    });
    check::guarded("ctx_move", [] {
        zmq::context_t a;
        void *h = a.handle();
        zmq::context_t b(std::move(a));
        check::expect("ctx.move_ctor", b.handle() == h && a.handle() == nullptr, "context move broke handles");
        zmq::socket_t s(b, zmq::socket_type::pair);
        s.close();
        b.close();
        check::expect("ctx.close", b.handle() == nullptr, "handle not null");
    });
    check::guarded("transports", [] {
        zmq::context_t ctx;
        std::string ipc = "ipc:///tmp/ferromq-cpp-" + std::to_string(getpid());
        for (std::string ep : {std::string("inproc://t-inproc"), std::string("tcp://127.0.0.1:*"), ipc}) {
            std::string name = "transport." + ep.substr(0, ep.find(':'));
            zmq::socket_t a(ctx, zmq::socket_type::pair), b(ctx, zmq::socket_type::pair);
            a.set(zmq::sockopt::linger, 0);
            b.set(zmq::sockopt::linger, 0);
            a.bind(ep);
            b.connect(a.get(zmq::sockopt::last_endpoint));
            b.set(zmq::sockopt::rcvtimeo, 5000);
            std::string big(100000, 'x');
            a.send(zmq::buffer(big));
            zmq::message_t m;
            auto r = b.recv(m);
            check::expect(name, r && m.size() == big.size() && m.to_string() == big, "100 kB message lost/corrupt");
        }
    });
    check::guarded("blocky_term", [] {
        // context close with a pending outgoing message and linger=0 must not hang
        zmq::context_t ctx;
        zmq::socket_t p(ctx, zmq::socket_type::push);
        p.set(zmq::sockopt::linger, 0);
        p.connect("tcp://127.0.0.1:1");
        (void)p.send(zmq::str_buffer("stuck"), zmq::send_flags::dontwait);
        p.close();
        ctx.close();
        check::pass("ctx.close_linger0");
    });
    check::guarded("shutdown_wakes_blocked_recv", [] {
        zmq::context_t ctx;
        int err = 0;
        std::atomic<bool> bound{false};
        std::thread t([&] {
            try {
                zmq::socket_t s(ctx, zmq::socket_type::pull);
                s.bind("inproc://blocked");
                bound = true;
                zmq::message_t m;
                (void)s.recv(m);
            } catch (const zmq::error_t &e) { err = e.num(); }
            bound = true;
        });
        // Shut down only once the socket exists (on a slow machine the thread may not have
        // made it yet); the short sleep then lets the receive block.
        while (!bound) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ctx.shutdown();
        t.join();
        check::eq("ctx.shutdown_eterm_in_thread", err, ETERM);
    });
    return check::result();
}
