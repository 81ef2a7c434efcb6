// Port-level checks a merchant runs against its own BillingPort, in its own test suite: the exactly-once half of
// the contract that the server cannot check for it. The server's key store hides a port that is not idempotent on
// its key, or whose lookup() forgets — until a crash between the port's call and the outcome record. These checks
// call the port directly, the way the server does around such a crash, and observe effects the contract's way:
// the refunds a transaction lists with their idempotency keys.
import { randomUUID } from 'node:crypto'
import type { BillingPort, CancelOutcome, LookupOutcome, RefundCommand, RefundOutcome } from '../billing/port.js'
import { refundableMinor } from '../rules/refusals.js'

/** What the checks need: your port, and data in your billing system they may spend. */
export interface BillingPortSubject {
  port: BillingPort
  /**
   * A charge your port refunds at once (`succeeded`, or `pending` listed among the charge's refunds), with at
   * least 20 minor units left to refund: the checks refund 1 minor unit at a time. A function is called once per
   * check that refunds, so it can hand out a fresh charge each time.
   */
  refundableTransaction: string | (() => Promise<string>)
  /** A fresh active subscription per call; without it the cancellation checks are skipped. */
  activeSubscription?: () => Promise<string>
  /** Calls with one key sent at once by the concurrency check; default 8. */
  concurrency?: number
}

export type PortCheckId =
  | 'refund-same-key-one-effect'
  | 'refund-concurrent-same-key-one-effect'
  | 'refund-lookup-reports-it'
  | 'refund-replay-after-lost-answer'
  | 'lookup-unknown-key'
  | 'refund-over-refundable-refused'
  | 'cancel-same-key-one-outcome'
  | 'cancel-lookup-reports-it'

export interface PortCheck {
  readonly id: PortCheckId
  /** What must hold, in one sentence. */
  readonly title: string
}

export interface PortCheckResult extends PortCheck {
  readonly verdict: 'pass' | 'fail' | 'skip'
  /** Why it failed or was skipped: the port's observable behaviour, never a secret. */
  readonly reason?: string
}

/** The checks, in the order they run. */
export const PORT_CHECKS: readonly PortCheck[] = [
  { id: 'refund-same-key-one-effect', title: 'refund() twice with one key makes one refund and answers the same' },
  {
    id: 'refund-concurrent-same-key-one-effect',
    title: 'refund() called at once many times with one key makes one refund and answers the same to all',
  },
  { id: 'refund-lookup-reports-it', title: 'lookup(key) after a refund reports that refund, with the same outcome' },
  {
    id: 'refund-replay-after-lost-answer',
    title: 'after a refund whose answer was lost, lookup(key) reports it and a replay adds no second refund',
  },
  { id: 'lookup-unknown-key', title: 'lookup(key) of a key never used answers undefined' },
  {
    id: 'refund-over-refundable-refused',
    title: 'a refund over the refundable amount is refused with amount_exceeds_refundable and changes nothing',
  },
  { id: 'cancel-same-key-one-outcome', title: 'cancelSubscription() twice with one key answers the same' },
  { id: 'cancel-lookup-reports-it', title: 'lookup(key) after a cancellation reports it, with the same outcome' },
]

/** A check's failure: its message is the reason shown to the merchant. */
class CheckFailed extends Error {}

function expect(condition: boolean, reason: string): asserts condition {
  if (!condition) throw new CheckFailed(reason)
}

/** A fresh key shaped as the platform makes them: `<ticket>:ticket:<id>:<operation>:<id>`. */
export function platformKey(operation: 'refund' | 'cancel'): string {
  return `${randomUUID()}:ticket:${randomUUID()}:${operation}:${randomUUID()}`
}

const show = (value: unknown): string => (value === undefined ? 'undefined' : JSON.stringify(value))

/** The parts of an outcome that must not differ between a call, its replay and lookup(). */
function essence(o: RefundOutcome | CancelOutcome | LookupOutcome): Record<string, unknown> {
  const { operation: _operation, ...rest } = o as LookupOutcome
  return rest
}

async function transactionOf(subject: BillingPortSubject): Promise<string> {
  const t = subject.refundableTransaction
  return typeof t === 'string' ? t : await t()
}

