//! The frame decoder driven the way ferromq's core drives it, with large frames.
//!
//! After a valid NULL handshake, a stream described compactly by the input (raw
//! bytes, frames of up to 2 MiB filled with a pattern, runs of small messages,
//! truncation) is given to the engine through `input_buffer(min)` + copy +
//! `input_filled(k)` (and sometimes `feed`), with `min` and `k` chosen by the
//! input, interleaved with `take_messages(max_body)` and `poll_event` calls in an
//! order the input chooses. Checked:
//!
//! * the frames lent by `take_messages` (as `Event::Message`) and the events of
//!   `poll_event`, in the order they came, equal the reference decoder's events;
//!   the engine fails if and only if the reference does;
//! * `input_buffer(min)` gives at least `min` bytes, except while a body of
//!   8 KiB or more is received directly: then the slice lies inside that body,
//!   up to exactly its end if the body is at most 1 MiB long;
//! * the invariants of `Checked`, and an honest peer accepts the engine's output.
//!
//! Input: [socket type + version] [max_msg_size selector] [schedule length]
//! [schedule bytes] then ops, each an op byte and its arguments:
//!
//! * `op & 3 == 0`, `n bytes[n]`: raw bytes;
//! * `op & 3 == 1`, `size[3] prefix_len prefix seed`: one frame; the low 20
//!   bits of `size` shifted right by its top 4 (so sizes of every magnitude up to
//!   1 MiB are about equally likely), doubled if `op & 0x20`, are the body length;
//!   more if `op & 4`, command if `op & 8`, 8-byte length even when short if
//!   `op & 0x10`; the body is the prefix, then a fill pattern;
//! * `op & 3 == 2`, `count size seed`: `count` message frames of `size` bytes,
//!   one multipart message if `op & 4`;
//! * `op & 3 == 3`, `cut[2]`: drops the last `cut` bytes of the stream so far.
//!
//! The schedule bytes, used round and round, choose the calls (see [`Driver::step`]).
//!
//! It found two engine bugs when it was written (now regression tests in
//! crates/zmtp/src/engine_tests.rs): `feed` running past a directly received
//! body looped for ever, and `input_buffer` handed out an empty slice once such
//! a body was complete but not yet polled. Then, with `read_body_with` added, a
//! quadratic slowdown (a body reallocated on every small read).
#![no_main]

use ferromq_fuzz::*;
use ferromq_zmtp::{Event, MechanismConfig};
use libfuzzer_sys::fuzz_target;

/// Bodies of at least this size may be received directly (the engine's documented 8 KiB).
const DIRECT_MIN: u64 = 8 * 1024;
/// Direct bodies up to this size are handed out up to their end at once.
const BODY_AHEAD: u64 = 1 << 20;
/// The expanded stream is cut at this length.
const MAX_STREAM: usize = 3 << 20;

/// `min` arguments of `input_buffer`.
const MINS: [usize; 8] = [1, 0, 2, 9, 4096, 8192, 65536, 1 << 20];
/// `max_body` arguments of `take_messages`.
const MAX_BODIES: [usize; 16] = [
    usize::MAX,
    0,
    1,
    2,
    7,
    64,
    255,
    256,
    1023,
    1024,
    4096,
    8191,
    8192,
    65536,
    300 * 1024,
    1 << 21,
];

/// A message-size limit chosen by one input byte, around the direct-body threshold.
fn limit(b: u8) -> Option<u64> {
    match b % 8 {
        0..=2 => None,
        3 => Some(0),
        4 => Some(255),
        5 => Some(DIRECT_MIN - 1),
        6 => Some(DIRECT_MIN),
        _ => Some(100_000),
    }
}

/// Appends a frame header.
fn header(s: &mut Vec<u8>, flags: u8, size: usize, long: bool) {
    if size > 255 || long {
        s.push(flags | 0x02);
        s.extend_from_slice(&(size as u64).to_be_bytes());
    } else {
        s.push(flags);
        s.push(size as u8);
    }
}

/// Appends `n` pattern bytes: no short period, and different for each seed, so a
/// shifted, repeated or swapped piece of a body does not go unnoticed.
fn fill(s: &mut Vec<u8>, n: usize, seed: u8) {
    let base = u32::from(seed) << 24;
    s.extend((0..n as u32).map(|i| (i.wrapping_add(base).wrapping_mul(0x9E37_79B1) >> 24) as u8));
}

