// zmq::monitor_t subclass receiving socket events.
#include "check.hpp"
#include <zmq.hpp>
#include <chrono>
#include <set>
#include <string>
#include <thread>

using namespace std::chrono_literals;

struct recorder : zmq::monitor_t {
    std::set<std::string> seen;
    std::string listening_addr, accepted_addr, connected_addr;
    bool started = false;
    void on_monitor_started() override { started = true; }
    void on_event_listening(const zmq_event_t &, const char *a) override { seen.insert("listening"); listening_addr = a; }
    void on_event_accepted(const zmq_event_t &e, const char *a) override {
        seen.insert("accepted"); accepted_addr = a; accepted_fd = e.value; }
    void on_event_connected(const zmq_event_t &, const char *a) override { seen.insert("connected"); connected_addr = a; }
    void on_event_connect_delayed(const zmq_event_t &, const char *) override { seen.insert("connect_delayed"); }
    void on_event_connect_retried(const zmq_event_t &e, const char *) override {
        seen.insert("connect_retried"); retry_ivl = e.value; }
    int retry_ivl = -1;
    void on_event_closed(const zmq_event_t &, const char *) override { seen.insert("closed"); }
    void on_event_disconnected(const zmq_event_t &, const char *) override { seen.insert("disconnected"); }
    void on_event_handshake_succeeded(const zmq_event_t &, const char *) override { seen.insert("handshake_succeeded"); }
    void on_event_unknown(const zmq_event_t &e, const char *) override { seen.insert("unknown:" + std::to_string(e.event)); }
    int accepted_fd = -1;

    // pump events until `name` shows up or the deadline passes
    bool wait_for(const std::string &name, std::chrono::milliseconds limit = 3000ms) {
        auto end = std::chrono::steady_clock::now() + limit;
        while (!seen.count(name) && std::chrono::steady_clock::now() < end) check_event(50);
        return seen.count(name) > 0;
    }
};

static std::string join(const std::set<std::string> &s) {
    std::string r;
    for (auto &x : s) r += x + " ";
    return r;
}

int main() {
    check::watchdog(25);
    zmq::context_t ctx;
    check::guarded("monitor", [&] {
        zmq::socket_t srv(ctx, zmq::socket_type::rep), cli(ctx, zmq::socket_type::req);
        srv.set(zmq::sockopt::linger, 0);
        cli.set(zmq::sockopt::linger, 0);
        recorder smon, cmon;
        smon.init(srv, "inproc://mon-srv");
        cmon.init(cli, "inproc://mon-cli", ZMQ_EVENT_CONNECTED | ZMQ_EVENT_CONNECT_DELAYED |
                                                ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED |
                                                ZMQ_EVENT_CLOSED);
        check::expect("monitor.on_monitor_started", smon.started && cmon.started, "on_monitor_started not called");

        srv.bind("tcp://127.0.0.1:*");
        std::string ep = srv.get(zmq::sockopt::last_endpoint);
        check::expect("monitor.listening", smon.wait_for("listening"), "no LISTENING; saw: " + join(smon.seen));
        check::eq("monitor.listening_addr", smon.listening_addr, ep);

        cli.connect(ep);
        check::expect("monitor.connected", cmon.wait_for("connected"), "no CONNECTED; saw: " + join(cmon.seen));
        check::eq("monitor.connected_addr", cmon.connected_addr, ep);
        check::expect("monitor.accepted", smon.wait_for("accepted"), "no ACCEPTED; saw: " + join(smon.seen));
        check::expect("monitor.accepted_fd", smon.accepted_fd > 0, "accepted event value is not an fd");
        check::expect("monitor.accepted_addr", smon.accepted_addr.rfind("tcp://127.0.0.1:", 0) == 0,
                      "accepted addr '" + smon.accepted_addr + "'");
        check::expect("monitor.handshake_succeeded", cmon.wait_for("handshake_succeeded"),
                      "no HANDSHAKE_SUCCEEDED; saw: " + join(cmon.seen));
        check::expect("monitor.event_filter", !cmon.seen.count("listening") && !cmon.seen.count("accepted"),
                      "filtered-out events delivered: " + join(cmon.seen));

        // round trip works while monitored
        cli.send(zmq::str_buffer("q"));
        zmq::message_t m;
        srv.set(zmq::sockopt::rcvtimeo, 3000);
        check::expect("monitor.traffic", srv.recv(m).has_value(), "no traffic with monitor attached");

        // server goes away -> client sees DISCONNECTED; server's own monitor sees CLOSED
        srv.close();
        check::expect("monitor.server_closed", smon.wait_for("closed"), "no CLOSED; saw: " + join(smon.seen));
        check::expect("monitor.client_disconnected", cmon.wait_for("disconnected"),
                      "no DISCONNECTED; saw: " + join(cmon.seen));
        check::expect("monitor.no_unknown_events",
                      join(smon.seen).find("unknown") == std::string::npos &&
                          join(cmon.seen).find("unknown") == std::string::npos,
                      "unknown events: " + join(smon.seen) + "| " + join(cmon.seen));
        cli.close();
    });
    check::guarded("monitor_retry", [&] {
        // connecting to a port nobody listens on: CONNECT_DELAYED, then CONNECT_RETRIED whose
        // value is the reconnect interval (plus jitter)
        zmq::socket_t probe(ctx, zmq::socket_type::dealer);
        zmq::socket_t tmp(ctx, zmq::socket_type::dealer);
        tmp.bind("tcp://127.0.0.1:*");
        std::string dead = tmp.get(zmq::sockopt::last_endpoint);
        tmp.close();   // now nothing listens there
        probe.set(zmq::sockopt::linger, 0);
        probe.set(zmq::sockopt::reconnect_ivl, 50);
        recorder pm;
        pm.init(probe, "inproc://mon-retry");
        probe.connect(dead);
        check::expect("monitor.connect_delayed", pm.wait_for("connect_delayed"),
                      "no CONNECT_DELAYED; saw: " + join(pm.seen));
        check::expect("monitor.connect_retried", pm.wait_for("connect_retried"),
                      "no CONNECT_RETRIED; saw: " + join(pm.seen));
        // libzmq reports reconnect_ivl plus a random jitter below reconnect_ivl
        check::expect("monitor.connect_retried_value", pm.retry_ivl >= 50 && pm.retry_ivl < 100,
                      "retry interval " + std::to_string(pm.retry_ivl) + " not in [50,100)");
        check::expect("monitor.no_connected_to_dead_port", !pm.seen.count("connected"), "CONNECTED to a dead port");
    });
    return check::result();
}
