// zmq::proxy in a thread, ended by context shutdown; zmq::proxy_steerable TERMINATE.
#include "check.hpp"
#include <zmq.hpp>
#include <atomic>
#include <chrono>
#include <thread>

using namespace std::chrono_literals;

int main() {
    check::watchdog(25);
    check::guarded("proxy_shutdown", [&] {
        zmq::context_t ctx;
        std::atomic<int> proxy_errno{-1};
        std::atomic<bool> proxy_returned{false};
        std::atomic<bool> ready{false};
        std::thread t([&] {
            zmq::socket_t front(ctx, zmq::socket_type::router);
            zmq::socket_t back(ctx, zmq::socket_type::dealer);
            front.set(zmq::sockopt::linger, 0);
            back.set(zmq::sockopt::linger, 0);
            front.bind("inproc://proxy-front");
            back.bind("inproc://proxy-back");
            ready = true;
            try {
                zmq::proxy(front, back);
                proxy_returned = true;
            } catch (const zmq::error_t &e) {
                proxy_errno = e.num();
            }
        });
        while (!ready) std::this_thread::sleep_for(1ms);

        zmq::socket_t worker(ctx, zmq::socket_type::rep);
        zmq::socket_t client(ctx, zmq::socket_type::req);
        worker.set(zmq::sockopt::linger, 0);
        client.set(zmq::sockopt::linger, 0);
        worker.set(zmq::sockopt::rcvtimeo, 5000);
        client.set(zmq::sockopt::rcvtimeo, 5000);
        worker.connect("inproc://proxy-back");
        client.connect("inproc://proxy-front");

        for (int i = 0; i < 3; ++i) {
            std::string q = "req" + std::to_string(i);
            client.send(zmq::buffer(q));
            zmq::message_t m;
            auto r = worker.recv(m);
            if (!check::expect("proxy.forward_" + std::to_string(i), r && m.to_string() == q,
                               r ? "got '" + m.to_string() + "'" : "worker recv timed out"))
                break;
            worker.send(zmq::str_buffer("rep"), zmq::send_flags::none);
            auto rr = client.recv(m);
            check::expect("proxy.reply_" + std::to_string(i), rr && m.to_string() == "rep", "reply lost");
        }

        ctx.shutdown();
        // the proxy thread must come out of zmq::proxy with ETERM
        auto end = std::chrono::steady_clock::now() + 5s;
        while (proxy_errno == -1 && !proxy_returned && std::chrono::steady_clock::now() < end)
            std::this_thread::sleep_for(5ms);
        bool ended = proxy_errno != -1 || proxy_returned;
        check::expect("proxy.ends_on_shutdown", ended, "proxy still running 5 s after ctx.shutdown()");
        if (ended) {
            t.join();
            check::eq("proxy.eterm", static_cast<int>(proxy_errno), ETERM);
        } else {
            t.detach();
            return;
        }
        worker.close();
        client.close();
        ctx.close();
        check::pass("proxy.context_closed");
    });

    check::guarded("proxy_steerable", [&] {
        zmq::context_t ctx;
        zmq::socket_t front(ctx, zmq::socket_type::pull), back(ctx, zmq::socket_type::push);
        zmq::socket_t capture(ctx, zmq::socket_type::pub);
        zmq::socket_t control(ctx, zmq::socket_type::pair), ctl(ctx, zmq::socket_type::pair);
        front.bind("inproc://sp-front");
        back.bind("inproc://sp-back");
        capture.bind("inproc://sp-capture");
        control.bind("inproc://sp-control");
        ctl.connect("inproc://sp-control");
        zmq::socket_t cap_sub(ctx, zmq::socket_type::sub);
        cap_sub.set(zmq::sockopt::subscribe, "");
        cap_sub.set(zmq::sockopt::rcvtimeo, 5000);
        cap_sub.connect("inproc://sp-capture");
        zmq::socket_t src(ctx, zmq::socket_type::push), dst(ctx, zmq::socket_type::pull);
        src.connect("inproc://sp-front");
        dst.connect("inproc://sp-back");
        dst.set(zmq::sockopt::rcvtimeo, 5000);

        std::atomic<bool> ok{false};
        std::atomic<int> err{0};
        std::thread t([&] {
            try { zmq::proxy_steerable(zmq::socket_ref(front), zmq::socket_ref(back), zmq::socket_ref(capture), zmq::socket_ref(control)); ok = true; }
            catch (const zmq::error_t &e) { err = e.num(); }
        });
        src.send(zmq::str_buffer("through"));
        zmq::message_t m;
        auto r = dst.recv(m);
        check::expect("proxy_steerable.forward", r && m.to_string() == "through", "message not forwarded");
        zmq::message_t c;
        auto rc = cap_sub.recv(c);
        check::expect("proxy_steerable.capture", rc && c.to_string() == "through", "capture socket got nothing");
        ctl.send(zmq::str_buffer("TERMINATE"));
        auto end = std::chrono::steady_clock::now() + 5s;
        while (!ok && !err && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(5ms);
        bool ended = ok || err;
        check::expect("proxy_steerable.terminate_returns", ended && ok,
                      ended ? "threw errno " + std::to_string(err) : "still running after TERMINATE");
        if (ended) t.join();
        else { t.detach(); std::fflush(stdout); std::_Exit(check::result()); }
    });
    return check::result();
}
