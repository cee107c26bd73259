#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/seeds/<target>/ (small, hand-made inputs
in each target's input format). Run from anywhere; overwrites the seeds."""
import os, struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")

def greeting(mech, as_server, major=3, minor=1):
    g = bytearray(64)
    g[0] = 0xFF; g[9] = 0x7F; g[10] = major; g[11] = minor
    g[12:12 + len(mech)] = mech
    g[32] = as_server
    return bytes(g)

def frame(flags, body):
    if len(body) <= 255:
        return bytes([flags, len(body)]) + body
    return bytes([flags | 2]) + struct.pack(">Q", len(body)) + body

def cmd(name, data=b""):
    return frame(4, bytes([len(name)]) + name + data)

def msg(body, more=False):
    return frame(1 if more else 0, body)

def meta(*props):
    return b"".join(bytes([len(n)]) + n + struct.pack(">I", len(v)) + v for n, v in props)

def short(b):
    return bytes([len(b)]) + b

ACCEPT = b"\x00\x04user\x01" + short(b"k") + short(b"v")  # verdict bytes (<= 8 used)
V_ACCEPT = (b"\x00\x00\x00" + b"\x00" * 5)[:8]
V_REJECT400 = b"\x03" + b"\x00" * 7
TRAFFIC = (msg(b"hello") + msg(b"a", True) + msg(b"b") + msg(b"x" * 300)
           + cmd(b"PING", b"\x00\x0actx") + cmd(b"PONG", b"ctx")
           + cmd(b"SUBSCRIBE", b"topic") + cmd(b"CANCEL", b"topic") + cmd(b"UNKNOWN", b"z"))

seeds = {
    "frame_decoder": {
        "traffic": b"\x15\x00" + b"\x00" * 4 + TRAFFIC,
        "traffic_chunked": b"\x15\x00" + b"\x01\x03\x87\x00" + TRAFFIC,
        "error": b"\x02\x04" + b"\x00" * 4 + msg(b"m") + cmd(b"ERROR", short(b"bye")),
        "plain_error": b"\x02\x00" + b"\x00" * 4 + b"\x04\x07\x5eRROR\x01x",
        "too_large": b"\x05\x06" + b"\x00" * 4 + msg(b"y" * 2000),
        "huge_length": b"\x05\x00" + b"\x00" * 4 + b"\x02" + b"\xff" * 8,
        "v30_subscribe": b"\x02\x00" + b"\x00" * 4 + msg(b"\x01topic"),
    },
    "greeting": {
        "null": b"\x00" + b"\x00" * 4 + greeting(b"NULL", 0) + cmd(b"READY", meta((b"Socket-Type", b"DEALER"))),
        "null_split": b"\x00" + b"\x0a\x01\x35\x00" + greeting(b"NULL", 0, 3, 0),
        "plain_server": b"\x01" + b"\x00" * 4 + greeting(b"PLAIN", 0) + cmd(b"HELLO", short(b"u") + short(b"p")),
        "plain_client": b"\x02" + b"\x00" * 4 + greeting(b"PLAIN", 1) + cmd(b"WELCOME"),
        "curve_server": b"\x03" + b"\x00" * 4 + greeting(b"CURVE", 0),
        "curve_client": b"\x04" + b"\x00" * 4 + greeting(b"CURVE", 1),
        "zmtp2": b"\x00" + b"\x00" * 4 + b"\xff" + b"\x00" * 8 + b"\x7f\x01\x01",
        "zmtp2_router": b"\x00" + b"\x00" * 4 + b"\xff" + b"\x00" * 7 + b"\x02\x7f\x01\x06" + msg(b"r") + msg(b"hi"),
        "zmtp2_split": b"\x00" + b"\x0b\x01\x0c\x00" + b"\xff" + b"\x00" * 8 + b"\x7f\x01\x05" + msg(b"") + msg(b"x"),
        "zmtp1": b"\x00" + b"\x00" * 4 + b"\x01\x00hello",
        "mismatch": b"\x00" + b"\x00" * 4 + greeting(b"PLAIN", 0),
    },
    "ready_metadata": {
        "dealer": b"\x05" + V_ACCEPT + b"\x00" * 4 + meta((b"Socket-Type", b"DEALER"), (b"Identity", b"peer")),
        "router_extra": b"\x06" + V_ACCEPT + b"\x00" * 4 + meta((b"socket-type", b"REQ"), (b"X-Extra", b"1"), (b"identity", b"")),
        "zap_accept": b"\x15" + ACCEPT[:8] + b"\x00" * 4 + meta((b"Socket-Type", b"DEALER")),
        "zap_reject": b"\x15" + V_REJECT400 + b"\x00" * 4 + meta((b"Socket-Type", b"DEALER")),
        "truncated": b"\x05" + V_ACCEPT + b"\x00" * 4 + meta((b"Socket-Type", b"DEALER"))[:-2],
        "incompatible": b"\x08" + V_ACCEPT + b"\x00" * 4 + meta((b"Socket-Type", b"PUB")),
    },
    "plain_server": {
        "accept": b"\x05" + ACCEPT[:8] + b"\x00" * 4 + cmd(b"HELLO", short(b"admin") + short(b"secret"))
                  + cmd(b"INITIATE", meta((b"Socket-Type", b"DEALER"), (b"Identity", b"c"))) + msg(b"hi"),
        "reject": b"\x05" + V_REJECT400 + b"\x00" * 4 + cmd(b"HELLO", short(b"admin") + short(b"bad")),
        "reject300": b"\x05" + b"\x02" + b"\x00" * 7 + b"\x00" * 4 + cmd(b"HELLO", short(b"") + short(b"")),
        "error": b"\x05" + V_ACCEPT + b"\x00" * 4 + cmd(b"ERROR", short(b"no")),
        "initiate_first": b"\x05" + V_ACCEPT + b"\x00" * 4 + cmd(b"INITIATE", meta((b"Socket-Type", b"DEALER"))),
    },
    "plain_client": {
        "ok": b"\x05" + b"\x00" * 4 + cmd(b"WELCOME") + cmd(b"READY", meta((b"Socket-Type", b"ROUTER"))) + msg(b"hi"),
        "error": b"\x05" + b"\x00" * 4 + b"\x04\x09\x5eRROR\x03400",
        "ready_early": b"\x05" + b"\x00" * 4 + cmd(b"READY", meta((b"Socket-Type", b"ROUTER"))),
        "welcome_data": b"\x05" + b"\x00" * 4 + cmd(b"WELCOME", b"x"),
    },
}

