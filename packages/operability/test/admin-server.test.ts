import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { Counter, Gauge } from 'prom-client'
import {
  BoundChildren,
  CappedLabel,
  createMetricsRegistry,
  KnownLabel,
  type RunningAdminServer,
  startAdminServer,
} from '../src/index.js'
import { call as get } from './support/http-call.js'

describe('startAdminServer', () => {
  const servers: RunningAdminServer[] = []
  after(async () => {
    for (const s of servers) await s.close()
  })

  it('serves the registry at GET /metrics with the Prometheus text content type, on 127.0.0.1 by default', async () => {
    const registry = createMetricsRegistry()
    const calls = new Counter({ name: 'demo_calls_total', help: 'calls', registers: [registry] })
    calls.inc(3)
    const admin = await startAdminServer({ port: 0, registry })
    servers.push(admin)
    assert.equal(admin.host, '127.0.0.1')
    const r = await get(`${admin.url}/metrics`)
    assert.equal(r.status, 200)
    assert.equal(r.headers['content-type'], registry.contentType)
    assert.match(r.headers['content-type'] as string, /^text\/plain; version=0\.0\.4/)
    assert.match(r.body, /^# HELP demo_calls_total calls$/m)
    assert.match(r.body, /^demo_calls_total 3$/m)
    const head = await get(`${admin.url}/metrics`, 'HEAD')
    assert.equal(head.status, 200)
    assert.equal(head.body, '')
  })

  it('answers 404 for any other path, 405 for another method, and 404 for the health paths without health', async () => {
    const admin = await startAdminServer({ port: 0, registry: createMetricsRegistry() })
    servers.push(admin)
    assert.equal((await get(`${admin.url}/`)).status, 404)
    assert.equal((await get(`${admin.url}/metricsx`)).status, 404)
    assert.equal((await get(`${admin.url}/mcp`)).status, 404)
    const post = await get(`${admin.url}/metrics`, 'POST')
    assert.equal(post.status, 405)
    assert.equal(post.headers.allow, 'GET, HEAD')
    assert.equal((await get(`${admin.url}/livez`)).status, 404)
    assert.equal((await get(`${admin.url}/readyz`)).status, 404)
  })

  it('hands /livez and /readyz (and only those) to the health endpoints', async () => {
    const seen: string[] = []
    let ready = false
    const health = {
      handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) {
        seen.push(req.url ?? '')
        if (req.url === '/readyz' && !ready) res.writeHead(503).end('not ready\n')
        else res.writeHead(200).end('ok\n')
        return true
      },
    }
    const admin = await startAdminServer({ port: 0, registry: createMetricsRegistry(), health })
    servers.push(admin)
    assert.equal((await get(`${admin.url}/livez`)).status, 200)
    assert.equal((await get(`${admin.url}/readyz`)).status, 503)
    ready = true
    assert.equal((await get(`${admin.url}/readyz`)).status, 200)
    await get(`${admin.url}/metrics`)
    await get(`${admin.url}/healthz`)
    assert.deepEqual(seen, ['/livez', '/readyz', '/readyz'])
  })

  it('answers 500 without details when a collect() throws, and tells onError', async () => {
    const registry = createMetricsRegistry()
    new Gauge({
      name: 'demo_broken',
      help: 'throws',
      registers: [registry],
      collect() {
        throw new Error('store down')
      },
    })
    const errors: unknown[] = []
    const admin = await startAdminServer({ port: 0, registry, onError: (e) => errors.push(e) })
    servers.push(admin)
    const r = await get(`${admin.url}/metrics`)
    assert.equal(r.status, 500)
    assert.doesNotMatch(r.body, /store down/)
    assert.equal(errors.length, 1)
  })

  it('refuses a port outside 0-65535 and reports a port in use as the listen error', async () => {
    const registry = createMetricsRegistry()
    await assert.rejects(startAdminServer({ port: 70000, registry }), RangeError)
    await assert.rejects(startAdminServer({ port: -1, registry }), RangeError)
    const first = await startAdminServer({ port: 0, registry })
    servers.push(first)
    await assert.rejects(startAdminServer({ port: first.port, registry }), { code: 'EADDRINUSE' })
  })

  it('keeps two servers in one process apart: the same metric name in two registries', async () => {
    const a = createMetricsRegistry({ labels: { server: 'a' } })
    const b = createMetricsRegistry()
    new Counter({ name: 'same_total', help: 'x', registers: [a] }).inc(1)
    new Counter({ name: 'same_total', help: 'x', registers: [b] }).inc(2)
    assert.match(await a.metrics(), /^same_total\{server="a"\} 1$/m)
    assert.match(await b.metrics(), /^same_total 2$/m)
  })

  it('adds the process metrics only when asked', async () => {
    assert.doesNotMatch(await createMetricsRegistry().metrics(), /process_cpu/)
    const withDefaults = createMetricsRegistry({ defaultMetrics: true, defaultMetricsPrefix: 'demo_' })
    assert.match(await withDefaults.metrics(), /^demo_process_cpu_seconds_total /m)
  })
})

describe('bounded labels', () => {
  it('KnownLabel: a value outside the set becomes other', () => {
    const tool = new KnownLabel(['sr_refund', 'sr_describe'])
    assert.equal(tool.of('sr_refund'), 'sr_refund')
    assert.equal(tool.of('sr_refund '), 'other')
    assert.equal(tool.of('ch_1001'), 'other')
    assert.throws(() => new KnownLabel(['']), RangeError)
  })

  it('CappedLabel: keeps the first values it sees, then answers other', () => {
    const client = new CappedLabel(2)
    assert.equal(client.of('a'), 'a')
    assert.equal(client.of('b'), 'b')
    assert.equal(client.of('c'), 'other')
    assert.equal(client.of('a'), 'a')
    assert.equal(client.of(''), 'other')
  })

  it('BoundChildren: binds each combination once and hands the same child back', () => {
    const registry = createMetricsRegistry()
    const counter = new Counter({ name: 'c_total', help: 'c', labelNames: ['a', 'b'], registers: [registry] })
    let bound = 0
    const children = new BoundChildren(2, (...v) => {
      bound++
      return counter.labels(...v)
    })
    const x = children.get('1', '2')
    assert.equal(children.get('1', '2'), x)
    x.inc()
    children.get('1', '3').inc(2)
    assert.equal(bound, 2)
    assert.throws(() => children.get('1'), RangeError)
  })
})
