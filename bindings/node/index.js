'use strict'
// @ferromq/node: a zeromq.js-v6-shaped API over the libzmq C ABI (ferromq or libzmq).
//
// Hot paths (see src/ferromq.c):
//  * send(): tries a non-blocking zmq_send first and returns an already-resolved Promise
//    when the message was queued; only on EAGAIN is a pending send queued and ZMQ_FD
//    watched for POLLOUT.
//  * receive / for-await / on('messages'): the socket's ZMQ_FD is polled on the Node event
//    loop (uv_poll, no helper thread); on each wake the socket is drained in batches of
//    messages received by one native call each. ZMQ_FD is edge-triggered, so ZMQ_EVENTS
//    is re-read after every batch and draining continues until it reports no readiness.
//  * batch API: sendMany(msgs) queues as many as fit in one native call; on('messages')
//    delivers each drained batch in one callback; receiveMany(max) resolves with a batch.
//  * receive spin: a receive()/next()/receiveMany() that finds nothing keeps trying in the
//    native call for up to `receiveSpin` µs before it waits on the event loop (SpinPolicy
//    below), as libzmq's blocking zmq_recv does in ferromq: a reply due within a few µs is
//    taken without an event-loop wake-up, which costs 50-60 µs on a virtual machine.

const path = require('path')
// A module binding: the global `Buffer` is an accessor on globalThis, and looking it up
// per received frame was ~4 % of a 64 B receive (perf: LoadGlobalIC and its getter).
const { Buffer } = require('buffer')
const native = require(process.env.FERROMQ_NODE_ADDON ||
  path.join(__dirname, 'build', 'ferromq.node'))
const { NativeSocket, NativeContext } = native

const POLLIN = 1
const POLLOUT = 2
const BIG_FLAG = 0x80000000
const RECV_BATCH = 256          // messages per native receive for receive()/for-await
const LISTENER_BATCH = 4096     // messages per native receive for on('messages')
const BYTE_BUDGET = 1 << 20     // bytes copied per native receive (big frames not counted)
const SERVICE_BUDGET = 65536    // messages per wake before yielding to the event loop
const RESOLVED = Promise.resolve()
// receiveSpin default, µs: FERROMQ_NODE_SPIN_US, else 200 (0 when FERROMQ_SPIN_US=0, the
// core library's switch). More than one event-loop wake-up (50-60 µs on a VM), so that in a
// request/reply pair one side's spin outlasts the other's wake-up and the pair falls back
// into step. With 50 µs (the core's budget, which only has to outlast a kernel wake-up)
// REQ/REP pairs stayed with both sides waiting on the event loop in half the runs: 57-65 µs
// one-way instead of 13 (docs/results/2026-11-25-node-spin.md).
const SPIN_US = (() => {
  const n = Number.parseInt(process.env.FERROMQ_NODE_SPIN_US, 10)
  if (Number.isInteger(n) && n >= 0) return n
  return process.env.FERROMQ_SPIN_US === '0' ? 0 : 200
})()
const MAX_BACKOFF = 10          // after repeated failed spins, one probe per 2^10 waits

function zmqError(code, message, extra) {
  const e = new Error(message)
  e.code = code
  if (extra) Object.assign(e, extra)
  return e
}
const closedError = () => zmqError('EBADF', 'Socket is closed')
const eagainError = (what) => zmqError('EAGAIN', what + ' timed out')

// An empty array that V8 already treats as holding objects. A fresh `[]` starts as an
// array of small integers and changes its hidden class at its first object, and the
// optimized code that had only seen the first kind is thrown away: a REQ socket's first
// wait on the event loop (its `_waiters` gets an object) did that to send() and
// receive(), and the next ~6,000 round trips ran at twice the steady latency while V8
// re-optimized. Every queue of a socket is made by this, so each keeps one class.
function objectList() {
  const a = [null]
  a.length = 0
  return a
}

let drained = false   // set by openResult(): did the last native receive end on EAGAIN?

/** When a receive spins before waiting: the core library's adaptive policy
 *  (crates/core/src/signal.rs), so that an idle peer costs almost no CPU.
 *  - A spin that caught a message keeps the full budget: the peer answers within it.
 *  - A failed full spin stops spinning; the next probe comes after 1, 3, 7 ... 1023 waits
 *    that ended soon after they began (a spin holds the CPU the peer may need).
 *  - With spinning off, a wait that ended within twice the budget makes the next receive
 *    spin again (unless backing off); a longer wait (idle peer) leaves it off. */