/** How many refunds the transaction lists under this key (the contract's refund records carry the key). */
async function refundsUnder(port: BillingPort, transactionRef: string, key: string): Promise<number> {
  const transaction = await port.getTransaction(transactionRef)
  expect(transaction !== undefined, `getTransaction('${transactionRef}') answered undefined for the test charge`)
  const refunds = (transaction.refunds as Array<{ idempotency_key?: unknown }> | undefined) ?? []
  return refunds.filter((r) => r.idempotency_key === key).length
}

async function oneUnitRefund(port: BillingPort, transactionRef: string): Promise<RefundCommand> {
  const transaction = await port.getTransaction(transactionRef)
  expect(transaction !== undefined, `getTransaction('${transactionRef}') answered undefined for the test charge`)
  const currency = (transaction.amount as { currency: string }).currency
  expect(refundableMinor(transaction) >= 1, `the test charge '${transactionRef}' has nothing left to refund`)
  return { transaction_ref: transactionRef, amount: { amount_minor: 1, currency }, reason: 'customer_request' }
}

function expectRefundDone(
  outcome: RefundOutcome,
  what: string,
): asserts outcome is RefundOutcome & {
  refund_ref: string
} {
  expect(
    outcome.status === 'succeeded' || outcome.status === 'pending',
    `${what} answered ${show(outcome)}; the test charge must be refundable (succeeded or pending)`,
  )
}