# frame_decoder_large: [type/version] [limit] [schedule length - 1] [schedule] ops.
def op_raw(b):
    return b"".join(b"\x00" + short(b[i:i + 255]) for i in range(0, len(b), 255))

def op_frame(size, more=False, command=False, long=False, prefix=b"", seed=0):
    x2 = size >= 1 << 20
    if x2:
        assert size % 2 == 0
        size //= 2
    op = 1 | more << 2 | command << 3 | long << 4 | x2 << 5
    return bytes([op]) + size.to_bytes(3, "big") + short(prefix) + bytes([seed])

def op_run(count, size, seed=0, multipart=False):
    return bytes([2 | multipart << 2, count, size, seed])

def op_cut(n):
    return b"\x03" + struct.pack(">H", n)

def large(schedule, *ops, limit=0, kind=0x05):
    return bytes([kind, limit, len(schedule) - 1]) + bytes(schedule) + b"".join(ops)

# Schedule bytes: a % 8 in 0..2 fill (min MINS[(a >> 3) & 7]) then an amount byte,
# 3 feed + amount, 4 take (max_body MAX_BODIES[a >> 4]), 5 poll, 6/7 process.
READ_ALL_PROCESS = [0x00, 0x80, 0x06]
READS_OF_3K = [0x00, 0x60, 0x06]
seeds["frame_decoder_large"] = {
    "large_message": large(READS_OF_3K, op_frame(20000, seed=1)),
    "large_then_small": large(READS_OF_3K, op_frame(100_000, more=True), op_run(50, 10, 3),
                              op_frame(9000, command=True, prefix=b"\x09SUBSCRIBE"),
                              op_raw(cmd(b"PING", b"\x00\x0actx")), op_frame(8192, seed=7)),
    "two_mib": large(READ_ALL_PROCESS, op_frame(2_000_000), op_run(3, 1)),
    "take_and_poll": large([0x00, 0x07, 0x64, 0x05, 0x01, 0x41, 0x04, 0x05, 0xa6],
                           op_raw(TRAFFIC), op_run(200, 20, multipart=True), op_frame(300, long=True),
                           op_frame(12000), op_raw(msg(b"tail"))),
    "truncated": large(READS_OF_3K, op_frame(50000), op_cut(1000)),
    "limit_edges": large(READ_ALL_PROCESS, op_frame(8191), op_frame(8192), limit=5),
    "large_commands": large([0x30, 0x41, 0x06], op_frame(30000, command=True, prefix=b"\x04PING\x00\x10"),
                            op_frame(65536, command=True, prefix=b"\x06CANCEL"),
                            op_frame(65537, command=True, prefix=b"\x09SUBSCRIBE"), limit=6),
    "error_after_large": large(READS_OF_3K, op_frame(16384), op_raw(b"\x08\x00")),
    "peer_error_after_large": large(READS_OF_3K, op_frame(16384), op_raw(cmd(b"ERROR", short(b"bye"))),
                                    op_frame(16384)),
    # Part of a large body, a poll (the body goes direct), then the rest and more in one go.
    "feed_past_body": large([0x03, 0x41, 0x06, 0x03, 0x80], op_frame(10000), op_run(2, 5)),
    # The whole rest of a direct body, then input_buffer again before any poll.
    "fill_after_body": large([0x00, 0x41, 0x06, 0x00, 0x80, 0x00, 0x80], op_frame(10000), op_run(2, 5)),
}

