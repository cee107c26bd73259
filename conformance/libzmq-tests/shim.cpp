// test_security_curve.cpp links three functions of libzmq's internals (a static build
// gives them to it); a shared libzmq does not export them, so they are defined here.
#include <cstdio>
#include <cstdlib>

extern "C" int sodium_init(void);

namespace zmq {
void zmq_abort(const char *errmsg_) {
    std::fprintf(stderr, "%s\n", errmsg_);
    std::abort();
}
void random_open() {
    if (sodium_init() < 0) {
        std::abort();
    }
}
void random_close() {}
}  // namespace zmq
