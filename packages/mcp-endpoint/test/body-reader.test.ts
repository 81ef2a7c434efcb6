// The body reader on real sockets: a request that by HTTP/1.1 framing has no body takes no unfinished-body slot (so
// it never cuts a slow sender at the cap), while chunked and Content-Length bodies are read whole.
import assert from 'node:assert/strict'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { BodyReader } from '../src/index.ts'

const reader = new BodyReader({ maxUnfinishedBodies: 4, bodyTimeoutMs: 5_000 })
const slotsTakenAtStart: number[] = []
const server = createServer((req, res) => {
  const before = reader.unfinished
  const reading = reader.read(req)
  slotsTakenAtStart.push(reader.unfinished - before)
  void reading.then((r) => res.end(r.ok ? `read ${r.body.length}` : `refused ${r.status}`))
})
let port = 0
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})
after(() => server.close())

function send(method: string, headers: Record<string, string>, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: '/', headers }, (res) => {
      let got = ''
      res.on('data', (d) => {
        got += d
      })
      res.on('end', () => resolve(got))
    })
    req.on('error', reject)
    if (body !== undefined) req.write(body)
    req.end()
  })
}

test('a request with neither Content-Length nor Transfer-Encoding is read as empty without taking a slot', async () => {
  slotsTakenAtStart.length = 0
  assert.equal(await send('GET', {}), 'read 0')
  assert.deepEqual(slotsTakenAtStart, [0])
})

test('a chunked body and a Content-Length body are still read whole, each holding a slot while it arrives', async () => {
  slotsTakenAtStart.length = 0
  assert.equal(await send('POST', { 'transfer-encoding': 'chunked' }, 'x'.repeat(10)), 'read 10')
  assert.equal(await send('GET', { 'content-length': '3' }, 'abc'), 'read 3')
  assert.deepEqual(slotsTakenAtStart, [1, 1])
})
