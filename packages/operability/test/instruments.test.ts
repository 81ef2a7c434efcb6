import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Counter, Histogram } from 'prom-client'
import { createMetricsRegistry, FastCounter, FastHistogram } from '../src/index.js'

const BUCKETS = [0.001, 0.01, 0.1, 1]
const OBSERVED = [0.0005, 0.001, 0.002, 0.05, 0.5, 3, 0.01, 0.0099]

describe('FastCounter and FastHistogram', () => {
  it("expose exactly what prom-client's own Counter and Histogram expose for the same updates", async () => {
    const mine = createMetricsRegistry({ labels: { replica: 'a' } })
    const theirs = createMetricsRegistry({ labels: { replica: 'a' } })
    const fc = new FastCounter({
      name: 'x_total',
      help: 'x "quoted" \\ help',
      labelNames: ['tool', 'outcome'],
      registers: [mine],
    })
    const pc = new Counter({
      name: 'x_total',
      help: 'x "quoted" \\ help',
      labelNames: ['tool', 'outcome'],
      registers: [theirs],
    })
    const fh = new FastHistogram({
      name: 'y_seconds',
      help: 'y',
      labelNames: ['tool'],
      buckets: BUCKETS,
      registers: [mine],
    })
    const ph = new Histogram({
      name: 'y_seconds',
      help: 'y',
      labelNames: ['tool'],
      buckets: BUCKETS,
      registers: [theirs],
    })
    const refundOk = fc.child('sr_refund', 'ok')
    refundOk.inc()
    refundOk.inc(2)
    fc.child('sr_refund', 'a "b"\n\\').inc()
    pc.labels('sr_refund', 'ok').inc(3)
    pc.labels('sr_refund', 'a "b"\n\\').inc()
    const read = fh.child('sr_get_transaction')
    for (const v of OBSERVED) {
      read.observe(v)
      ph.labels('sr_get_transaction').observe(v)
    }
    fh.child('sr_refund').observe(0.2)
    ph.labels('sr_refund').observe(0.2)
    assert.equal(await mine.metrics(), await theirs.metrics())
  })

  it('hand back the same child for the same values, and check names, labels and buckets', () => {
    const r = createMetricsRegistry()
    const c = new FastCounter({ name: 'z_total', help: 'z', labelNames: ['a'], registers: [r] })
    assert.equal(c.child('1'), c.child('1'))
    assert.throws(() => c.child('1', '2'), RangeError)
    assert.throws(() => new FastCounter({ name: 'bad-name', help: 'z', labelNames: [] }), RangeError)
    assert.throws(() => new FastCounter({ name: 'ok_total', help: 'z', labelNames: ['le'] }), RangeError)
    assert.throws(() => new FastHistogram({ name: 'h', help: 'h', labelNames: [], buckets: [1, 1] }), RangeError)
    assert.throws(() => new FastHistogram({ name: 'h', help: 'h', labelNames: [], buckets: [] }), RangeError)
  })
})
