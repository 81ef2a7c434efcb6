// Slow and hostile connections: slow bodies hold a slot each, never the server; they are cut by the body timeout;
// beyond the cap of unfinished bodies a new one is refused at once; slow headers are cut by the header timeout.
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { after, before, test } from 'node:test'
import { INIT, post, type Running, startDoor } from './fixture.ts'

let door: Running
before(async () => {
  door = await startDoor({
    body: { bodyTimeoutMs: 1_500, maxUnfinishedBodies: 6 },
    connections: { headersTimeoutMs: 500, requestTimeoutMs: 5_000 },
  })
})
after(async () => door.close())

/** Opens a connection that sends headers and then a body one byte at a time; resolves with what came back. */
function slowBody(port: number): { socket: Socket; answer: Promise<string> } {
  const socket = connect(port, '127.0.0.1')
  socket.setNoDelay(true)
  const body = INIT
  socket.write(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n`,
  )
  let i = 0
  const drip = setInterval(() => {
    if (i < body.length - 1 && !socket.destroyed) socket.write(body[i++] as string)
  }, 100)
  const answer = new Promise<string>((resolve) => {
    let got = ''
    socket.on('data', (d) => {
      got += d.toString()
    })
    socket.on('close', () => {
      clearInterval(drip)
      resolve(got)
    })
    socket.on('error', () => {})
  })
  return { socket, answer }
}

test('slow bodies hold their slots while normal callers are served, then are cut by the body timeout (408)', async () => {
  const slow = Array.from({ length: 5 }, () => slowBody(door.port))
  await new Promise((r) => setTimeout(r, 200))
  assert.equal(door.endpoint.bodyReader.unfinished, 5)
  // Meanwhile whole requests (their bodies arrive at once) are served, concurrently.
  const normal = await Promise.all(Array.from({ length: 10 }, () => post(door.url, INIT)))
  for (const ok of normal) assert.equal(ok.status, 200)
  const answers = await Promise.all(slow.map((s) => s.answer))
  // Our 408 (Node's own request timeout, 5 s here, would answer without this body).
  for (const a of answers) assert.match(a, /^HTTP\/1\.1 408[\s\S]*did not arrive in time/)
  assert.equal(door.endpoint.bodyReader.unfinished, 0)
})

test('at the cap of unfinished bodies, a newcomer cuts the oldest slow body (503 to it) and is served', async () => {
  const slow = Array.from({ length: 6 }, () => slowBody(door.port))
  await new Promise((r) => setTimeout(r, 200))
  assert.equal(door.endpoint.bodyReader.unfinished, 6)
  const ok = await post(door.url, INIT)
  assert.equal(ok.status, 200)
  const first = await slow[0]?.answer
  assert.match(first ?? '', /^HTTP\/1\.1 503/)
  const rest = await Promise.all(slow.slice(1).map((s) => s.answer))
  for (const a of rest) assert.match(a, /^HTTP\/1\.1 (408|503)/)
})

test('a connection that sends its headers slowly is cut by the header timeout', async () => {
  const socket = connect(door.port, '127.0.0.1')
  socket.write('POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n')
  const drip = setInterval(() => socket.writable && socket.write('x-slow: 1\r\n'), 200)
  const got = await new Promise<string>((resolve) => {
    let text = ''
    socket.on('data', (d) => {
      text += d.toString()
    })
    socket.on('close', () => resolve(text))
    socket.on('error', () => {})
  })
  clearInterval(drip)
  // Node answers 408 (or just closes) once the header timeout passes; either way the slot is freed.
  assert.ok(got === '' || /^HTTP\/1\.1 408/.test(got), got)
})
