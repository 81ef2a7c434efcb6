import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  CheckTimeoutError,
  createMetricsRegistry,
  Health,
  isHealthPath,
  type ReadinessChange,
  startAdminServer,
} from '../src/index.js'
import { call } from './support/http-call.js'

const servers: Server[] = []
after(async () => {
  for (const s of servers) {
    s.closeAllConnections()
    await new Promise((resolve) => s.close(resolve))
  }
})

/** A server answering the health paths from `health`, 404 otherwise: its base URL. */
async function serve(health: Health): Promise<string> {
  const server = createServer((req, res) => {
    if (!health.handle(req, res)) res.writeHead(404).end()
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** Resolves once `condition()` holds (polled every turn of the event loop); fails, naming it, after 10 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const started = performance.now()
  while (!condition()) {
    if (performance.now() - started > 10_000) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/** A check that fails while `up` is false, counting its runs. */
function switchable() {
  const state = { up: true, runs: 0 }
  const check = async () => {
    state.runs++
    if (!state.up) throw new Error('connect ECONNREFUSED 10.1.2.3:5432 password=hunter2')
  }
  return { state, check }
}

describe('Health: /livez and /readyz', () => {
  it('/livez is 200 ok whatever the checks say; /readyz is 200 when every check passes, 503 otherwise', async () => {
    const store = switchable()
    const cache = switchable()
    const health = new Health({ checks: { store: store.check, cache: cache.check }, cacheMs: 0 })
    const url = await serve(health)
    const ready = await call(`${url}/readyz`)
    assert.equal(ready.status, 200)
    assert.equal(ready.body, 'ok\n')
    assert.equal(ready.headers['cache-control'], 'no-store')
    assert.equal(ready.headers['content-type'], 'text/plain; charset=utf-8')
    cache.state.up = false
    const notReady = await call(`${url}/readyz`)
    assert.equal(notReady.status, 503)
    // Fixed body: neither the failing check's name nor its error text (which names a host and a password here).
    assert.equal(notReady.body, 'not ready\n')
    const live = await call(`${url}/livez`)
    assert.equal(live.status, 200)
    assert.equal(live.body, 'ok\n')
    assert.equal(live.headers['cache-control'], 'no-store')
    cache.state.up = true
    assert.equal((await call(`${url}/readyz?verbose=1`)).status, 200)
  })

  it('HEAD answers the same status with no body; another method is 405 with Allow; other paths are left alone', async () => {
    const store = switchable()
    const health = new Health({ checks: { store: store.check }, cacheMs: 0 })
    const url = await serve(health)
    const head = await call(`${url}/readyz`, 'HEAD')
    assert.equal(head.status, 200)
    assert.equal(head.body, '')
    assert.equal(head.headers['content-length'], '3')
    store.state.up = false
    assert.equal((await call(`${url}/readyz`, 'HEAD')).status, 503)
    const post = await call(`${url}/livez`, 'POST')
    assert.equal(post.status, 405)
    assert.equal(post.headers.allow, 'GET, HEAD')
    assert.equal((await call(`${url}/healthz`)).status, 404)
    assert.equal((await call(`${url}/readyz/x`)).status, 404)
  })

  it('many probes share one round of checks: concurrent ones a single flight, later ones the cached result', async () => {
    const store = switchable()
    const health = new Health({ checks: { store: store.check }, cacheMs: 60_000 })
    const url = await serve(health)
    const answers = await Promise.all(Array.from({ length: 50 }, () => call(`${url}/readyz`)))
    assert.ok(answers.every((a) => a.status === 200))
    for (let i = 0; i < 50; i++) assert.equal((await call(`${url}/readyz`)).status, 200)
    assert.equal(store.state.runs, 1)
    assert.equal(health.rounds, 1)
  })

  it('a cached result is used only for cacheMs: after it, the next probe runs the checks again', async () => {
    const store = switchable()
    const health = new Health({ checks: { store: store.check }, cacheMs: 20 })
    assert.equal(await health.ready(), true)
    store.state.up = false
    await sleep(40)
    assert.equal(await health.ready(), false)
    assert.equal(store.state.runs, 2)
  })

  it('with cacheMs 0 every probe runs the checks', async () => {
    const store = switchable()
    const health = new Health({ checks: { store: store.check }, cacheMs: 0 })
    for (let i = 0; i < 5; i++) await health.ready()
    assert.equal(store.state.runs, 5)
  })

  it('draining makes /readyz 503 at once, without running a check; /livez stays 200', async () => {
    const store = switchable()
    const health = new Health({ checks: { store: store.check }, cacheMs: 60_000 })
    const url = await serve(health)
    assert.equal((await call(`${url}/readyz`)).status, 200)
    health.setDraining()
    assert.equal(health.draining, true)
    assert.equal((await call(`${url}/readyz`)).status, 503)
    assert.equal((await call(`${url}/livez`)).status, 200)
    assert.equal(store.state.runs, 1)
  })

  it('a check that never settles fails its round after checkTimeoutMs (CheckTimeoutError, named)', async () => {
    const changes: ReadinessChange[] = []
    const health = new Health({
      checks: { frozen: () => new Promise<void>(() => {}) },
      checkTimeoutMs: 30,
      onChange: (c) => changes.push(c),
    })
    assert.equal(await health.ready(), false)
    assert.equal(changes.length, 1)
    const failed = changes[0]?.failing[0]
    assert.ok(failed !== undefined)
    assert.equal(failed.name, 'frozen')
    assert.ok(failed.error instanceof CheckTimeoutError)
    assert.equal(failed.error.code, 'ERR_OPERABILITY_CHECK_TIMEOUT')
  })

  it('onChange is told once per transition (not per probe), with the failing checks; a sync throw fails too', async () => {
    const changes: ReadinessChange[] = []
    const store = switchable()
    const health = new Health({ checks: { store: store.check }, cacheMs: 0, onChange: (c) => changes.push(c) })
    await health.ready()
    await health.ready()
    store.state.up = false
    await health.ready()
    await health.ready()
    store.state.up = true
    await health.ready()
    health.setCheck('sync', () => {
      throw new Error('thrown before any promise')
    })
    assert.equal(await health.ready(), false)
    assert.deepEqual(
      changes.map((c) => [c.ready, c.failing.map((f) => f.name)]),
      [
        [true, []],
        [false, ['store']],
        [true, []],
        [false, ['sync']],
      ],
    )
    health.removeCheck('sync')
    assert.equal(await health.ready(), true)
  })

  it('invalidate(): a round already running when a dependency fails neither fills the cache nor answers later probes', async () => {
    // A check held until released, so a round is in flight while the dependency fails and invalidate() runs.
    const state = { up: true, runs: 0 }
    const gates: (() => void)[] = []
    const check = async () => {
      state.runs++
      const up = state.up
      await new Promise<void>((resolve) => gates.push(resolve))
      if (!up) throw new Error('down')
    }
    const changes: ReadinessChange[] = []
    const health = new Health({ checks: { store: check }, cacheMs: 60_000, onChange: (c) => changes.push(c) })
    const url = await serve(health)
    const before = call(`${url}/readyz`)
    await until(() => gates.length === 1, 'the first round to run its check')
    // The store fails after the round's check passed: the server invalidates readiness.
    state.up = false
    health.invalidate()
    // A probe arriving now does not join the old round: it runs a fresh one.
    const after = health.ready()
    await until(() => gates.length === 2, 'a fresh round for the probe after invalidate()')
    gates.shift()?.()
    // The probe that was waiting gets its round's answer…
    assert.equal((await before).status, 200)
    gates.shift()?.()
    assert.equal(await after, false)
    // …but that 200 was not cached for the minute: the fresh round's answer was.
    assert.equal((await call(`${url}/readyz`)).status, 503)
    assert.equal(state.runs, 2)
    // The stale 'ready' was never told as a transition; the fresh 'not ready' was, once.
    assert.deepEqual(
      changes.map((c) => c.ready),
      [false],
    )
  })

  it("invalidate() during a failing round: its 'not ready' is told (once) but not cached; setCheck invalidates too", async () => {
    const changes: ReadinessChange[] = []
    let runs = 0
    const health = new Health({
      cacheMs: 60_000,
      onChange: (c) => changes.push(c),
      checks: {
        // The check's own failure is what invalidates (a store call answered unavailable, as the probe's is).
        store: async () => {
          runs++
          health.invalidate()
          throw new Error('down')
        },
      },
    })
    assert.equal(await health.ready(), false)
    assert.deepEqual(
      changes.map((c) => [c.ready, c.failing.map((f) => f.name)]),
      [[false, ['store']]],
    )
    // Not cached: the next probe runs the checks again (and tells nothing new).
    assert.equal(await health.ready(), false)
    assert.equal(runs, 2)
    assert.equal(changes.length, 1)
    // A round running when its check is replaced does not leave its answer behind either.
    let release: () => void = () => {}
    health.setCheck('store', () => new Promise<void>((resolve) => (release = resolve)))
    const old = health.ready()
    await until(() => health.rounds === 3, 'the round with the held check')
    health.setCheck('store', () => Promise.reject(new Error('replaced')))
    release()
    assert.equal(await old, true)
    assert.equal(await health.ready(), false)
    assert.deepEqual(
      changes.map((c) => c.ready),
      [false],
    )
  })

  it('a throwing onChange does not turn a probe into a failure', async () => {
    const health = new Health({
      onChange: () => {
        throw new Error('logger broke')
      },
    })
    assert.equal(await health.ready(), true)
  })

  it('isHealthPath: /livez and /readyz with or without a query, nothing else', () => {
    for (const p of ['/livez', '/readyz', '/readyz?x=1', '/livez?']) assert.equal(isHealthPath(p), true, p)
    for (const p of ['/healthz', '/readyz/', '/v1/readyz', 'readyz', '', undefined, '/livezz', '//readyz'])
      assert.equal(isHealthPath(p), false, String(p))
  })

  it('bad options are RangeErrors', () => {
    assert.throws(() => new Health({ cacheMs: -1 }), RangeError)
    assert.throws(() => new Health({ cacheMs: 1.5 }), RangeError)
    assert.throws(() => new Health({ checkTimeoutMs: 0 }), RangeError)
  })

  it('serves the admin listener too (startAdminServer health)', async () => {
    const store = switchable()
    const health = new Health({ checks: { store: store.check }, cacheMs: 0 })
    const admin = await startAdminServer({ port: 0, registry: createMetricsRegistry(), health })
    try {
      assert.equal((await call(`${admin.url}/readyz`)).status, 200)
      store.state.up = false
      const r = await call(`${admin.url}/readyz`)
      assert.equal(r.status, 503)
      assert.equal(r.body, 'not ready\n')
      assert.equal((await call(`${admin.url}/livez`)).status, 200)
    } finally {
      await admin.close()
    }
  })
})