class SpinPolicy {
  constructor(maxUs) { this.setMax(maxUs) }
  setMax(maxUs) {
    this.maxNs = Math.min(Math.max(0, Math.floor(maxUs * 1000)), 0xffffffff)
    this.budgetNs = this.maxNs
    this.backoff = 0
    this.skip = 0
  }
  caught() { this.budgetNs = this.maxNs; this.backoff = 0; this.skip = 0 }
  /** The spin of budgetNs (possibly 0) found nothing; the wait then lasted waitedNs
   *  (undefined: not known yet, only the failed spin is recorded). */
  failed(waitedNs) {
    if (this.maxNs === 0) return
    if (this.budgetNs >= this.maxNs) {
      this.backoff = Math.min(this.backoff + 1, MAX_BACKOFF)
      this.skip = (1 << this.backoff) - 1
      this.budgetNs = 0
    } else if (waitedNs === undefined) {
      // recorded when the wait ends
    } else if (waitedNs < 2 * this.maxNs) {
      if (this.skip === 0) this.budgetNs = this.maxNs
      else this.skip--
    } else {
      this.budgetNs = 0
    }
  }
}

// Where the addon leaves what a native receive got (see _recv in src/ferromq.c): `meta`,
// a Uint32Array frame table reused by every receive, and `slab`, the ArrayBuffer the small
// frames' bytes are copied into. Both are replaced by the addon when they grow or fill up.
const recvState = { meta: null, slab: null }

// Reading position in the native receive result being unpacked (see openResult).
let curMeta = null, curSlab = null, curBigs = null, curP = 0, curOff = 0, curBi = 0

// Starts reading one native receive result (a message count, or [count, ...big Buffers]);
// returns the message count. Sets `drained`.
function openResult(res) {
  let count
  if (typeof res === 'number') { count = res; curBigs = null } else { count = res[0]; curBigs = res }
  curMeta = recvState.meta
  curSlab = recvState.slab
  drained = curMeta[1] === 1
  curOff = curMeta[2]
  curP = 3
  curBi = 1
  return count
}

// The next message of the result opened by openResult(): an array of Buffers, views of the
// slab (never of bytes handed out before) or big frames' own Buffers.
function nextMessage() {
  const meta = curMeta
  const nf = meta[curP++]
  if (nf === 1) {     // an array literal: packed elements, faster for users to read
    const l = meta[curP++]
    if (l & BIG_FLAG) return [curBigs[curBi++]]
    const b = Buffer.from(curSlab, curOff, l)
    curOff += l
    return [b]
  }
  const msg = new Array(nf)
  for (let f = 0; f < nf; f++) {
    const l = meta[curP++]
    if (l & BIG_FLAG) msg[f] = curBigs[curBi++]
    else { msg[f] = Buffer.from(curSlab, curOff, l); curOff += l }
  }
  return msg
}

// Done with the result being read: drop the cursor's hold on the slab and big frames.
function closeResult() { curSlab = null; curBigs = null }

// Appends the messages of one native receive result to `out`; returns how many.
function unpack(res, out) {
  const count = openResult(res)
  for (let i = 0; i < count; i++) out.push(nextMessage())
  closeResult()
  return count
}

/** `for await (const msg of sock)`: each next() resolves with the next message. One
 *  class, not an object of fresh closures per loop: a loop compiled around one iterator's
 *  next() was thrown away when the next loop (another socket's) brought a new one. */
class MessageIterator {
  constructor(sock) { this._sock = sock }
  next() {
    const sock = this._sock
    if (sock._rqHead < sock._rq.length) return Promise.resolve({ value: sock._take(), done: false })
    if (sock._closed) return Promise.resolve({ value: undefined, done: true })
    if (sock._waiters.length === 0) {
      let m
      try { m = sock._takeOrSpin() } catch (e) { return Promise.reject(e) }
      if (m !== undefined) return Promise.resolve({ value: m, done: false })
    }
    return new Promise((resolve, reject) => sock._addWaiter(1, 1, resolve, reject))
  }
  return() { return Promise.resolve({ value: undefined, done: true }) }
  [Symbol.asyncIterator]() { return this }
}

// ---------------------------------------------------------------------------------------
// Context

const CTX_OPTS = { ioThreads: 1, maxSockets: 2, maxMessageSize: 5, ipv6: 42, blocky: 70 }

