// zmq::poller_t (draft API; build with -DZMQ_BUILD_DRAFT_API).
// cppzmq-conformance: draft
#include "check.hpp"
#include <zmq.hpp>
#include <zmq_addon.hpp>
#include <chrono>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

int main() {
    check::watchdog(20);
    zmq::context_t ctx;
    check::guarded("poller", [&] {
        zmq::socket_t a(ctx, zmq::socket_type::pair), b(ctx, zmq::socket_type::pair);
        zmq::socket_t c(ctx, zmq::socket_type::pull);
        a.bind("inproc://poller");
        b.connect("inproc://poller");
        c.bind("inproc://poller-idle");

        zmq::poller_t<int> poller;
        int tag_b = 1, tag_c = 2;
        poller.add(b, zmq::event_flags::pollin, &tag_b);
        poller.add(c, zmq::event_flags::pollin, &tag_c);
        check::eq("poller.size", poller.size(), 2u);

        std::vector<zmq::poller_event<int>> events(2);
        // timeout with nothing ready: cppzmq returns 0 (it swallows EAGAIN)
        auto t0 = std::chrono::steady_clock::now();
        size_t n = poller.wait_all(events, 50ms);
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
        check::eq("poller.timeout_zero", n, 0u);
        check::expect("poller.timeout_elapsed", ms >= 40 && ms < 10000, "elapsed " + std::to_string(ms) + " ms");

        a.send(zmq::str_buffer("hello"));
        n = poller.wait_all(events, 2000ms);
        check::eq("poller.one_ready", n, 1u);
        if (n == 1) {
            check::expect("poller.event_socket", events[0].socket == b, "wrong socket reported");
            check::expect("poller.event_user_data", events[0].user_data == &tag_b, "wrong user_data");
            check::expect("poller.event_flags",
                          (events[0].events & zmq::event_flags::pollin) == zmq::event_flags::pollin,
                          "pollin not set");
        }
        zmq::message_t m;
        (void)b.recv(m);

        // modify to pollout: a connected PAIR is writable
        poller.modify(b, zmq::event_flags::pollout);
        n = poller.wait_all(events, 0ms);
        check::eq("poller.modify_pollout", n, 1u);
        if (n >= 1)
            check::expect("poller.modify_flags",
                          (events[0].events & zmq::event_flags::pollout) == zmq::event_flags::pollout,
                          "pollout not set");

        // remove, then removing again throws EINVAL
        poller.remove(b);
        check::eq("poller.size_after_remove", poller.size(), 1u);
        try { poller.remove(b); check::fail("poller.remove_twice_einval", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("poller.remove_twice_einval", e.num(), EINVAL); }
        // adding the same socket twice throws EINVAL
        try { poller.add(c, zmq::event_flags::pollin, &tag_c); check::fail("poller.add_twice_einval", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("poller.add_twice_einval", e.num(), EINVAL); }

        // two sockets ready at once
        poller.add(b, zmq::event_flags::pollin, &tag_b);
        zmq::socket_t push(ctx, zmq::socket_type::push);
        push.connect("inproc://poller-idle");
        push.send(zmq::str_buffer("to-c"));
        a.send(zmq::str_buffer("to-b"));
        std::this_thread::sleep_for(20ms);
        n = poller.wait_all(events, 1000ms);
        check::eq("poller.two_ready", n, 2u);

        // empty poller: wait with a timeout; libzmq's zmq_poller_wait_all returns EFAULT? cppzmq
        // only needs it not to report events.
        zmq::poller_t<> empty;
        std::vector<zmq::poller_event<>> ev0(1);
        try {
            size_t e = empty.wait_all(ev0, 10ms);
            check::eq("poller.empty_wait", e, 0u);
        } catch (const zmq::error_t &e) {
            check::fail("poller.empty_wait", std::string("threw ") + e.what());
        }
    });
    check::guarded("active_poller", [&] {
        zmq::socket_t a(ctx, zmq::socket_type::pair), b(ctx, zmq::socket_type::pair);
        a.bind("inproc://active");
        b.connect("inproc://active");
        zmq::active_poller_t ap;
        int calls = 0;
        zmq::event_flags seen = zmq::event_flags::none;
        ap.add(b, zmq::event_flags::pollin, [&](zmq::event_flags e) {
            ++calls; seen = e;
            zmq::message_t m;
            (void)b.recv(m);
        });
        check::eq("active_poller.size", ap.size(), 1u);
        check::eq("active_poller.idle", ap.wait(std::chrono::milliseconds(10)), 0u);
        a.send(zmq::str_buffer("go"));
        size_t n = ap.wait(std::chrono::milliseconds(2000));
        check::expect("active_poller.handler_called", n == 1 && calls == 1, "n=" + std::to_string(n) +
                      " calls=" + std::to_string(calls));
        check::expect("active_poller.handler_flags", seen == zmq::event_flags::pollin, "flags not pollin");
        ap.remove(b);
        check::expect("active_poller.empty_after_remove", ap.empty(), "not empty");
    });
    return check::result();
}
