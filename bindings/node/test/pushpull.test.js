'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const zmq = require('..')
const { bound, within } = require('./helpers')

for (const transport of ['tcp', 'ipc', 'inproc']) {
  test(`PUSH/PULL multipart round trip over ${transport}`, async () => {
    const pull = new zmq.Pull()
    const push = new zmq.Push()
    try {
      push.connect(await bound(pull, transport))
      const big = Buffer.alloc(70000, 7)            // larger than the batch-packing limit
      await push.send(['head', Buffer.from([0, 1, 2]), '', big, new Uint8Array([9, 8]), 'tail'])
      const msg = await within(pull.receive(), 5000, 'receive')
      assert.equal(msg.length, 6)
      assert.ok(msg.every((f) => Buffer.isBuffer(f)))
      assert.equal(msg[0].toString(), 'head')
      assert.deepEqual([...msg[1]], [0, 1, 2])
      assert.equal(msg[2].length, 0)
      assert.equal(msg[3].length, 70000)
      assert.ok(msg[3].equals(big))
      assert.deepEqual([...msg[4]], [9, 8])
      assert.equal(msg[5].toString(), 'tail')
    } finally { push.close(); pull.close() }
  })
}

test('messages arrive in order through for-await, receive and receiveMany', async () => {
  const pull = new zmq.Pull()
  const push = new zmq.Push()
  try {
    push.connect(await bound(pull, 'tcp'))
    const N = 3000
    for (let i = 0; i < N; i++) await push.send('m' + i)
    let n = 0
    for await (const [m] of pull) {
      assert.equal(m.toString(), 'm' + n)
      if (++n === 1000) break
    }
    for (; n < 2000; n++) assert.equal((await pull.receive())[0].toString(), 'm' + n)
    while (n < N) {
      const batch = await within(pull.receiveMany(100), 5000, 'receiveMany')
      assert.ok(batch.length >= 1 && batch.length <= 100)
      for (const [m] of batch) assert.equal(m.toString(), 'm' + n++)
    }
    assert.equal(n, N)
  } finally { push.close(); pull.close() }
})

test('received Buffers stay valid and unaliased across later receives (shared slabs)', async () => {
  const pull = new zmq.Pull()
  const push = new zmq.Push()
  try {
    push.connect(await bound(pull, 'tcp'))
    // enough 1500 B messages to fill several receive slabs, one receive at a time and in
    // batches, plus empty and big frames in between
    const N = 300
    const kept = []
    for (let i = 0; i < N; i++) {
      await push.send(i % 50 === 7 ? ['', Buffer.alloc(3000, i & 0xff)] : Buffer.alloc(1500, i & 0xff))
      if (i % 3 === 0) kept.push(await within(pull.receive(), 5000, 'receive'))
    }
    while (kept.length < N) kept.push(...await within(pull.receiveMany(64), 5000, 'receiveMany'))
    for (const msg of kept) msg[msg.length - 1][0] ^= 0xff   // a write to one message only
    kept.forEach((msg, i) => {
      const body = msg[msg.length - 1]
      assert.equal(body.length, i % 50 === 7 ? 3000 : 1500)
      if (msg.length === 2) assert.equal(msg[0].length, 0)
      assert.equal(body[0], (i & 0xff) ^ 0xff)
      assert.ok(body.subarray(1).every((b) => b === (i & 0xff)), 'message ' + i + ' intact')
    })
  } finally { push.close(); pull.close() }
})

test('receives whose library calls end inside a message or past the byte budget keep every frame', async () => {
  // Three frames per message (a library call of 256 frames ends inside one), 2048 B frames
  // (the largest packed into the slab), a big frame (its own Buffer) every 97 messages;
  // ~9 MB in all, several 1 MiB receive budgets' worth.
  const pull = new zmq.Pull()
  const push = new zmq.Push({ sendHighWaterMark: 0 })
  try {
    push.connect(await bound(pull, 'inproc'))
    const N = 3000
    const fill = (len, i, f) => Buffer.alloc(len, (i * 3 + f) & 0xff)
    const frames = (i) => [fill(i % 7, i, 0), fill(2048, i, 1), fill(i % 97 === 5 ? 5000 : 1000, i, 2)]
    for (let i = 0; i < N; i++) assert.equal(push.sendMany([frames(i)]), 1)
    let got = 0, batches = 0
    const done = new Promise((resolve, reject) => {
      pull.on('messages', (batch) => {
        batches++
        try {
          for (const msg of batch) {
            const want = frames(got++)
            assert.equal(msg.length, 3)
            for (let f = 0; f < 3; f++) assert.ok(msg[f].equals(want[f]), `message ${got - 1} frame ${f}`)
          }
        } catch (e) { reject(e) }
        if (got >= N) resolve()
      })
    })
    await within(done, 20000, 'receiving 3000 messages')
    assert.equal(got, N)
    assert.ok(batches > 1 && batches < N, `${batches} batches`)
  } finally { push.close(); pull.close() }
})

test('sendMany + on("messages") deliver every message exactly once, in batches', async () => {
  const pull = new zmq.Pull()
  const push = new zmq.Push()
  try {
    push.connect(await bound(pull, 'tcp'))
    const N = 50000
    const msgs = []
    for (let i = 0; i < N; i++) msgs.push(Buffer.from(String(i)))
    let got = 0, batches = 0, bad = 0
    const done = new Promise((resolve) => {
      pull.on('messages', (batch) => {
        batches++
        for (const [m] of batch) if (Number(m.toString()) !== got++) bad++
        if (got >= N) resolve()
      })
    })
    let sent = 0
    while (sent < N) {
      const k = push.sendMany(msgs, sent)
      sent += k
      if (sent < N) await push.writableAsync()
    }
    await within(done, 20000, 'receiving 50000 messages')
    assert.equal(got, N)
    assert.equal(bad, 0)
    assert.ok(batches < N, `expected batching, got ${batches} callbacks for ${N} messages`)
  } finally { push.close(); pull.close() }
})

test('send accepts strings, Buffers, TypedArrays, ArrayBuffers, null; multibyte UTF-8 intact', async () => {
  const pull = new zmq.Pull()
  const push = new zmq.Push()
  try {
    push.connect(await bound(pull, 'inproc'))
    const long = 'é'.repeat(5000)                  // longer than the native stack buffer
    await push.send([long, new Float64Array([1.5]), new ArrayBuffer(3), null])
    const [a, b, c, d] = await pull.receive()
    assert.equal(a.toString(), long)
    assert.equal(b.readDoubleLE(0), 1.5)
    assert.equal(c.length, 3)
    assert.equal(d.length, 0)
  } finally { push.close(); pull.close() }
})