class Context extends NativeContext {
  constructor(options) {
    super()
    if (options) for (const k of Object.keys(options)) this[k] = options[k]
  }
  /** Closes every socket of this context still open and terminates it (blocks while
   *  sockets with a linger flush their queues). */
  term() { this._term() }
}
for (const [name, id] of Object.entries(CTX_OPTS)) {
  Object.defineProperty(Context.prototype, name, {
    get() { const v = this._get(id); return (name === 'ipv6' || name === 'blocky') ? v !== 0 : v },
    set(v) { this._set(id, typeof v === 'boolean' ? (v ? 1 : 0) : v) },
    enumerable: true, configurable: true,
  })
}

const context = new Context()

// ---------------------------------------------------------------------------------------
// Socket

function dispatch(sock) { sock._service() }
native.init(dispatch, recvState)

class Socket extends NativeSocket {
  constructor(type, options) {
    const ctx = (options && options.context) || context
    super(ctx, type)
    this._ctx = ctx
    this._type = type
    this._closed = false
    this._rq = objectList()  // received, not yet delivered messages
    this._rqHead = 0
    this._waiters = objectList() // pending receive()/next()/receiveMany()
    this._sq = objectList()  // pending sends (EAGAIN on the fast path)
    this._listeners = null   // { messages: [], message: [] } once on() was used
    this._active = false     // poll ref'd (keeps the loop alive)
    this._watched = false    // uv_poll started
    this._inService = false
    this._scheduled = false
    this._sndTimeo = -1
    this._rcvTimeo = -1
    this._spin = new SpinPolicy(SPIN_US)
    // performance.now() when an unspun receive began to wait, else negative. Starts as a
    // fraction so that V8 lays the field out as a double from the first socket on: a
    // socket whose first unspun wait turned it from a small integer into a double got a
    // new hidden class, and every optimized function that had seen the old one was thrown
    // away (Node REQ/REP ran its first ~6,000 round trips at twice the steady latency).
    this._waitStart = -0.5
    this._partial = null     // receiveInto(): the message being taken apart frame by frame
    this._partialAt = 0
    this._rcvMore = false    // receiveInto(): the native socket holds more of the message
    this._serviceCb = () => { this._scheduled = false; this._service() }
    if (options) {
      for (const k of Object.keys(options)) if (k !== 'context') this[k] = options[k]
    }
  }

  get context() { return this._ctx }
  get closed() { return this._closed }
  get readable() { return !this._closed && (this._rqHead < this._rq.length || (this._events() & POLLIN) !== 0) }
  get writable() { return !this._closed && (this._events() & POLLOUT) !== 0 }

  // --- endpoints -----------------------------------------------------------------------

  async bind(address) {
    if (this._closed) throw closedError()
    try { this._bind(address) } catch (e) { e.address = address; throw e }
  }

  async unbind(address) {
    if (this._closed) throw closedError()
    try { this._unbind(address) } catch (e) { e.address = address; throw e }
  }

  connect(address) {
    if (this._closed) throw closedError()
    try { this._connect(address) } catch (e) { e.address = address; throw e }
  }

  disconnect(address) {
    if (this._closed) throw closedError()
    try { this._disconnect(address) } catch (e) { e.address = address; throw e }
  }

  // --- sending -------------------------------------------------------------------------

  /** Queues a message (a Buffer/string/TypedArray/ArrayBuffer, or an array of them for a
   *  multipart message). Resolves once libzmq accepted it; when there is room that is
   *  immediately (an already-resolved Promise, no waiting). */
  send(msg) {
    if (this._sq.length === 0 && !this._closed) {
      let ok
      // a one-frame message as the frame itself: sent the same, without the native array walk
      const one = Array.isArray(msg) && msg.length === 1 && ArrayBuffer.isView(msg[0]) ? msg[0] : msg
      try { ok = this._send(one) } catch (e) { return Promise.reject(e) }
      if (ok) {
        if (this._waiters.length !== 0 || this._listeners !== null) this._kick()
        return RESOLVED
      }
      if (this._sndTimeo === 0) return Promise.reject(eagainError('Sending message'))
    } else if (this._closed) {
      return Promise.reject(closedError())
    }
    return new Promise((resolve, reject) => {
      const op = { msg, resolve, reject, timer: null }
      if (this._sndTimeo > 0) {
        op.timer = setTimeout(() => {
          const i = this._sq.indexOf(op)
          if (i >= 0) { this._sq.splice(i, 1); this._update() }
          reject(eagainError('Sending message'))
        }, this._sndTimeo)
      }
      this._sq.push(op)
      this._wait()
    })
  }