/// Expands the ops at the end of the input into the stream.
fn build_stream(input: &mut Input<'_>) -> Vec<u8> {
    let mut s = Vec::new();
    while !input.is_empty() && s.len() < MAX_STREAM {
        let op = input.byte();
        let more = op & 0x04 != 0;
        match op & 3 {
            0 => s.extend_from_slice(input.short_bytes()),
            1 => {
                let raw = u32::from(input.byte()) << 16 | u32::from(input.u16());
                let mut size = ((raw & 0xF_FFFF) >> (raw >> 20)) as usize;
                if op & 0x20 != 0 {
                    size *= 2;
                }
                let prefix = input.short_bytes();
                let seed = input.byte();
                let flags = u8::from(more) | if op & 0x08 != 0 { 0x04 } else { 0 };
                header(&mut s, flags, size, op & 0x10 != 0);
                let p = prefix.len().min(size);
                s.extend_from_slice(&prefix[..p]);
                fill(&mut s, size - p, seed);
            }
            2 => {
                let (count, size, seed) = (input.byte(), input.byte(), input.byte());
                for j in 0..count {
                    let flags = u8::from(more && j + 1 < count);
                    header(&mut s, flags, usize::from(size), false);
                    fill(&mut s, usize::from(size), seed.wrapping_add(j));
                }
            }
            _ => {
                let cut = usize::from(input.u16());
                s.truncate(s.len().saturating_sub(cut));
            }
        }
    }
    s.truncate(MAX_STREAM);
    s
}

/// How many of `m` available bytes to give, by one schedule byte: its top two
/// bits pick a class: 0 → 1..63 bytes (0 means all), 1 → a multiple of 97 up to
/// ~6 KiB (possibly none), 2 → all, 3 → all but up to 63.
fn amount(b: u8, m: usize) -> usize {
    let low = usize::from(b & 63);
    match b >> 6 {
        0 if low == 0 => m,
        0 => low.min(m),
        1 => (low * 97).min(m),
        2 => m,
        _ => m.saturating_sub(low),
    }
}

/// The large body that a reader at `pos` may be receiving directly: one of
/// `DIRECT_MIN` bytes or more whose header lies before `pos` and whose end does not.
fn large_body_at(bodies: &[BodySpan], pos: usize) -> Option<BodySpan> {
    let i = bodies.partition_point(|b| b.start <= pos);
    let b = *bodies.get(i.checked_sub(1)?)?;
    (b.len >= DIRECT_MIN && pos as u64 <= b.end()).then_some(b)
}

/// Checks the length of what `input_buffer(min)` returned with `pos` stream bytes given.
fn check_spare(bodies: &[BodySpan], pos: usize, min: usize, len: usize) {
    if len >= min {
        return;
    }
    let Some(b) = large_body_at(bodies, pos) else {
        panic!("input_buffer({min}) gave {len} bytes at {pos}, outside any large body");
    };
    let end = (pos + len) as u64;
    assert!(
        end <= b.end(),
        "input_buffer runs past the body ({b:?}, at {pos}: {len})"
    );
    if b.len <= BODY_AHEAD {
        assert_eq!(
            end,
            b.end(),
            "input_buffer is not the rest of the body ({b:?}, at {pos})"
        );
    }
    assert!(
        len > 0,
        "input_buffer({min}) empty: body {b:?} complete but not yet polled"
    );
}

/// The engine under test with the stream, the schedule and what has come out so far.
struct Driver<'a> {
    e: Checked,
    stream: &'a [u8],
    /// Stream bytes given to the engine.
    pos: usize,
    /// The frame bodies in the stream, from the reference decoder.
    bodies: &'a [BodySpan],
    /// The bytes choosing the calls, used round and round.
    schedule: &'a [u8],
    /// Index of the next schedule byte (unwrapped).
    next: usize,
    /// Messages lent by `take_messages` and events polled, in order.
    events: Vec<Event>,
}

