#!/usr/bin/env python3
"""Workload C for the Node binding: 64 B tcp PUSH/PULL throughput and REQ/REP latency of
@ferromq/node (batch API and one-message-at-a-time await API), of zeromq.js v6 when a
shared-library build is available, and of the C perf pair (bench/out/zbench, dlopen'ed
library), each over ferromq and over Debian's libzmq; interleaved runs, medians.

usage: compare.py [--runs N] [--size B] [--thr-count N] [--lat-count N] [--json FILE]
"""
import argparse, json, os, re, socket, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_DIR = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(NODE_DIR))
ZBENCH = os.path.join(ROOT, "bench", "out", "zbench")
ZJS = os.path.join(ROOT, "build", "conformance", "node", "app-debian", "node_modules", "zeromq")
LIBS = {"ferromq": os.path.join(ROOT, "dist", "lib"), "libzmq": "/usr/lib/x86_64-linux-gnu"}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def env_for(libdir, extra=None):
    e = dict(os.environ, LD_LIBRARY_PATH=libdir)
    e.update(extra or {})
    return e


def pair(server_cmd, client_cmd, env_s, env_c, measure_on, timeout=180):
    srv = subprocess.Popen(server_cmd, env=env_s, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    try:
        cli = subprocess.run(client_cmd, env=env_c, capture_output=True, text=True, timeout=timeout)
        so, se = srv.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.communicate()
        sys.stderr.write("run timed out: %s\n" % " ".join(client_cmd))
        return None
    out = so if measure_on == "server" else cli.stdout
    m = re.search(r'RESULT (\{.*\})', out)
    if m:
        return json.loads(m.group(1))
    m = re.search(r'\{"ok":true.*\}', out)
    if m:
        d = json.loads(m.group(0))
        if "msg_per_s" in d:
            return {"msg_per_s": d["msg_per_s"]}
        if "classic_us" in d:
            return {"latency_us": d["classic_us"]}
    sys.stderr.write("run failed:\n%s\n%s\n%s\n" % (out, se, cli.stderr))
    return None


def c_cmd(lib, role, ep, size, count):
    cmd = [ZBENCH, "--lib", os.path.join(lib, "libzmq.so.5"), role, "--endpoint", ep, "--size", str(size), "--count", str(count)]
    if role.endswith("lat"):
        cmd += ["--warmup", "0"]
    return cmd


def node_cmd(script, role, ep, size, count):
    return ["node", script, role, ep, str(size), str(count)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--thr-count", type=int, default=2000000)
    ap.add_argument("--zjs-thr-count", type=int, default=500000)
    ap.add_argument("--lat-count", type=int, default=20000)
    ap.add_argument("--json")
    a = ap.parse_args()
    perf = os.path.join(NODE_DIR, "perf.js")
    zjs = os.path.join(HERE, "zeromqjs-perf.js")
    have_zjs = os.path.isdir(ZJS)
    impls = ["c", "node-batch", "node-await"] + (["zeromq.js"] if have_zjs else [])
    res = {}
    for r in range(a.runs):
        for lib, ldir in LIBS.items():
            for impl in impls:
                for kind in ("thr", "lat"):
                    if impl == "node-await" and kind == "lat":
                        continue   # the latency driver is one-at-a-time already
                    ep = "tcp://127.0.0.1:%d" % free_port()
                    n = a.thr_count if kind == "thr" else a.lat_count
                    if impl == "zeromq.js" and kind == "thr":
                        n = a.zjs_thr_count
                    roles = ("local_thr", "remote_thr") if kind == "thr" else ("local_lat", "remote_lat")
                    measure = "server" if kind == "thr" else "client"
                    e = env_for(ldir)
                    if impl == "c":
                        cmds = [c_cmd(ldir, ro, ep, a.size, n) for ro in roles]
                    elif impl.startswith("node"):
                        e = env_for(ldir, {"FERROMQ_NODE_API": impl.split("-")[1]})
                        cmds = [node_cmd(perf, ro, ep, a.size, n) for ro in roles]
                    else:
                        e = env_for(ldir, {"ZEROMQ_JS": ZJS})
                        cmds = [node_cmd(zjs, ro, ep, a.size, n) for ro in roles]
                    v = pair(cmds[0], cmds[1], e, e, measure, timeout=60 if impl == "zeromq.js" else 180)
                    key = "%s/%s/%s" % (lib, impl, kind)
                    val = None if v is None else v.get("msg_per_s", v.get("latency_us"))
                    res.setdefault(key, []).append(val)
                    print("run %d/%d %-28s %s" % (r + 1, a.runs, key, "FAIL" if val is None else "%.2f" % val), flush=True)
    summary = {}
    for k, vs in res.items():
        ok = [v for v in vs if v is not None]
        if ok:
            med = statistics.median(ok)
            cv = statistics.pstdev(ok) / statistics.mean(ok) if len(ok) > 1 else 0.0
            summary[k] = {"median": med, "min": min(ok), "max": max(ok), "cv": cv, "runs": len(ok), "fails": len(vs) - len(ok)}
    print()
    print("| Library | Driver | 64 B PUSH/PULL msg/s (median, min–max) | vs C | REQ/REP one-way µs (median, min–max) | vs C |")
    print("|---|---|---|---|---|---|")
    for lib in LIBS:
        ct = summary.get("%s/c/thr" % lib, {}).get("median")
        cl = summary.get("%s/c/lat" % lib, {}).get("median")
        for impl in impls:
            t = summary.get("%s/%s/thr" % (lib, impl))
            l = summary.get("%s/%s/lat" % (lib, impl))
            ts = "%s (%s–%s)%s" % (f"{t['median']:,.0f}", f"{t['min']:,.0f}", f"{t['max']:,.0f}", " noisy" if t["cv"] > 0.1 else "") if t else "–"
            ls = "%.1f (%.1f–%.1f)%s" % (l["median"], l["min"], l["max"], " noisy" if l["cv"] > 0.1 else "") if l else "–"
            tr = "%.2f×" % (t["median"] / ct) if t and ct else "–"
            lr = "%.2f×" % (l["median"] / cl) if l and cl else "–"
            print("| %s | %s | %s | %s | %s | %s |" % (lib, impl, ts, tr, ls, lr))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"raw": res, "summary": summary, "args": vars(a)}, f, indent=1)


if __name__ == "__main__":
    main()