  /** Batch send: queues msgs[start..end) without waiting; returns how many were queued
   *  (fewer than asked when the high-water mark was reached: await sock.writableAsync()
   *  or retry later). Never queues anything behind pending send() calls. */
  sendMany(msgs, start = 0, end = msgs.length) {
    if (this._closed) throw closedError()
    if (this._sq.length !== 0) return 0
    const n = this._sendMany(msgs, start, end)
    if (n !== 0 && (this._waiters.length !== 0 || this._listeners !== null)) this._kick()
    return n
  }

  /** Resolves when the socket can accept a message (ZMQ_POLLOUT). */
  writableAsync() {
    if (this._closed) return Promise.reject(closedError())
    if (this._sq.length === 0 && (this._events() & POLLOUT)) return RESOLVED
    return new Promise((resolve, reject) => {
      this._sq.push({ msg: null, resolve, reject, timer: null })
      this._wait()
    })
  }

  // --- receiving -----------------------------------------------------------------------

  /** Resolves with the next message as an array of Buffers. */
  receive() {
    if (this._rqHead < this._rq.length) return Promise.resolve(this._take())
    if (this._closed) return Promise.reject(closedError())
    if (this._waiters.length === 0) {
      let m
      try { m = this._takeOrSpin() } catch (e) { return Promise.reject(e) }
      if (m !== undefined) return Promise.resolve(m)
    }
    if (this._rcvTimeo === 0) return Promise.reject(eagainError('Receiving message'))
    return new Promise((resolve, reject) => this._addWaiter(0, 1, resolve, reject))
  }

  /** Resolves with between 1 and max messages (whatever is available once any is). */
  receiveMany(max = 1024) {
    if (this._rqHead < this._rq.length) return Promise.resolve(this._takeMany(max))
    if (this._closed) return Promise.reject(closedError())
    if (this._waiters.length === 0) {
      try { if (this._fillOrSpin(max)) return Promise.resolve(this._takeMany(max)) } catch (e) { return Promise.reject(e) }
    }
    if (this._rcvTimeo === 0) return Promise.reject(eagainError('Receiving message'))
    return new Promise((resolve, reject) => this._addWaiter(2, max, resolve, reject))
  }

  /** Receives one frame into `buf` (a Buffer, TypedArray or DataView the caller reuses),
   *  as zmq_recv and pyzmq's recv_into do: copies at most buf.byteLength bytes and
   *  resolves with the frame's full size (larger than buf.byteLength: the rest was
   *  dropped). `receiveMore` then tells whether more frames of the message follow; take
   *  them with receiveInto() as well. No Buffer is made per frame, so a large frame lands
   *  in memory the caller keeps warm. */
  receiveInto(buf) {
    if (!ArrayBuffer.isView(buf)) return Promise.reject(new TypeError('receiveInto: a Buffer, TypedArray or DataView'))
    if (this._partial !== null || this._rqHead < this._rq.length) return Promise.resolve(this._takeFrameInto(buf))
    if (this._closed) return Promise.reject(closedError())
    if (this._waiters.length === 0) {
      // The rest of a message goes without a spin: its frames arrive together.
      const budget = this._rcvMore ? 0 : this._spinBudget()
      let r
      try { r = this._recvInto(buf, budget) } catch (e) { return Promise.reject(e) }
      if (!this._rcvMore) this._spinDone(r !== undefined, budget)
      if (r !== undefined) {
        this._rcvMore = r < 0
        return Promise.resolve(r < 0 ? -r - 1 : r)
      }
      drained = true
    }
    if (this._rcvTimeo === 0) return Promise.reject(eagainError('Receiving message'))
    // Nothing now: wait as receive() does, then copy from the message it gets.
    return new Promise((resolve, reject) => this._addWaiter(0, 1, (m) => {
      this._partial = m
      this._partialAt = 0
      resolve(this._takeFrameInto(buf))
    }, reject))
  }

  /** After receiveInto(): more frames of the same message follow. */
  get receiveMore() { return this._partial !== null || this._rcvMore }