curve_raw_hello = cmd(b"HELLO", b"\x01\x00" + b"\x00" * 72 + b"\x33" * 32 + b"\x00" * 7 + b"\x01" + b"\x44" * 80)
curve_raw_welcome = cmd(b"WELCOME", b"\x55" * 160)
for role, raw in (("curve_server", curve_raw_hello), ("curve_client", curve_raw_welcome)):
    payload = b"hello world, this is a message" * 3
    seeds[role] = {
        "raw": b"\x05" + V_ACCEPT + b"\x00" * 4 + raw,
        "raw_short": b"\x05" + V_ACCEPT + b"\x00" * 4 + cmd(b"HELLO", b"\x01\x00"),
        "honest": b"\x85" + V_ACCEPT + b"\x05\x07\x83\x00" + b"\x00" + payload,
        "reject": b"\x85" + V_REJECT400 + b"\x05\x07\x83\x00" + b"\x00" + payload,
        "flip_handshake": b"\x85" + V_ACCEPT + b"\x05\x07\x83\x00" + b"\x01" + b"\x01\x01\x00\x50\x20" + payload,
        "flip_message": b"\x85" + V_ACCEPT + b"\x05\x07\x83\x00" + b"\x01" + b"\x03\x01\x00\x14\x01" + payload,
        "replay_message": b"\x85" + V_ACCEPT + b"\x05\x07\x83\x00" + b"\x01" + b"\x03\x04\x00\x00\x00" + payload,
        "drop_message": b"\x85" + V_ACCEPT + b"\x05\x07\x83\x00" + b"\x01" + b"\x04\x05\x00\x00\x00" + payload,
        "truncate_second": b"\x85" + V_ACCEPT + b"\x05\x07\x83\x00" + b"\x01" + b"\x02\x02\x00\x30\x00" + payload,
        "limit": b"\xc5" + V_ACCEPT + b"\x50\x07\x83\x00" + b"\x00" + payload,
    }

def zap(*frames):
    return b"".join(short(f) for f in frames)

seeds["zap_reply"] = {
    "ok": zap(b"", b"1.0", b"1", b"200", b"OK", b"user", meta((b"k", b"v"))),
    "denied": zap(b"", b"1.0", b"1", b"400", b"no", b"", b""),
    "bad_meta": zap(b"", b"1.0", b"1", b"200", b"OK", b"", b"\x00"),
    "six": zap(b"", b"1.0", b"1", b"200", b"OK", b""),
    "bad_status": zap(b"", b"1.0", b"1", b"201", b"OK", b"", b""),
}
seeds["z85"] = {
    "hello": b"\x00HelloWorld",
    "key": b"\x00Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID",
    "max": b"\x00%nSc0%nSc1",
    "bytes": b"\x01\x86\x4f\xd2\x6f\xb5\x59\xf7\x5b\x00",
}
seeds["endpoint"] = {n: s.encode() for n, s in {
    "tcp": "tcp://127.0.0.1:5555", "tcp_star": "tcp://*:*", "tcp6": "tcp://[::1]:5555",
    "tcp_src": "tcp://127.0.0.1:0;127.0.0.1:5555", "ipc": "ipc:///tmp/ferromq-fuzz/x",
    "ipc_star": "ipc://*", "inproc": "inproc://name", "udp": "udp://127.0.0.1:1",
    "noscheme": "127.0.0.1:5555", "badport": "tcp://host:99999",
    "longipc": "ipc://" + "a" * 120,
}.items()}
seeds["setsockopt"] = {
    "hwm": b"\x05" + b"\x17\x04" + struct.pack("<i", 10) + b"\x18\x04" + struct.pack("<i", -1),
    "routing_id": b"\x06" + b"\x05\x03abc" + b"\x3d\x02xy",
    "subscribe": b"\x02" + b"\x06\x03abc" + b"\x07\x03abc" + b"\x06\x00",
    "curve": b"\x01" + b"\x2f\x04\x01\x00\x00\x00" + b"\x31\x20" + b"\x11" * 32 + b"\x32\x28" + b"Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID",
    "plain": b"\x04" + b"\x2d\x05admin" + b"\x2e\x06secret" + b"\x2c\x04\x01\x00\x00\x00",
    "maxmsg": b"\x07" + b"\x16\x08" + struct.pack("<q", 1024) + b"\x16\x04abcd",
    "xpub": b"\x09" + b"\x28\x04\x01\x00\x00\x00" + b"\x48\x05hello" + b"\x47\x04\x01\x00\x00\x00",
    "arbitrary": b"\x03" + b"\x80\x7f\xff\xff\xff\x01x" + b"\x80\x80\x00\x00\x00\x00",
}

