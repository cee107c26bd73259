"""Workload C driver, Python over pyzmq: libzmq's classic perf pair.

    python perf.py ROLE ENDPOINT SIZE COUNT      (see bench/bindings/c/perf.c)

pyzmq is built from source against zmq.h and linked to libzmq.so.5 by soname
(bench/bindings/python/build.sh); LD_LIBRARY_PATH selects the library.
Plain socket.send(bytes) / socket.recv() -- what applications write.
"""
import json
import sys
import time

import zmq


def main(argv):
    if len(argv) != 5:
        print(f"usage: {argv[0]} ROLE ENDPOINT SIZE COUNT", file=sys.stderr)
        return 2
    role, ep, size, count = argv[1], argv[2], int(argv[3]), int(argv[4])
    if size < 1 or count < 2:
        print("perf(python): SIZE >= 1 and COUNT >= 2 required", file=sys.stderr)
        return 2
    print(f"perf(python): pyzmq {zmq.pyzmq_version()} zmq_version "
          f"{zmq.zmq_version()}", file=sys.stderr)
    types = {"local_thr": zmq.PULL, "remote_thr": zmq.PUSH,
             "local_lat": zmq.REP, "remote_lat": zmq.REQ}
    if role not in types:
        print(f"perf(python): unknown role {role!r}", file=sys.stderr)
        return 2
    ctx = zmq.Context()
    s = ctx.socket(types[role])
    result = None
    if role == "local_thr":
        s.bind(ep)
        recv = s.recv
        if len(recv()) != size:
            raise SystemExit("perf(python): message of wrong size")
        t0 = time.perf_counter()
        for _ in range(count - 1):
            if len(recv()) != size:
                raise SystemExit("perf(python): message of wrong size")
        el = time.perf_counter() - t0
        result = {"msg_per_s": (count - 1) / el}
    elif role == "remote_thr":
        s.connect(ep)
        data = b"D" * size
        send = s.send
        for _ in range(count):
            send(data)
    elif role == "local_lat":
        s.bind(ep)
        for _ in range(count):
            s.send(s.recv())
    else:
        s.connect(ep)
        data = b"D" * size
        send, recv = s.send, s.recv
        t0 = time.perf_counter()
        for _ in range(count):
            send(data)
            if len(recv()) != size:
                raise SystemExit("perf(python): reply of wrong size")
        el = time.perf_counter() - t0
        result = {"latency_us": el * 1e6 / (2 * count)}
    s.close()
    ctx.term()
    if result is not None:
        print("RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