  // receiveInto() from messages already received into the JS queue: the next frame of the
  // message being taken apart (or of the queue's first message) into buf; its size.
  _takeFrameInto(buf) {
    if (this._partial === null) { this._partial = this._take(); this._partialAt = 0 }
    const f = this._partial[this._partialAt++]
    if (this._partialAt === this._partial.length) this._partial = null
    const dst = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength)
    dst.set(f.length <= dst.length ? f : f.subarray(0, dst.length))
    return f.length
  }

  [Symbol.asyncIterator]() { return new MessageIterator(this) }

  /** on('messages', batch => ...) receives every message, in batches (arrays of
   *  messages); on('message', msg => ...) one by one. While any listener is registered
   *  the socket is read continuously and receive() waits. */
  on(event, fn) {
    if (event !== 'messages' && event !== 'message') throw new TypeError('unknown event ' + event)
    if (this._closed) throw closedError()
    if (this._listeners === null) this._listeners = { messages: [], message: [] }
    this._listeners[event].push(fn)
    this._wait()
    return this
  }

  off(event, fn) {
    const l = this._listeners
    if (l === null || !l[event]) return this
    const i = l[event].indexOf(fn)
    if (i >= 0) l[event].splice(i, 1)
    if (l.messages.length === 0 && l.message.length === 0) { this._listeners = null; this._update() }
    return this
  }

  removeAllListeners() { this._listeners = null; if (!this._closed) this._update(); return this }

  // --- lifecycle -----------------------------------------------------------------------

  /** Closes the socket now. Messages already accepted by send() are flushed in the
   *  background for up to `linger` ms; pending send()/receive() calls are rejected with
   *  code EBADF and async iterators finish. */
  close() {
    if (this._closed) return
    this._closed = true
    this._close()
    this._listeners = null
    this._rq = objectList()
    this._rqHead = 0
    this._partial = null
    this._rcvMore = false
    const waiters = this._waiters, sends = this._sq
    this._waiters = objectList()
    this._sq = objectList()
    for (const w of waiters) {
      if (w.timer) clearTimeout(w.timer)
      if (w.kind === 1) w.resolve({ value: undefined, done: true })
      else w.reject(closedError())
    }
    for (const op of sends) { if (op.timer) clearTimeout(op.timer); op.reject(closedError()) }
  }

  // --- internals -----------------------------------------------------------------------

  _take() {
    const m = this._rq[this._rqHead]
    this._rq[this._rqHead++] = undefined
    if (this._rqHead === this._rq.length) { this._rq = objectList(); this._rqHead = 0 }
    return m
  }

  _takeMany(max) {
    const end = Math.min(this._rq.length, this._rqHead + max)
    const out = this._rq.slice(this._rqHead, end)
    this._rqHead = end
    if (end === this._rq.length) { this._rq = objectList(); this._rqHead = 0 }
    return out
  }

  // One native receive into the JS queue; returns the number of messages received.
  _fill(max, spinNs = 0) {
    const r = this._recv(max, BYTE_BUDGET, spinNs)
    if (r === undefined) { drained = true; return 0 }
    return unpack(r, this._rq)
  }

  // The receive of a caller about to wait (no waiter queued yet): spins per the policy
  // when a wait would follow (not with receiveTimeout 0, which fails at once instead).
  _fillOrSpin(max) {
    if (this._listeners !== null) return this._fill(max)
    const budget = this._spinBudget()
    const n = this._fill(max, budget)
    this._spinDone(n !== 0, budget)
    return n
  }

  // _fillOrSpin for receive()/next() with nothing queued: returns the first message
  // received (undefined: none), queueing the rest. One message, the usual case, does not
  // pass through the queue (no array allocated per message).
  _takeOrSpin() {
    if (this._listeners !== null) return this._fill(RECV_BATCH) !== 0 ? this._take() : undefined
    const budget = this._spinBudget()
    const r = this._recv(RECV_BATCH, BYTE_BUDGET, budget)
    let m
    if (r === undefined) {
      drained = true
    } else {
      const n = openResult(r)
      m = nextMessage()
      for (let i = 1; i < n; i++) this._rq.push(nextMessage())
      closeResult()
    }
    this._spinDone(m !== undefined, budget)
    return m
  }

  // The spin budget (ns) of a receive that would wait if it found nothing.
  _spinBudget() { return this._rcvTimeo === 0 ? 0 : this._spin.budgetNs }

  // Records in the spin policy whether a receive with that budget got a message; one that
  // did not and will wait unspun has its wait timed (see _deliver).
  _spinDone(got, budget) {
    const spin = this._spin
    if (budget !== 0) {
      if (got) spin.caught()
      else spin.failed(undefined)
    }
    if (!got && spin.maxNs !== 0 && budget < spin.maxNs && this._rcvTimeo !== 0) this._waitStart = performance.now()
  }

  _addWaiter(kind, max, resolve, reject) {
    const w = { kind, max, resolve, reject, timer: null }
    if (this._rcvTimeo > 0 && kind !== 1) {
      w.timer = setTimeout(() => {
        const i = this._waiters.indexOf(w)
        if (i >= 0) { this._waiters.splice(i, 1); this._update() }
        reject(eagainError('Receiving message'))
      }, this._rcvTimeo)
    }
    this._waiters.push(w)
    this._wait()
  }

  // Entering a wait: make sure the fd is watched and ref'd, then read ZMQ_EVENTS (this
  // re-arms the edge-triggered fd) and service right away if already ready.
  _wait() {
    this._update()
    if (!this._inService && !this._scheduled) {
      const ev = this._events()
      if (((ev & POLLIN) && this._readInterest()) || ((ev & POLLOUT) && this._sq.length !== 0)) {
        this._scheduled = true
        queueMicrotask(this._serviceCb)
      }
    }
  }

  // After a send/recv outside the service loop the fd edge may have been consumed by the
  // library: look at ZMQ_EVENTS once more before the event loop sleeps.
  _kick() {
    if (!this._scheduled && !this._inService) {
      this._scheduled = true
      queueMicrotask(this._serviceCb)
    }
  }

  _readInterest() { return this._waiters.length !== 0 || this._listeners !== null }

  _update() {
    const active = !this._closed && (this._waiters.length !== 0 || this._listeners !== null || this._sq.length !== 0)
    if (active !== this._active || !this._watched) {
      if (this._closed) return
      this._watch(active)
      this._watched = true
      this._active = active
    }
  }

  _service() {
    if (this._closed || this._inService) return
    this._inService = true
    let budget = SERVICE_BUDGET
    try {
      // One ZMQ_EVENTS read per wake re-arms the fd; after that, draining the socket to
      // EAGAIN is enough (anything arriving later signals the fd again). ZMQ_EVENTS is
      // read again only while sends wait for room or a receive stopped on a limit.
      let ev = this._events()
      for (;;) {
        let progress = 0
        drained = false
        if ((ev & POLLOUT) && this._sq.length !== 0) progress += this._flushSends()
        if (this._closed) return
        if ((ev & POLLIN) && this._readInterest()) {
          const n = this._pump()
          progress += n
          budget -= n
        } else if (this._listeners !== null && this._rqHead < this._rq.length) {
          progress += this._pump()
        }
        if (this._closed) return
        if (progress === 0) break
        if (budget <= 0) { this._scheduleLater(); break }
        if (this._sq.length === 0 && (drained || !this._readInterest())) break
        ev = this._events()
      }
    } finally {
      this._inService = false
    }
    this._update()
  }

  _scheduleLater() {
    if (!this._scheduled) {
      this._scheduled = true
      setImmediate(this._serviceCb)
    }
  }

  _flushSends() {
    let n = 0
    const q = this._sq
    while (q.length !== 0) {
      const op = q[0]
      if (op.msg === null) {          // writableAsync() waiter
        q.shift(); op.resolve(); n++
        continue
      }
      let ok
      try { ok = this._send(op.msg) } catch (e) {
        q.shift(); if (op.timer) clearTimeout(op.timer); op.reject(e); n++
        continue
      }
      if (!ok) break
      q.shift()
      if (op.timer) clearTimeout(op.timer)
      op.resolve()
      n++
    }
    return n
  }

  // Receives one batch and delivers it: to listeners if any, else to waiters (the rest
  // stays queued). Returns the number of messages received.
  _pump() {
    const l = this._listeners
    if (l !== null) {
      let batch
      if (this._rqHead < this._rq.length) {
        batch = this._takeMany(this._rq.length)
      } else {
        let r
        try { r = this._recv(LISTENER_BATCH, BYTE_BUDGET) } catch (e) { process.emitWarning(e); return 0 }
        if (r === undefined) { drained = true; return 0 }
        batch = []
        unpack(r, batch)
      }
      for (const fn of l.messages) fn(batch)
      if (l.message.length !== 0) {
        for (let i = 0; i < batch.length; i++) for (const fn of l.message) fn(batch[i])
      }
      return batch.length
    }
    let n
    try {
      n = this._fill(RECV_BATCH)
    } catch (e) {
      const w = this._waiters.shift()
      if (w) { if (w.timer) clearTimeout(w.timer); w.reject(e) }
      return 1
    }
    this._deliver()
    return n
  }

  _deliver() {
    const ws = this._waiters
    if (this._waitStart >= 0 && ws.length !== 0 && this._rqHead < this._rq.length) {
      this._spin.failed((performance.now() - this._waitStart) * 1e6)
      this._waitStart = -0.5
    }
    while (ws.length !== 0 && this._rqHead < this._rq.length) {
      const w = ws.shift()
      if (w.timer) clearTimeout(w.timer)
      if (w.kind === 0) w.resolve(this._take())
      else if (w.kind === 1) w.resolve({ value: this._take(), done: false })
      else w.resolve(this._takeMany(w.max))
    }
  }
}