def cstr(b):
    return bytes([len(b)]) + b
# capi: [socket type] then [op] [arguments] (see fuzz_targets/capi.rs).
seeds["capi"] = {
    "setget": b"\x05" + b"\x00\x17\x00\x04" + struct.pack("<i", 10) + b"\x01\x17\x04",
    "strings": b"\x06" + b"\x01\x20\x40" + b"\x00\x2d\x00" + cstr(b"admin") + b"\x01\x2d\x10",
    "ctx": b"\x00" + b"\x02\x01\x00\x00\x00\x04" + b"\x03\x05\x04" + struct.pack("<i", 1024) + b"\x04",
    "z85": b"\x01" + b"\x04" + cstr(b"\x86\x4f\xd2\x6f\xb5\x59\xf7\x5b") + cstr(b"HelloWorld"),
    "curve": b"\x02" + b"\x05" + cstr(b"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"),
    "msg": b"\x03" + b"\x06\x03\x01" + cstr(b"Socket-Type"),
    "monitor": b"\x07" + b"\x07\x00\x00\xff\xff" + cstr(b"inproc://monitor"),
    "socket": b"\x08" + b"\x08\x00\x00\x00\x0c" + cstr(b"curve"),
    "null": b"\x09" + b"\x09\x11\x04\x00\x00\x00\x00",
}

# wire: [kind] [flags: mechanism = flags % 3, 0x10 MAXMSGSIZE 100, 0x20 tcp] [chunk size] then the
# raw peer's bytes (see fuzz_targets/wire.rs). Kinds: 0 PAIR, 1 PULL, 2 ROUTER, 3 REP,
# 4 DEALER, 5 XPUB, 6 SUB, 7 STREAM.
def null_peer(peer):
    return greeting(b"NULL", 0) + cmd(b"READY", meta((b"Socket-Type", peer)))
def plain_peer(peer):
    return (greeting(b"PLAIN", 0) + cmd(b"HELLO", short(b"user") + short(b"pass"))
            + cmd(b"INITIATE", meta((b"Socket-Type", peer))))
seeds["wire"] = {
    "pair": b"\x00\x00\x00" + null_peer(b"PAIR") + msg(b"one") + msg(b"a", True) + msg(b"b"),
    "pull": b"\x01\x00\x07" + null_peer(b"PUSH") + msg(b"x" * 300) + cmd(b"PING", b"\x00\x0actx"),
    "router": b"\x02\x00\x00" + null_peer(b"DEALER") + msg(b"hi"),
    "rep": b"\x03\x00\x00" + null_peer(b"REQ") + msg(b"", True) + msg(b"request"),
    "dealer_plain": b"\x04\x01\x00" + plain_peer(b"DEALER") + msg(b"hi"),
    "xpub": b"\x05\x00\x00" + null_peer(b"SUB") + cmd(b"SUBSCRIBE", b"t") + msg(b"\x01topic") + msg(b"\x00topic"),
    "sub": b"\x06\x00\x00" + null_peer(b"PUB") + msg(b"news"),
    "stream": b"\x07\x00\x00" + b"GET / HTTP/1.0\r\n\r\n",
    "curve_greeting": b"\x01\x02\x00" + greeting(b"CURVE", 0) + cmd(b"HELLO", b"\x01\x00" + b"\x00" * 194),
    "too_large": b"\x01\x10\x00" + null_peer(b"PUSH") + msg(b"y" * 200),
    "wrong_type": b"\x01\x00\x00" + null_peer(b"PULL") + msg(b"no"),
    "huge_length": b"\x04\x00\x00" + null_peer(b"DEALER") + b"\x02" + b"\xff" * 8,
    "zmtp2": b"\x04\x00\x00" + b"\xff" + b"\x00" * 8 + b"\x7f\x01\x05" + msg(b"") + msg(b"x"),
    "zmtp1": b"\x01\x00\x00" + b"\x01\x00hello",
    "pull_tcp": b"\x01\x20\x05" + null_peer(b"PUSH") + msg(b"z" * 1000) + msg(b"a", True) + msg(b"b"),
    "router_tcp_plain": b"\x02\x21\x00" + plain_peer(b"DEALER") + msg(b"hi"),
    "stream_tcp": b"\x07\x20\x03" + b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
}

for target, files in seeds.items():
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
print("seeds:", {t: len(f) for t, f in seeds.items()})
