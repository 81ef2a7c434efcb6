import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { type AddressInfo, connect, type Socket } from 'node:net'
import { describe, it } from 'node:test'
import { GracefulServer, Health } from '../src/index.js'

interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** One keep-alive connection written by hand, so the test sees exactly which answers arrived on it and when it closed. */
class RawConnection {
  readonly socket: Socket
  readonly closed: Promise<void>
  #buffer = ''
  #waiting: (() => void) | undefined
  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1')
    this.socket.setEncoding('utf8')
    this.socket.on('data', (d: string) => {
      this.#buffer += d
      this.#waiting?.()
    })
    this.socket.on('error', () => {})
    this.socket.on('end', () => this.#waiting?.())
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()))
    void this.closed.then(() => this.#waiting?.())
  }

  ready(): Promise<void> {
    return new Promise((resolve) => this.socket.once('connect', () => resolve()))
  }

  send(path: string): void {
    this.socket.write(`GET ${path} HTTP/1.1\r\nhost: localhost\r\nconnection: keep-alive\r\n\r\n`)
  }

  /** The next complete answer; undefined when the connection closed before one arrived in full. */
  async answer(): Promise<RawAnswer | undefined> {
    for (;;) {
      const end = this.#buffer.indexOf('\r\n\r\n')
      if (end !== -1) {
        const [statusLine, ...lines] = this.#buffer.slice(0, end).split('\r\n')
        const headers: Record<string, string> = {}
        for (const l of lines) {
          const i = l.indexOf(':')
          headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim()
        }
        const rest = this.#buffer.slice(end + 4)
        if (headers['content-length'] !== undefined) {
          const length = Number(headers['content-length'])
          if (rest.length >= length) {
            this.#buffer = rest.slice(length)
            return { status: Number(statusLine?.split(' ')[1]), headers, body: rest.slice(0, length) }
          }
        } else if (this.socket.readableEnded || this.socket.destroyed) {
          // Connection: close without a length: the body runs to the end of the connection.
          this.#buffer = ''
          return { status: Number(statusLine?.split(' ')[1]), headers, body: rest }
        }
      }
      if (this.socket.destroyed || this.socket.readableEnded) return undefined
      await new Promise<void>((resolve) => {
        this.#waiting = resolve
      })
    }
  }
}

/** A server whose answers to /slow wait until released; other paths answer at once. */
async function slowServer() {
  const held: (() => void)[] = []
  const received: string[] = []
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    received.push(req.url ?? '')
    const body = `done ${req.url}`
    // A length, not chunked: RawConnection reads answers by Content-Length.
    const reply = () =>
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) }).end(body)
    if (req.url?.startsWith('/slow')) held.push(reply)
    else reply()
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return { server, port, held, received }
}

const releaseAll = (held: (() => void)[]) => {
  for (const r of held.splice(0)) r()
}