// ---------------------------------------------------------------------------------------
// options as properties

const Z85 = 41
function defineOption(proto, name, id, kind, ro) {
  let get, set
  switch (kind) {
    case 'int': get = function () { return this._getInt(id) }; set = function (v) { this._setInt(id, v) }; break
    case 'bool': get = function () { return this._getInt(id) !== 0 }; set = function (v) { this._setInt(id, v ? 1 : 0) }; break
    case 'int64': get = function () { return this._getInt64(id) }; set = function (v) { this._setInt64(id, v) }; break
    case 'str':
      get = function () {
        const b = this._getBuf(id)
        let n = b.length
        while (n > 0 && b[n - 1] === 0) n--
        return n === 0 ? null : b.toString('utf8', 0, n)
      }
      set = function (v) { this._setBuf(id, v === null || v === undefined ? '' : v) }
      break
    case 'key':
      get = function () { const b = this._getBuf(id, Z85); return b.toString('latin1', 0, 40) }
      set = function (v) { this._setBuf(id, v) }
      break
  }
  if (ro === 'wo') {       // write-only in libzmq: remember the last value set
    const setter = set, key = '_wo_' + name
    get = function () { return this[key] === undefined ? null : this[key] }
    set = function (v) { setter.call(this, v); this[key] = v }
    ro = false
  }
  const d = { get, enumerable: true, configurable: true }
  if (!ro) d.set = set
  else d.set = function () { throw new TypeError(name + ' is read-only') }
  Object.defineProperty(proto, name, d)
}

