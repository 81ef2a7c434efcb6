// The merchant's testing kit (@tollgate/provider/testing): the demo ledger and a correct sample port pass every
// check; a sample port broken in one property at a time fails the check named for that property.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { Describe, Transaction } from '@tollgate/contract'
import type {
  BillingPort,
  CancelCommand,
  CancelOutcome,
  LookupOutcome,
  RefundCommand,
  RefundOutcome,
} from '../src/index.js'
import { DemoLedger, demoLedgerStore, openSqliteStore } from '../src/index.js'
import {
  type BillingPortSubject,
  checkBillingPort,
  PORT_CHECKS,
  type PortCheckId,
  runPortCheck,
} from '../src/testing/index.js'
import { SAMPLE_DESCRIBE, sampleCharge } from './fixtures/sample-contract-objects.js'

type Flaw =
  | 'not-idempotent'
  | 'claims-key-after-an-await'
  | 'lookup-forgets'
  | 'lookup-invents'
  | 'lookup-other-status'
  | 'no-refundable-check'
  | 'cancel-not-idempotent'

const AT = '2026-12-03T10:00:00Z'

/**
 * A merchant's billing system in miniature, with records of its own (not the demo ledger): a correct BillingPort
 * unless a flaw is named. Each flaw breaks one property the kit checks.
 */
class SampleBilling implements BillingPort {
  readonly #flaw: Flaw | undefined
  readonly #charge = { ref: 'PAY-77001', amount: 10_000, currency: 'USD' }
  /** Refund records: one per effect, with the key that asked for it. */
  readonly #refunds: Array<{ key: string; ref: string; amount: number }> = []
  readonly #cancels = new Map<string, string>()
  readonly #subscriptions = new Map<string, 'active' | 'canceled'>()
  #serial = 0

  constructor(flaw?: Flaw) {
    this.#flaw = flaw
  }

  openSubscription(): string {
    const ref = `SUB-${++this.#serial}`
    this.#subscriptions.set(ref, 'active')
    return ref
  }

