// ZMQ_CONFLATE via zmq::sockopt::conflate: a conflating PULL keeps only the newest message.
#include "check.hpp"
#include <zmq.hpp>
#include <chrono>
#include <thread>

using namespace std::chrono_literals;

static bool recv_str(zmq::socket_t &s, std::string &out) {
    zmq::message_t m;
    if (!s.recv(m)) return false;
    out = m.to_string();
    return true;
}

int main() {
    check::watchdog(20);
    zmq::context_t ctx;
    check::guarded("conflate", [&] {
        zmq::socket_t push(ctx, zmq::socket_type::push), pull(ctx, zmq::socket_type::pull);
        pull.set(zmq::sockopt::conflate, true);
        check::eq("conflate.get", pull.get(zmq::sockopt::conflate), true);
        pull.bind("tcp://127.0.0.1:*");
        push.connect(pull.get(zmq::sockopt::last_endpoint));
        for (int i = 0; i < 10; ++i) push.send(zmq::buffer(std::to_string(i)));
        // Wait for the connection to deliver (the ten usually travel in one write), then
        // give the rest time to land: a loaded machine may take a while for the first.
        zmq::pollitem_t item{pull.handle(), 0, ZMQ_POLLIN, 0};
        zmq::poll(&item, 1, std::chrono::milliseconds(5000));
        std::this_thread::sleep_for(200ms);
        std::string s;
        pull.set(zmq::sockopt::rcvtimeo, 2000);
        bool got1 = recv_str(pull, s);
        check::expect("conflate.keeps_last", got1 && s == "9", got1 ? "got '" + s + "'" : "recv timed out/failed");
        pull.set(zmq::sockopt::rcvtimeo, 50);
        bool more = recv_str(pull, s);
        check::expect("conflate.only_one", !more, "second message '" + s + "' present");
    });
    return check::result();
}
