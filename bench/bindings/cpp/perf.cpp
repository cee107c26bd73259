// Workload C driver, C++ over cppzmq (zmq.hpp): libzmq's classic perf pair.
//   perf ROLE ENDPOINT SIZE COUNT      (see bench/bindings/c/perf.c)
// Linked against libzmq.so.5 by soname; LD_LIBRARY_PATH selects the library.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <zmq.hpp>

using clk = std::chrono::steady_clock;

static double since(clk::time_point t0) {
    return std::chrono::duration<double>(clk::now() - t0).count();
}

static void check_size(const zmq::message_t &m, size_t size) {
    if (m.size() != size) throw std::runtime_error("message of wrong size");
}

int main(int argc, char **argv) {
    if (argc != 5) {
        std::cerr << "usage: " << argv[0] << " ROLE ENDPOINT SIZE COUNT\n";
        return 2;
    }
    const std::string role = argv[1], ep = argv[2];
    const long size = std::atol(argv[3]), count = std::atol(argv[4]);
    if (size < 1 || count < 2) {
        std::cerr << "perf(cpp): SIZE >= 1 and COUNT >= 2 required\n";
        return 2;
    }
    int maj, min, pat;
    zmq_version(&maj, &min, &pat);
    std::cerr << "perf(cpp): zmq_version " << maj << '.' << min << '.' << pat << '\n';
    try {
        zmq::context_t ctx;
        if (role == "local_thr") {
            zmq::socket_t s(ctx, zmq::socket_type::pull);
            s.bind(ep);
            zmq::message_t m;
            clk::time_point t0;
            for (long i = 0; i < count; i++) {
                if (!s.recv(m, zmq::recv_flags::none)) throw std::runtime_error("recv");
                check_size(m, size);
                if (i == 0) t0 = clk::now();
            }
            double el = since(t0);
            std::printf("RESULT {\"msg_per_s\": %.3f}\n", (count - 1) / el);
        } else if (role == "remote_thr") {
            zmq::socket_t s(ctx, zmq::socket_type::push);
            s.connect(ep);
            for (long i = 0; i < count; i++) {
                zmq::message_t m(static_cast<size_t>(size));
                std::memset(m.data(), 'D', m.size());
                s.send(m, zmq::send_flags::none);
            }
        } else if (role == "local_lat") {
            zmq::socket_t s(ctx, zmq::socket_type::rep);
            s.bind(ep);
            zmq::message_t m;
            for (long i = 0; i < count; i++) {
                if (!s.recv(m, zmq::recv_flags::none)) throw std::runtime_error("recv");
                s.send(m, zmq::send_flags::none);
            }
        } else if (role == "remote_lat") {
            zmq::socket_t s(ctx, zmq::socket_type::req);
            s.connect(ep);
            zmq::message_t m(static_cast<size_t>(size));
            std::memset(m.data(), 'D', m.size());
            auto t0 = clk::now();
            for (long i = 0; i < count; i++) {
                s.send(m, zmq::send_flags::none);
                if (!s.recv(m, zmq::recv_flags::none)) throw std::runtime_error("recv");
                check_size(m, size);
            }
            double el = since(t0);
            std::printf("RESULT {\"latency_us\": %.3f}\n", el * 1e6 / (2.0 * count));
        } else {
            std::cerr << "perf(cpp): unknown role '" << role << "'\n";
            return 2;
        }
    } catch (const std::exception &e) {
        std::cerr << "perf(cpp): " << e.what() << '\n';
        return 1;
    }
    std::fflush(stdout);
    return 0;
}
