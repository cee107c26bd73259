// PLAIN authentication with a user-written ZAP handler (the way cppzmq users do it),
// plus the User-Id / Peer-Address metadata it produces on received messages.
#include "check.hpp"
#include <zmq.hpp>
#include <zmq_addon.hpp>
#include <atomic>
#include <thread>
#include <vector>

// Minimal ZAP handler: accepts admin/secret, rejects everything else.
static void zap_handler(zmq::context_t &ctx, std::atomic<int> &requests, std::atomic<bool> &ready) {
    zmq::socket_t zap(ctx, zmq::socket_type::rep);
    zap.set(zmq::sockopt::linger, 0);
    zap.bind("inproc://zeromq.zap.01");
    ready = true;
    while (true) {
        std::vector<zmq::message_t> req;
        try {
            if (!zmq::recv_multipart(zap, std::back_inserter(req))) continue;
        } catch (const zmq::error_t &) { return; }   // ETERM on shutdown
        ++requests;
        // version, request_id, domain, address, identity, mechanism, username, password
        bool ok = req.size() >= 8 && req[5].to_string() == "PLAIN" && req[6].to_string() == "admin" &&
                  req[7].to_string() == "secret";
        std::vector<zmq::message_t> rep;
        rep.emplace_back(std::string("1.0"));
        rep.emplace_back(req.size() > 1 ? req[1].to_string() : std::string());
        rep.emplace_back(std::string(ok ? "200" : "400"));
        rep.emplace_back(std::string(ok ? "OK" : "denied"));
        rep.emplace_back(std::string(ok ? "user-admin" : ""));
        rep.emplace_back();
        try { zmq::send_multipart(zap, rep); } catch (const zmq::error_t &) { return; }
    }
}

int main() {
    check::watchdog(25);
    zmq::context_t ctx;
    std::atomic<int> requests{0};
    std::atomic<bool> ready{false};
    std::thread zt(zap_handler, std::ref(ctx), std::ref(requests), std::ref(ready));
    while (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(1));

    check::guarded("plain", [&] {
        zmq::socket_t srv(ctx, zmq::socket_type::dealer), cli(ctx, zmq::socket_type::dealer),
            bad(ctx, zmq::socket_type::dealer);
        for (auto *s : {&srv, &cli, &bad}) s->set(zmq::sockopt::linger, 0);
        srv.set(zmq::sockopt::plain_server, true);
        srv.set(zmq::sockopt::zap_domain, "test");
        check::eq("plain.server_get", srv.get(zmq::sockopt::plain_server), true);
        check::eq("plain.server_mechanism", srv.get(zmq::sockopt::mechanism), ZMQ_PLAIN);
        cli.set(zmq::sockopt::plain_username, "admin");
        cli.set(zmq::sockopt::plain_password, "secret");
        check::eq("plain.username_get", cli.get(zmq::sockopt::plain_username), std::string("admin"));
        check::eq("plain.client_mechanism", cli.get(zmq::sockopt::mechanism), ZMQ_PLAIN);
        srv.set(zmq::sockopt::rcvtimeo, 3000);
        srv.bind("tcp://127.0.0.1:*");
        std::string ep = srv.get(zmq::sockopt::last_endpoint);
        cli.connect(ep);
        cli.send(zmq::str_buffer("auth'd"));
        zmq::message_t m;
        auto r = srv.recv(m);
        check::expect("plain.delivered", r && m.to_string() == "auth'd", "no message over PLAIN");
        if (r) {
            try { check::eq("plain.user_id_meta", std::string(m.gets("User-Id")), std::string("user-admin")); }
            catch (const zmq::error_t &e) { check::fail("plain.user_id_meta", e.what()); }
            try { check::eq("plain.peer_address_meta", std::string(m.gets("Peer-Address")), std::string("127.0.0.1")); }
            catch (const zmq::error_t &e) { check::fail("plain.peer_address_meta", e.what()); }
        }
        bad.set(zmq::sockopt::plain_username, "admin");
        bad.set(zmq::sockopt::plain_password, "wrong");
        bad.connect(ep);
        (void)bad.send(zmq::str_buffer("intruder"), zmq::send_flags::dontwait);
        srv.set(zmq::sockopt::rcvtimeo, 300);
        auto r2 = srv.recv(m);
        check::expect("plain.rejected", !r2, "message from rejected client delivered");
        check::expect("plain.zap_consulted", requests >= 2, "ZAP handler saw " + std::to_string(requests) + " requests");
    });
    ctx.shutdown();
    zt.join();
    return check::result();
}