const COMMON = [
  ['affinity', 4, 'int64'], ['rate', 8, 'int'], ['recoveryInterval', 9, 'int'],
  ['sendBufferSize', 11, 'int'], ['receiveBufferSize', 12, 'int'], ['linger', 17, 'int'],
  ['reconnectInterval', 18, 'int'], ['backlog', 19, 'int'], ['reconnectMaxInterval', 21, 'int'],
  ['maxMessageSize', 22, 'int64'], ['sendHighWaterMark', 23, 'int'],
  ['receiveHighWaterMark', 24, 'int'], ['multicastHops', 25, 'int'],
  ['lastEndpoint', 32, 'str', true], ['tcpKeepalive', 34, 'int'], ['tcpKeepaliveCount', 35, 'int'],
  ['tcpKeepaliveIdle', 36, 'int'], ['tcpKeepaliveInterval', 37, 'int'], ['immediate', 39, 'bool'],
  ['ipv6', 42, 'bool'], ['plainServer', 44, 'bool'], ['plainUsername', 45, 'str'],
  ['plainPassword', 46, 'str'], ['curveServer', 47, 'bool'], ['curvePublicKey', 48, 'key'],
  ['curveSecretKey', 49, 'key'], ['curveServerKey', 50, 'key'], ['zapDomain', 55, 'str'],
  ['typeOfService', 57, 'int'], ['handshakeInterval', 66, 'int'], ['socksProxy', 68, 'str'],
  ['heartbeatInterval', 75, 'int'], ['heartbeatTimeToLive', 76, 'int'],
  ['heartbeatTimeout', 77, 'int'], ['connectTimeout', 79, 'int'],
  ['tcpMaxRetransmitTimeout', 80, 'int'], ['threadSafe', 81, 'bool', true],
  ['multicastMaxTransportDataUnitSize', 84, 'int'], ['interface', 92, 'str'],
]
for (const [n, id, k, ro] of COMMON) defineOption(Socket.prototype, n, id, k, ro)