const checks: Record<PortCheckId, (subject: BillingPortSubject) => Promise<string | undefined>> = {
  async 'refund-same-key-one-effect'(subject) {
    const { port } = subject
    const ref = await transactionOf(subject)
    const command = await oneUnitRefund(port, ref)
    const key = platformKey('refund')
    const first = await port.refund(key, command)
    expectRefundDone(first, 'the first refund()')
    const second = await port.refund(key, command)
    expect(
      show(essence(second)) === show(essence(first)),
      `refund() with the same key answered ${show(second)} after ${show(first)}: a replay must answer the first outcome`,
    )
    const effects = await refundsUnder(port, ref, key)
    expect(
      effects === 1,
      `the charge lists ${effects} refunds under one key after two calls: the port is not idempotent on its key`,
    )
    return undefined
  },

  async 'refund-concurrent-same-key-one-effect'(subject) {
    const { port } = subject
    const ref = await transactionOf(subject)
    const command = await oneUnitRefund(port, ref)
    const key = platformKey('refund')
    const n = subject.concurrency ?? 8
    const answers = await Promise.all(Array.from({ length: n }, () => port.refund(key, command)))
    for (const a of answers) expectRefundDone(a, 'a concurrent refund()')
    const distinct = new Set(answers.map((a) => show(essence(a))))
    expect(distinct.size === 1, `${n} concurrent calls with one key got ${distinct.size} different answers`)
    const effects = await refundsUnder(port, ref, key)
    expect(
      effects === 1,
      `${n} concurrent calls with one key left ${effects} refunds: the key must be claimed atomically in your billing system`,
    )
    return undefined
  },

  async 'refund-lookup-reports-it'(subject) {
    const { port } = subject
    const ref = await transactionOf(subject)
    const key = platformKey('refund')
    const done = await port.refund(key, await oneUnitRefund(port, ref))
    expectRefundDone(done, 'refund()')
    const found = await port.lookup(key)
    expect(found !== undefined, 'lookup(key) answered undefined right after a refund with that key')
    expect(found.operation === 'refund', `lookup(key) reports operation '${found.operation}' for a refund`)
    // A pending refund may have settled in between; the refund it names must be the same.
    const same =
      show(essence(found)) === show(essence(done)) ||
      (done.status === 'pending' && 'refund_ref' in found && found.refund_ref === done.refund_ref)
    expect(same, `lookup(key) reports ${show(found)}, but refund() answered ${show(done)}`)
    return undefined
  },

  async 'refund-replay-after-lost-answer'(subject) {
    const { port } = subject
    const ref = await transactionOf(subject)
    const command = await oneUnitRefund(port, ref)
    const key = platformKey('refund')
    // The server called the port and crashed before recording the outcome: the answer is lost.
    await port.refund(key, command)
    // After a restart the server asks lookup(key) first, and replays only when lookup knows nothing.
    const found = await port.lookup(key)
    expect(
      found !== undefined,
      'lookup(key) answered undefined for a refund the port made: after a crash the server would refund again',
    )
    const replay = await port.refund(key, command)
    expectRefundDone(replay, 'the replayed refund()')
    expect(
      'refund_ref' in found && found.refund_ref === replay.refund_ref,
      `lookup(key) names refund ${show('refund_ref' in found ? found.refund_ref : undefined)}, the replay ${show(replay.refund_ref)}`,
    )
    const effects = await refundsUnder(port, ref, key)
    expect(effects === 1, `the charge lists ${effects} refunds under the key after the replay`)
    return undefined
  },

  async 'lookup-unknown-key'({ port }) {
    const found = await port.lookup(platformKey('refund'))
    expect(found === undefined, `lookup(key) of a key never used answered ${show(found)}`)
    return undefined
  },

  async 'refund-over-refundable-refused'(subject) {
    const { port } = subject
    const ref = await transactionOf(subject)
    const transaction = await port.getTransaction(ref)
    expect(transaction !== undefined, `getTransaction('${ref}') answered undefined for the test charge`)
    const before = refundableMinor(transaction)
    const currency = (transaction.amount as { currency: string }).currency
    const key = platformKey('refund')
    const over = { transaction_ref: ref, amount: { amount_minor: before + 1, currency }, reason: 'customer_request' }
    const answer = await port.refund(key, over)
    expect(
      answer.status === 'refused' && answer.code === 'amount_exceeds_refundable',
      `a refund of ${before + 1} minor units with ${before} left answered ${show(answer)}`,
    )
    const after = await port.getTransaction(ref)
    expect(after !== undefined && refundableMinor(after) === before, 'the refused refund changed the refundable amount')
    expect((await refundsUnder(port, ref, key)) === 0, 'the refused refund is listed among the charge’s refunds')
    return undefined
  },

  async 'cancel-same-key-one-outcome'({ port, activeSubscription }) {
    if (activeSubscription === undefined) return 'no activeSubscription in the subject'
    const command = { subscription_ref: await activeSubscription(), at_period_end: false, reason: 'customer_request' }
    const key = platformKey('cancel')
    const first = await port.cancelSubscription(key, command)
    expect(
      first.status === 'succeeded' || first.status === 'pending',
      `the first cancelSubscription() answered ${show(first)}; activeSubscription() must give an active subscription`,
    )
    const second = await port.cancelSubscription(key, command)
    expect(
      show(essence(second)) === show(essence(first)),
      `cancelSubscription() with the same key answered ${show(second)} after ${show(first)}: a replay must answer the first outcome`,
    )
    return undefined
  },

  async 'cancel-lookup-reports-it'({ port, activeSubscription }) {
    if (activeSubscription === undefined) return 'no activeSubscription in the subject'
    const command = { subscription_ref: await activeSubscription(), at_period_end: false, reason: 'customer_request' }
    const key = platformKey('cancel')
    const done = await port.cancelSubscription(key, command)
    expect(done.status !== 'not_found', 'cancelSubscription() answered not_found for activeSubscription()')
    const found = await port.lookup(key)
    expect(found !== undefined, 'lookup(key) answered undefined right after a cancellation with that key')
    expect(
      found.operation === 'cancel_subscription',
      `lookup(key) reports operation '${found.operation}' for a cancellation`,
    )
    expect(
      show(essence(found)) === show(essence(done)) || done.status === 'pending',
      `lookup(key) reports ${show(found)}, but cancelSubscription() answered ${show(done)}`,
    )
    return undefined
  },
}

/** Runs one check; a port that throws fails the check with the error's class and message. */
export async function runPortCheck(id: PortCheckId, subject: BillingPortSubject): Promise<PortCheckResult> {
  const check = PORT_CHECKS.find((c) => c.id === id)
  if (check === undefined) throw new RangeError(`no port check named '${id}'`)
  try {
    const skipped = await checks[id](subject)
    return skipped === undefined ? { ...check, verdict: 'pass' } : { ...check, verdict: 'skip', reason: skipped }
  } catch (error) {
    if (error instanceof CheckFailed) return { ...check, verdict: 'fail', reason: error.message }
    const e = error as Error
    return {
      ...check,
      verdict: 'fail',
      reason: `the port threw ${e?.name ?? 'a value'}: ${e?.message ?? String(error)}`,
    }
  }
}

/** Runs every check in order; one failing check does not stop the others. */
export async function checkBillingPort(subject: BillingPortSubject): Promise<PortCheckResult[]> {
  const results: PortCheckResult[] = []
  for (const { id } of PORT_CHECKS) results.push(await runPortCheck(id, subject))
  return results
}
