// zmq::poll with zmq::pollitem_t (sockets and a raw fd).
#include "check.hpp"
#include <zmq.hpp>
#include <chrono>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;

int main() {
    check::watchdog(20);
    zmq::context_t ctx;
    check::guarded("poll", [&] {
        zmq::socket_t a(ctx, zmq::socket_type::pair), b(ctx, zmq::socket_type::pair);
        zmq::socket_t idle(ctx, zmq::socket_type::pull);
        a.bind("inproc://poll");
        b.connect("inproc://poll");
        idle.bind("inproc://poll-idle");

        zmq::pollitem_t items[] = {{b.handle(), 0, ZMQ_POLLIN, 0}, {idle.handle(), 0, ZMQ_POLLIN, 0}};
        auto t0 = std::chrono::steady_clock::now();
        int n = zmq::poll(items, 2, 50ms);
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
        check::eq("poll.timeout_zero_ready", n, 0);
        check::expect("poll.timeout_elapsed", ms >= 40 && ms < 10000, "elapsed " + std::to_string(ms) + " ms for 50 ms");

        a.send(zmq::str_buffer("x"));
        n = zmq::poll(items, 2, 2000ms);
        check::eq("poll.one_ready", n, 1);
        check::expect("poll.revents_pollin", (items[0].revents & ZMQ_POLLIN) != 0, "b not POLLIN");
        check::eq("poll.idle_no_revents", items[1].revents, 0);

        // vector overload, POLLOUT on a connected pair
        std::vector<zmq::pollitem_t> v = {{a.handle(), 0, ZMQ_POLLOUT, 0}};
        n = zmq::poll(v, 0ms);
        check::eq("poll.vector_pollout", n, 1);
        check::expect("poll.vector_revents", (v[0].revents & ZMQ_POLLOUT) != 0, "a not POLLOUT");

        zmq::message_t m;
        (void)b.recv(m);
        n = zmq::poll(items, 2, 0ms);
        check::eq("poll.drained_zero", n, 0);

        // raw fd item (pipe)
        int fds[2];
        if (pipe(fds) != 0) { check::fail("poll.fd", "pipe() failed"); return; }
        zmq::pollitem_t fditems[] = {{nullptr, fds[0], ZMQ_POLLIN, 0}, {b.handle(), 0, ZMQ_POLLIN, 0}};
        n = zmq::poll(fditems, 2, 0ms);
        check::eq("poll.fd_not_ready", n, 0);
        (void)!write(fds[1], "z", 1);
        n = zmq::poll(fditems, 2, 1000ms);
        check::eq("poll.fd_ready", n, 1);
        check::expect("poll.fd_revents", (fditems[0].revents & ZMQ_POLLIN) != 0, "pipe fd not POLLIN");
        close(fds[0]); close(fds[1]);

        // wakeup from another thread's send while blocked in poll (-1 timeout)
        std::thread t([&] { std::this_thread::sleep_for(50ms); a.send(zmq::str_buffer("late")); });
        zmq::pollitem_t one[] = {{b.handle(), 0, ZMQ_POLLIN, 0}};
        n = zmq::poll(one, 1, std::chrono::milliseconds(-1));
        t.join();
        check::eq("poll.infinite_wakes", n, 1);

        // zmq::poll on a closed socket handle -> ENOTSOCK
        zmq::socket_t gone(ctx, zmq::socket_type::pair);
        void *h = gone.handle();
        gone.close();
        zmq::pollitem_t bad[] = {{h, 0, ZMQ_POLLIN, 0}};
        try { zmq::poll(bad, 1, 0ms); check::fail("poll.closed_socket_enotsock", "no exception"); }
        catch (const zmq::error_t &e) { check::eq("poll.closed_socket_enotsock", e.num(), ENOTSOCK); }
    });
    return check::result();
}