Object.defineProperty(Socket.prototype, 'type', { get() { return this._type }, enumerable: true })
Object.defineProperty(Socket.prototype, 'securityMechanism', {
  get() { return [null, 'plain', 'curve', 'gssapi'][this._getInt(43)] || null }, enumerable: true,
})
Object.defineProperty(Socket.prototype, 'sendTimeout', {
  get() { return this._sndTimeo },
  set(v) { this._setInt(28, v); this._sndTimeo = v },
  enumerable: true,
})
Object.defineProperty(Socket.prototype, 'receiveSpin', {
  get() { return this._spin.maxNs / 1000 },
  set(v) {
    if (typeof v !== 'number' || !(v >= 0)) throw new TypeError('receiveSpin: microseconds >= 0')
    this._spin.setMax(v)
  },
  enumerable: true,
})
Object.defineProperty(Socket.prototype, 'receiveTimeout', {
  get() { return this._rcvTimeo },
  set(v) { this._setInt(27, v); this._rcvTimeo = v },
  enumerable: true,
})

function socketClass(name, type, opts, methods) {
  const C = {
    [name]: class extends Socket {
      constructor(options) { super(type, options) }
    },
  }[name]
  for (const [n, id, k, ro] of opts || []) defineOption(C.prototype, n, id, k, ro)
  if (methods) for (const [k, fn] of Object.entries(methods)) {
    Object.defineProperty(C.prototype, k, { value: fn, writable: true, configurable: true })
  }
  return C
}

const routingId = ['routingId', 5, 'str']
const conflate = ['conflate', 54, 'bool']
const probeRouter = ['probeRouter', 51, 'bool', 'wo']
const invertMatching = ['invertMatching', 74, 'bool']

function connectWithId(address, options) {
  if (options && options.routingId !== undefined) this._setBuf(61, options.routingId)
  Socket.prototype.connect.call(this, address)
}

function topicOp(id) {
  return function (...topics) {
    if (this._closed) throw closedError()
    if (topics.length === 0) topics = ['']
    for (const t of topics) this._setBuf(id, t)
  }
}

const Pair = socketClass('Pair', 0)
const Publisher = socketClass('Publisher', 1, [['noDrop', 69, 'bool', 'wo'], conflate, invertMatching])
const Subscriber = socketClass('Subscriber', 2, [conflate, invertMatching],
  { subscribe: topicOp(6), unsubscribe: topicOp(7) })
const Request = socketClass('Request', 3, [routingId, probeRouter,
  ['correlate', 52, 'bool', 'wo'], ['relaxed', 53, 'bool', 'wo']])
const Reply = socketClass('Reply', 4, [routingId])
const Dealer = socketClass('Dealer', 5, [routingId, probeRouter, conflate])
const Router = socketClass('Router', 6, [routingId, ['mandatory', 33, 'bool', 'wo'], probeRouter,
  ['handover', 56, 'bool', 'wo']], { connect: connectWithId })
const Pull = socketClass('Pull', 7, [conflate])
const Push = socketClass('Push', 8, [conflate])
const XPublisher = socketClass('XPublisher', 9, [['noDrop', 69, 'bool', 'wo'], ['manual', 71, 'bool', 'wo'],
  ['welcomeMessage', 72, 'str', 'wo'], invertMatching])
Object.defineProperty(XPublisher.prototype, 'verbosity', {
  get() { return this._verbosity || null },
  set(v) {
    if (v === 'allSubs') { this._setInt(40, 1); this._setInt(78, 0) }
    else if (v === 'allSubsUnsubs') { this._setInt(78, 1) }
    else { this._setInt(40, 0); this._setInt(78, 0) }
    this._verbosity = v || null
  },
  enumerable: true,
})
const XSubscriber = socketClass('XSubscriber', 10)
const Stream = socketClass('Stream', 11, [['notify', 73, 'bool', 'wo']], { connect: connectWithId })

module.exports = {
  Context, context, Socket,
  Pair, Publisher, Subscriber, Request, Reply, Dealer, Router, Pull, Push,
  XPublisher, XSubscriber, Stream,
  // short aliases
  Pub: Publisher, Sub: Subscriber, Req: Request, Rep: Reply, XPub: XPublisher, XSub: XSubscriber,
  version: native.version(),
  capability: Object.fromEntries(['ipc', 'pgm', 'tipc', 'norm', 'curve', 'gssapi', 'draft']
    .map((c) => [c, native.has(c)])),
  curveKeyPair: native.curveKeyPair,
  _SpinPolicy: SpinPolicy,   // internal, exported for its unit test
  SocketType: { Pair: 0, Publisher: 1, Subscriber: 2, Request: 3, Reply: 4, Dealer: 5,
    Router: 6, Pull: 7, Push: 8, XPublisher: 9, XSubscriber: 10, Stream: 11 },
}