  #left(): number {
    return this.#charge.amount - this.#refunds.reduce((sum, r) => sum + r.amount, 0)
  }

  describe = async (): Promise<Describe> => SAMPLE_DESCRIBE
  findCustomers = async () => []
  getCustomer = async () => undefined
  listTransactions = async () => undefined
  getSubscription = async () => undefined

  async getTransaction(ref: string): Promise<Transaction | undefined> {
    if (ref !== this.#charge.ref) return undefined
    return {
      ...sampleCharge(ref),
      amount: { amount_minor: this.#charge.amount, currency: this.#charge.currency },
      refunds: this.#refunds.map((r) => ({
        at: AT,
        amount: { amount_minor: r.amount, currency: this.#charge.currency },
        idempotency_key: r.key,
        reversed_at: null,
      })),
    }
  }

  async refund(key: string, command: RefundCommand): Promise<RefundOutcome> {
    const known = this.#refunds.find((r) => r.key === key)
    if (known !== undefined && this.#flaw !== 'not-idempotent') {
      return { status: 'succeeded', refund_ref: known.ref, processed_at: AT }
    }
    if (command.transaction_ref !== this.#charge.ref) return { status: 'not_found' }
    if (this.#flaw !== 'no-refundable-check' && command.amount.amount_minor > this.#left()) {
      return { status: 'refused', code: 'amount_exceeds_refundable', message: `only ${this.#left()} left` }
    }
    // The processor's call, before the key is recorded: a window for a second call with the same key.
    if (this.#flaw === 'claims-key-after-an-await') await sleep(5)
    const record = { key, ref: `RF-${++this.#serial}`, amount: command.amount.amount_minor }
    this.#refunds.push(record)
    return { status: 'succeeded', refund_ref: record.ref, processed_at: AT }
  }

  async cancelSubscription(key: string, command: CancelCommand): Promise<CancelOutcome> {
    const known = this.#cancels.get(key)
    if (known !== undefined && this.#flaw !== 'cancel-not-idempotent')
      return { status: 'succeeded', effective_at: known }
    if (this.#subscriptions.get(command.subscription_ref) !== 'active') {
      return { status: 'refused', code: 'already_canceled', message: 'the subscription is already canceled' }
    }
    this.#subscriptions.set(command.subscription_ref, 'canceled')
    this.#cancels.set(key, AT)
    return { status: 'succeeded', effective_at: AT }
  }

  async lookup(key: string): Promise<LookupOutcome | undefined> {
    if (this.#flaw === 'lookup-forgets') return undefined
    const r = this.#refunds.find((x) => x.key === key)
    if (r !== undefined) {
      return this.#flaw === 'lookup-other-status'
        ? { operation: 'refund', status: 'pending', refund_ref: r.ref }
        : { operation: 'refund', status: 'succeeded', refund_ref: r.ref, processed_at: AT }
    }
    const c = this.#cancels.get(key)
    if (c !== undefined) return { operation: 'cancel_subscription', status: 'succeeded', effective_at: c }
    if (this.#flaw === 'lookup-invents') return { operation: 'refund', status: 'pending', refund_ref: 'RF-0' }
    return undefined
  }
}

function sampleSubject(flaw?: Flaw): BillingPortSubject {
  const port = new SampleBilling(flaw)
  return { port, refundableTransaction: 'PAY-77001', activeSubscription: async () => port.openSubscription() }
}

const failed = async (subject: BillingPortSubject) =>
  (await checkBillingPort(subject)).filter((r) => r.verdict === 'fail').map((r) => r.id)

test('a correct sample port passes every check', async () => {
  const results = await checkBillingPort(sampleSubject())
  assert.deepEqual(
    results.map((r) => [r.id, r.verdict, r.reason]),
    PORT_CHECKS.map((c) => [c.id, 'pass', undefined]),
  )
})

const expectedFailures: Record<Flaw, PortCheckId[]> = {
  'not-idempotent': [
    'refund-same-key-one-effect',
    'refund-concurrent-same-key-one-effect',
    'refund-replay-after-lost-answer',
  ],
  'claims-key-after-an-await': ['refund-concurrent-same-key-one-effect'],
  'lookup-forgets': ['refund-lookup-reports-it', 'refund-replay-after-lost-answer', 'cancel-lookup-reports-it'],
  'lookup-invents': ['lookup-unknown-key'],
  'lookup-other-status': ['refund-lookup-reports-it'],
  'no-refundable-check': ['refund-over-refundable-refused'],
  'cancel-not-idempotent': ['cancel-same-key-one-outcome'],
}

for (const [flaw, checks] of Object.entries(expectedFailures) as Array<[Flaw, PortCheckId[]]>) {
  test(`a port with the flaw '${flaw}' fails exactly ${checks.join(', ')}`, async () => {
    assert.deepEqual(await failed(sampleSubject(flaw)), checks)
  })
}

test('a failing check says what the port did, and the always-undefined lookup is named as a crash hazard', async () => {
  const r = await runPortCheck('refund-replay-after-lost-answer', sampleSubject('lookup-forgets'))
  assert.equal(r.verdict, 'fail')
  assert.match(r.reason ?? '', /lookup\(key\) answered undefined for a refund the port made: after a crash/)
  const twice = await runPortCheck('refund-same-key-one-effect', sampleSubject('not-idempotent'))
  assert.match(twice.reason ?? '', /answered .*RF-2.* after .*RF-1/)
})

test('a port that throws fails the check with the error class and message', async () => {
  const port = new SampleBilling()
  port.lookup = async () => {
    throw new TypeError('billing database is read-only')
  }
  const r = await runPortCheck('lookup-unknown-key', { port, refundableTransaction: 'PAY-77001' })
  assert.deepEqual([r.verdict, r.reason], ['fail', 'the port threw TypeError: billing database is read-only'])
})

test('the cancellation checks are skipped, with the reason, without activeSubscription', async () => {
  const r = await runPortCheck('cancel-same-key-one-outcome', {
    port: new SampleBilling(),
    refundableTransaction: 'PAY-77001',
  })
  assert.deepEqual([r.verdict, r.reason], ['skip', 'no activeSubscription in the subject'])
})

test('the demo ledger passes every check, each on fresh data', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-port-checks-'))
  after(() => rmSync(dir, { recursive: true, force: true }))
  for (const [i, check] of PORT_CHECKS.entries()) {
    const store = openSqliteStore(join(dir, `ledger-${i}.sqlite`))
    try {
      const ledger = new DemoLedger(demoLedgerStore(store))
      await ledger.seed()
      // The demo data has one active subscription; each check gets a fresh ledger.
      const result = await runPortCheck(check.id, {
        port: ledger,
        refundableTransaction: 'ch_9001',
        activeSubscription: async () => 'sub_1001',
      })
      assert.deepEqual([check.id, result.verdict, result.reason], [check.id, 'pass', undefined])
    } finally {
      await store.close()
    }
  }
})

// Without NODE_TEST_CONTEXT the child reports in TAP on its stdout instead of to this runner.
const { NODE_TEST_CONTEXT: _context, ...childEnv } = process.env

/** Runs the node:test helper's fixture in a node --test child of its own; answers its exit code and TAP output. */
function runHelperFixture(flaw: string | undefined): { status: number | null; out: string } {
  const file = fileURLToPath(new URL('./fixtures/port-checks-node-test.ts', import.meta.url))
  const r = spawnSync(
    process.execPath,
    ['--conditions=@tollgate/source', '--import', 'tsx', '--test', '--test-reporter=tap', file],
    { encoding: 'utf8', env: { ...childEnv, PORT_FLAW: flaw ?? '' } },
  )
  return { status: r.status, out: r.stdout }
}

test('the node:test helper passes a correct port, one test per check, cancellation skipped with the reason', () => {
  const { status, out } = runHelperFixture(undefined)
  assert.equal(status, 0, out)
  for (const check of PORT_CHECKS) assert.match(out, new RegExp(`ok \\d+ - ${escapeRegExp(check.title)}`))
  assert.match(out, /# SKIP no activeSubscription in the subject/)
  assert.doesNotMatch(out, /after\(\) was not called/)
})

test('the node:test helper fails the named checks of a port whose lookup() forgets', () => {
  const { status, out } = runHelperFixture('lookup-forgets')
  assert.equal(status, 1)
  assert.match(out, /not ok \d+ - lookup\(key\) after a refund reports that refund/)
  assert.match(out, /refund-replay-after-lost-answer: lookup\(key\) answered undefined for a refund the port made/)
  assert.match(out, /# fail 2/)
})

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
