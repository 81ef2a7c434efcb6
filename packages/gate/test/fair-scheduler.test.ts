// The fair scheduler's rule, without clocks: who is started, who waits, and in which order waiting calls start.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { CallerQueueFull, FairScheduler } from '../src/index.ts'

/** A unit of work that records when it started and finishes only when released. */
function held(log: string[], name: string) {
  let release: () => void = () => {}
  const done = new Promise<void>((r) => {
    release = r
  })
  return {
    work: async () => {
      log.push(name)
      await done
      return name
    },
    release: () => release(),
  }
}

const settle = () => new Promise<void>((r) => setImmediate(r))

describe('FairScheduler', () => {
  test("a greedy caller's call past its limit waits, while a quiet caller's call starts at once", async () => {
    const scheduler = new FairScheduler({ perCaller: 1, total: 4 })
    const log: string[] = []
    const g1 = held(log, 'g1')
    const g2 = held(log, 'g2')
    const q1 = held(log, 'q1')
    const p1 = scheduler.run('greedy', g1.work)
    const p2 = scheduler.run('greedy', g2.work)
    const p3 = scheduler.run('quiet', q1.work)
    await settle()
    assert.deepEqual(log, ['g1', 'q1'])
    assert.equal(scheduler.waiting, 1)
    q1.release()
    assert.equal(await p3, 'q1')
    assert.deepEqual(log, ['g1', 'q1'], 'the quiet call finishing does not start the greedy one early')
    g1.release()
    assert.equal(await p1, 'g1')
    await settle()
    assert.deepEqual(log, ['g1', 'q1', 'g2'])
    g2.release()
    assert.equal(await p2, 'g2')
    assert.equal(scheduler.inService, 0)
  })

  test('when the server is full, freed slots go round robin between callers, not to the longest queue', async () => {
    const scheduler = new FairScheduler({ perCaller: 2, total: 1 })
    const log: string[] = []
    const first = held(log, 'g0')
    const running = scheduler.run('greedy', first.work)
    const queued = [held(log, 'g1'), held(log, 'g2'), held(log, 'g3')].map((h) => ({
      h,
      p: scheduler.run('greedy', h.work),
    }))
    const quiet = held(log, 'q1')
    const quietDone = scheduler.run('quiet', quiet.work)
    await settle()
    assert.deepEqual(log, ['g0'])
    first.release()
    await running
    await settle()
    // greedy was just served; the quiet caller, waiting behind three greedy calls, goes next.
    assert.deepEqual(log, ['g0', 'q1'])
    quiet.release()
    await quietDone
    for (const { h, p } of queued) {
      await settle()
      h.release()
      await p
    }
    assert.deepEqual(log, ['g0', 'q1', 'g1', 'g2', 'g3'])
  })

  test('a rejected or throwing call frees its slot and rejects as the work did', async () => {
    const scheduler = new FairScheduler({ perCaller: 1, total: 1 })
    await assert.rejects(
      scheduler.run('a', async () => {
        throw new Error('boom')
      }),
      /boom/,
    )
    await assert.rejects(
      scheduler.run('a', () => {
        throw new Error('sync')
      }),
      /sync/,
    )
    assert.equal(await scheduler.run('a', async () => 7), 7)
    assert.equal(scheduler.inService, 0)
  })

  test("a caller's waiting calls are bounded: the excess is refused at once, unrun; other callers are not", async () => {
    const scheduler = new FairScheduler({ perCaller: 1, total: 4, maxWaitingPerCaller: 2 })
    assert.equal(new FairScheduler().maxWaitingPerCaller, 32, 'the documented default')
    const log: string[] = []
    const greedy = ['g1', 'g2', 'g3'].map((n) => held(log, n))
    const running = greedy.map((h) => scheduler.run('greedy', h.work))
    await settle()
    assert.equal(scheduler.waiting, 2)
    let ranTooMany = false
    await assert.rejects(
      scheduler.run('greedy', async () => {
        ranTooMany = true
      }),
      (error: unknown) =>
        error instanceof CallerQueueFull &&
        error.code === 'ERR_GATE_QUEUE_FULL' &&
        error.limit === 2 &&
        error.message === 'this caller already has 2 calls waiting; retry once some are answered',
    )
    assert.equal(ranTooMany, false)
    assert.equal(scheduler.waiting, 2, 'the refused call took no place in the queue')
    // The quiet caller's own queue is empty: its call starts, and a second one may wait.
    const quiet = [held(log, 'q1'), held(log, 'q2')]
    const quietRuns = quiet.map((h) => scheduler.run('quiet', h.work))
    await settle()
    assert.deepEqual(log, ['g1', 'q1'])
    // Once a greedy call is answered and a waiting one starts, there is room again.
    greedy[0]?.release()
    await running[0]
    await settle()
    assert.deepEqual(log, ['g1', 'q1', 'g2'])
    const g4 = held(log, 'g4')
    const p4 = scheduler.run('greedy', g4.work)
    for (const h of [...greedy.slice(1), ...quiet, g4]) {
      h.release()
      await settle()
    }
    assert.deepEqual(await Promise.all([...running, ...quietRuns, p4]), ['g1', 'g2', 'g3', 'q1', 'q2', 'g4'])
    assert.equal(scheduler.inService + scheduler.waiting, 0)
  })

  test('options are checked by name', () => {
    assert.throws(() => new FairScheduler({ perCaller: 0 }), { name: 'RangeError', message: /perCaller/ })
    assert.throws(() => new FairScheduler({ total: 1.5 }), { name: 'RangeError', message: /total/ })
    assert.throws(() => new FairScheduler({ maxWaitingPerCaller: 0 }), {
      name: 'RangeError',
      message: /maxWaitingPerCaller/,
    })
  })
})