describe('GracefulServer', () => {
  it('answers every request received before close, ends keep-alive connections after their answer, refuses new connections', async () => {
    const { server, port, held, received } = await slowServer()
    const health = new Health()
    const graceful = new GracefulServer(server, { health, deadlineMs: 60_000 })
    const busy = new RawConnection(port)
    const idle = new RawConnection(port)
    await Promise.all([busy.ready(), idle.ready()])
    idle.send('/fast')
    assert.equal((await idle.answer())?.headers.connection, 'keep-alive')
    busy.send('/slow/1')
    while (received.length < 2) await new Promise((r) => setImmediate(r))
    assert.equal(graceful.inFlight, 1)

    const closed = graceful.close()
    assert.equal(graceful.draining, true)
    assert.equal(await health.ready(), false)
    // The idle keep-alive connection is closed at once (its keep-alive timeout is a minute).
    await idle.closed
    // A new connection is refused.
    await assert.rejects(
      new Promise((resolve, reject) => connect(port, '127.0.0.1').once('connect', resolve).once('error', reject)),
      { code: 'ECONNREFUSED' },
    )
    releaseAll(held)
    const first = await busy.answer()
    assert.equal(first?.status, 200)
    assert.equal(first?.body, 'done /slow/1')
    // Received before the drain, answered during it: the connection is not offered for another request.
    assert.equal(first?.headers.connection, 'close')
    await busy.closed
    assert.deepEqual(await closed, { cut: 0, forced: false })
  })

  it('a request arriving on an open connection during the drain is answered, with Connection: close', async () => {
    const { server, port, held } = await slowServer()
    const graceful = new GracefulServer(server, { deadlineMs: 60_000 })
    const conn = new RawConnection(port)
    await conn.ready()
    conn.send('/slow/a')
    while (held.length < 1) await new Promise((r) => setImmediate(r))
    // Its answer starts before the drain: it still says keep-alive.
    const answerA = conn.answer()
    releaseAll(held)
    assert.equal((await answerA)?.headers.connection, 'keep-alive')
    // Busy again when the drain begins, so close() cannot close it as idle.
    conn.send('/slow/b')
    while (held.length < 1) await new Promise((r) => setImmediate(r))
    const closed = graceful.close()
    releaseAll(held)
    const b = await conn.answer()
    assert.equal(b?.body, 'done /slow/b')
    assert.equal(b?.headers.connection, 'close')
    await conn.closed
    assert.deepEqual(await closed, { cut: 0, forced: false })
  })

  it('a connection whose answer had started before the drain is closed once that answer ends', async () => {
    const streamed: ServerResponse[] = []
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '4' })
      res.write('ab')
      streamed.push(res)
    })
    server.keepAliveTimeout = 60_000
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const graceful = new GracefulServer(server, { deadlineMs: 60_000 })
    const conn = new RawConnection((server.address() as AddressInfo).port)
    await conn.ready()
    conn.send('/stream')
    while (streamed.length < 1) await new Promise((r) => setImmediate(r))
    const closed = graceful.close()
    streamed[0]?.end('cd')
    const a = await conn.answer()
    assert.equal(a?.body, 'abcd')
    assert.equal(a?.headers.connection, 'keep-alive')
    await conn.closed
    assert.deepEqual(await closed, { cut: 0, forced: false })
  })

  it('at the deadline, requests still unanswered are cut and close resolves (forced)', async () => {
    const { server, port, held } = await slowServer()
    const graceful = new GracefulServer(server, { deadlineMs: 60_000 })
    const conn = new RawConnection(port)
    await conn.ready()
    conn.send('/slow/never')
    while (held.length < 1) await new Promise((r) => setImmediate(r))
    const report = await graceful.close({ deadlineMs: 50 })
    assert.deepEqual(report, { cut: 1, forced: true })
    assert.equal(await conn.answer(), undefined)
    // A second close answers the same report.
    assert.equal(await graceful.close(), report)
  })

  it('with a delay: not ready at once, but serving as usual (keep-alive, new connections) until the delay ends', async () => {
    const { server, port } = await slowServer()
    const health = new Health()
    const graceful = new GracefulServer(server, { health, deadlineMs: 60_000, delayMs: 400 })
    const conn = new RawConnection(port)
    await conn.ready()
    const startedAt = performance.now()
    const closed = graceful.close()
    assert.equal(await health.ready(), false, 'readiness 503 from the signal on')
    assert.equal(graceful.draining, false)
    conn.send('/during-delay')
    assert.equal((await conn.answer())?.headers.connection, 'keep-alive')
    const late = new RawConnection(port)
    await late.ready()
    late.send('/new-connection')
    assert.equal((await late.answer())?.status, 200)
    // Then the drain: idle connections closed, new ones refused.
    await Promise.all([conn.closed, late.closed])
    assert.ok(performance.now() - startedAt >= 390, 'not before the delay')
    assert.deepEqual(await closed, { cut: 0, forced: false })
  })

  it('bad deadlines are RangeErrors', async () => {
    const server = createServer()
    assert.throws(() => new GracefulServer(server, { deadlineMs: -1 }), RangeError)
    assert.throws(() => new GracefulServer(server, { deadlineMs: 0.5 }), RangeError)
    assert.throws(() => new GracefulServer(server).close({ deadlineMs: Number.NaN }), RangeError)
    assert.throws(() => new GracefulServer(server, { delayMs: -5 }), /delayMs must be a whole number/)
  })
})