impl Driver<'_> {
    /// The next schedule byte.
    fn byte(&mut self) -> u8 {
        let b = self.schedule[self.next % self.schedule.len()];
        self.next += 1;
        b
    }

    /// `input_buffer(min)`, then copies `k` stream bytes in and reports them.
    fn fill(&mut self, min: usize, k_byte: u8) {
        let spare = self.e.engine.input_buffer(min);
        check_spare(self.bodies, self.pos, min, spare.len());
        let k = amount(k_byte, spare.len().min(self.stream.len() - self.pos));
        spare[..k].copy_from_slice(&self.stream[self.pos..self.pos + k]);
        self.e.engine.input_filled(k);
        self.pos += k;
    }

    /// `read_body_with`, appending `k` stream bytes as a socket reader would (at most the
    /// limit it is given); a `fill` when no direct body is in progress.
    fn fill_body(&mut self, k_byte: u8) {
        let (stream, pos) = (self.stream, self.pos);
        let appended = self.e.engine.read_body_with(|v, max| {
            let k = amount(k_byte, max.min(stream.len() - pos));
            v.extend_from_slice(&stream[pos..pos + k]);
            k
        });
        match appended {
            Some(k) => self.pos += k,
            None => self.fill(1, k_byte),
        }
    }

    /// `feed` of the next stream bytes.
    fn feed(&mut self, k_byte: u8) {
        let k = amount(k_byte, self.stream.len() - self.pos);
        self.e.give(&self.stream[self.pos..self.pos + k], false);
        self.pos += k;
    }

    /// `take_messages(max_body)`; returns how many frames it lent.
    fn take(&mut self, max_body: usize) -> usize {
        let taken = self.e.take_messages(max_body);
        let n = taken.len();
        self.events.extend(taken);
        n
    }

    /// One `poll_event`; returns whether it gave an event.
    fn poll(&mut self) -> bool {
        let ev = self.e.poll_once();
        let got = ev.is_some();
        self.events.extend(ev);
        got
    }

    /// What the core does after each read: `take_messages`, then one `poll_event`,
    /// until `poll_event` has nothing.
    fn process(&mut self, max_body: usize) {
        for _ in 0..self.stream.len() + 16 {
            self.take(max_body);
            if !self.poll() {
                return;
            }
        }
        panic!("the engine kept producing events");
    }

    /// One call or group of calls, by the next schedule byte `a`: `a % 8` in 0..=2
    /// fills (with `min` from bits 3..6), 3 feeds, 4 takes (with `max_body` from
    /// bits 4..8), 5 polls once, 6 and 7 process.
    fn step(&mut self) {
        let a = self.byte();
        let max_body = MAX_BODIES[usize::from(a >> 4)];
        match a % 8 {
            0 | 1 => {
                let k = self.byte();
                self.fill(MINS[usize::from(a >> 3) & 7], k);
            }
            2 => {
                let k = self.byte();
                self.fill_body(k);
            }
            3 => {
                let k = self.byte();
                self.feed(k);
            }
            4 => {
                self.take(max_body);
            }
            5 => {
                self.poll();
            }
            _ => self.process(max_body),
        }
    }
}

/// Short description of an event for a mismatch report (bodies can be megabytes).
fn brief(ev: Option<&Event>) -> String {
    match ev {
        None => "nothing".into(),
        Some(Event::Message { more, body }) => format!(
            "Message(more: {more}, {} bytes: {:02x?}..)",
            body.len(),
            &body[..body.len().min(16)]
        ),
        Some(other) => format!("{other:?}").chars().take(200).collect(),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let b0 = input.byte();
    let ours = ZMTP_TYPES[usize::from(b0 & 0x0F) % ZMTP_TYPES.len()];
    let minor = (b0 >> 4) & 1;
    let max = limit(input.byte());
    let n = usize::from(input.byte() % 32) + 1;
    let schedule = match input.take(n) {
        [] => &[0u8][..],
        s => s,
    };
    let stream = build_stream(&mut input);
    let expected = reference(&stream, max);

    let e = Checked::null_ready(ours, minor, max, true);

    let mut d = Driver {
        e,
        stream: &stream,
        pos: 0,
        bodies: &expected.bodies,
        schedule,
        next: 0,
        events: Vec::new(),
    };
    // Steps that give nothing (polls, takes, zero-byte fills) are allowed a few in
    // a row; then the driver processes and gives whatever fits. A dead engine
    // discards input (Checked tests that): the rest of the stream is not given.
    let mut idle = 0;
    while d.pos < stream.len() && !d.e.is_dead() {
        let before = d.pos;
        if idle < 8 {
            d.step();
        } else {
            d.process(usize::MAX);
            d.fill(1, 0);
        }
        idle = if d.pos > before { 0 } else { idle + 1 };
    }
    let max_body = MAX_BODIES[usize::from(d.byte() >> 4)];
    d.process(max_body);
    assert_eq!(
        d.take(max_body),
        0,
        "take_messages after poll_event had nothing"
    );
    assert!(
        d.events.len() <= stream.len() / 2,
        "more events than frames"
    );

    if d.events != expected.events {
        let i = d
            .events
            .iter()
            .zip(&expected.events)
            .position(|(a, b)| a != b)
            .unwrap_or(d.events.len().min(expected.events.len()));
        panic!(
            "event {i} of {} (reference: {}) differs: engine {}, reference {}",
            d.events.len(),
            expected.events.len(),
            brief(d.events.get(i)),
            brief(expected.events.get(i))
        );
    }
    let mut e = d.e;
    assert_eq!(e.failed.is_some(), expected.error, "{:?}", e.failed);

    // Everything the engine wrote must make sense to an honest peer.
    let pongs = expected
        .events
        .iter()
        .filter(|ev| matches!(ev, Event::Ping { .. }))
        .count();
    let mut peer = Checked::new(config(compatible_peer(ours), MechanismConfig::Null, None));
    let out = e.take_output();
    peer.give(&out, true);
    let seen = peer.drain(&mut no_zap);
    assert!(peer.failed.is_none(), "{:?}", peer.failed);
    assert!(matches!(seen.first(), Some(Event::Ready(_))));
    assert_eq!(seen.len(), 1 + pongs);
});
