// Closers and serialReloader: the two pieces every server's composition shares.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Closers, serialReloader } from '../src/index.js'

test('closers run newest first, each after the one before settled', async () => {
  const closers = new Closers()
  const order: string[] = []
  closers.add('store', () => order.push('store'))
  closers.add('server', async () => {
    await new Promise((resolve) => setImmediate(resolve))
    order.push('server')
  })
  closers.add('admin', () => order.push('admin'))
  await closers.closeAll()
  assert.deepEqual(order, ['admin', 'server', 'store'])
})

test('one that throws does not keep the rest from running; its error comes out after all ran', async () => {
  const closers = new Closers()
  const order: string[] = []
  closers.add('store', () => order.push('store'))
  closers.add('server', () => {
    throw new Error('boom')
  })
  const first = closers.closeAll()
  assert.equal(closers.closeAll(), first, 'closing twice is the same close')
  await assert.rejects(first, /boom/)
  assert.deepEqual(order, ['store'])
  assert.throws(() => closers.add('late', () => {}), /after closeAll/)
})

test('several failures come out together', async () => {
  const closers = new Closers()
  closers.add('a', () => Promise.reject(new Error('a')))
  closers.add('b', () => Promise.reject(new Error('b')))
  await assert.rejects(closers.closeAll(), (error: unknown) => {
    assert.ok(error instanceof AggregateError)
    assert.deepEqual(
      error.errors.map((e: Error) => e.message),
      ['b', 'a'],
    )
    return true
  })
})

test('reloads run one at a time; asks during one are answered by exactly one more', async () => {
  let runs = 0
  let inside = 0
  let most = 0
  let release: () => void = () => {}
  const reload = serialReloader(
    async () => {
      runs++
      inside++
      most = Math.max(most, inside)
      await new Promise<void>((resolve) => {
        release = resolve
      })
      inside--
    },
    () => assert.fail('no failure expected'),
  )
  reload()
  reload()
  reload()
  reload()
  assert.equal(runs, 1)
  release()
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(runs, 2, 'the asks during the first became one more reload')
  release()
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(runs, 2)
  assert.equal(most, 1)
  reload()
  assert.equal(runs, 3, 'once idle, an ask runs at once')
  release()
})

test('a reload that fails is handed over and the next ask still reloads', async () => {
  const failures: unknown[] = []
  let runs = 0
  const reload = serialReloader(
    async () => {
      runs++
      throw new Error('unreadable')
    },
    (error) => failures.push(error),
  )
  reload()
  await new Promise((resolve) => setImmediate(resolve))
  reload()
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(runs, 2)
  assert.equal(failures.length, 2)
})
