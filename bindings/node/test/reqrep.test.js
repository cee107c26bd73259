'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const zmq = require('..')
const { bound, within } = require('./helpers')

for (const transport of ['tcp', 'ipc', 'inproc']) {
  test(`REQ/REP round trips over ${transport}`, async () => {
    const rep = new zmq.Rep()
    const req = new zmq.Req()
    try {
      req.connect(await bound(rep, transport))
      const server = (async () => {
        for await (const [m] of rep) await rep.send(['re:' + m, 'x'])
      })()
      for (let i = 0; i < 200; i++) {
        await req.send('q' + i)
        const r = await within(req.receive(), 5000, 'reply')
        assert.deepEqual(r.map(String), ['re:q' + i, 'x'])
      }
      rep.close()
      await server          // the iterator ends when the socket closes
    } finally { req.close(); rep.close() }
  })
}

test('REQ enforces send/receive alternation with EFSM', async () => {
  const rep = new zmq.Rep()
  const req = new zmq.Req()
  try {
    req.connect(await bound(rep, 'inproc'))
    await req.send('one')
    await assert.rejects(req.send('two'), (e) => e instanceof Error && e.code === 'EFSM')
    await assert.rejects(rep.send('no request yet'), (e) => e.code === 'EFSM')
  } finally { req.close(); rep.close() }
})
