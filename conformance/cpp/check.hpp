// Tiny check harness shared by the cppzmq conformance programs.
// Each check prints "PASS name" or "FAIL name: reason"; main() returns check::result().
#pragma once
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <unistd.h>

namespace check {
inline int &failures() { static int n = 0; return n; }
inline int &passes() { static int n = 0; return n; }
inline void pass(const std::string &name) { std::printf("PASS %s\n", name.c_str()); std::fflush(stdout); ++passes(); }
inline void fail(const std::string &name, const std::string &why) {
    std::printf("FAIL %s: %s\n", name.c_str(), why.c_str()); std::fflush(stdout); ++failures();
}
inline bool expect(const std::string &name, bool ok, const std::string &why) {
    if (ok) pass(name); else fail(name, why);
    return ok;
}
template <class A, class B>
bool eq(const std::string &name, const A &actual, const B &expected) {
    if (actual == expected) { pass(name); return true; }
    std::ostringstream os; os << "expected [" << expected << "] got [" << actual << "]";
    fail(name, os.str());
    return false;
}
// Run a block; an escaping exception counts as a failure of `name`.
template <class F> void guarded(const std::string &name, F f) {
    try { f(); }
    catch (const std::exception &e) { fail(name, std::string("unexpected exception: ") + e.what()); }
    catch (...) { fail(name, "unexpected non-std exception"); }
}
// Watchdog: a hang turns into a FAIL line and exit code 2 instead of a stuck run.
inline void on_alarm(int) {
    const char msg[] = "FAIL watchdog: program timed out (hang)\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(2);
}
inline void watchdog(unsigned secs) { std::signal(SIGALRM, on_alarm); alarm(secs); }
inline int result() {
    std::printf("# %d passed, %d failed\n", passes(), failures());
    return failures() ? 1 : 0;
}
} // namespace check
