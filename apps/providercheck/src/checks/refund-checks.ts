import { formatAmount } from '../amounts.js'
import type { CheckDefinition, KitContext } from '../check-types.js'
import { CheckFailure, UnsuitableFixture } from '../errors.js'
import {
  callOk,
  callRefused,
  expect,
  expectHarmlessDryRun,
  fixture,
  type Obj,
  refundableMinor,
  sameJson,
  unexpected,
} from './call-helpers.js'

const REASON = 'service_issue'

async function freshTransaction(ctx: KitContext): Promise<Obj> {
  return callOk(ctx, 'sr_get_transaction', { transaction_ref: fixture(ctx, 'transaction') })
}

// A partial amount: the seed's 2000 minor units, or less when less is left (at least 1 unit stays).
// A charge that never took money cannot be refunded: the fixture is wrong, not the provider.
function requireSucceeded(ctx: KitContext, tx: Obj): void {
  if (tx.state === 'succeeded') return
  throw new UnsuitableFixture(
    `${fixture(ctx, 'transaction')} is ${String(tx.state)}: the refund checks need a succeeded charge with at least 2 minor units left to refund; pass one as -transaction`,
  )
}

function partialAmount(ctx: KitContext, tx: Obj): { amount_minor: number; currency: string } {
  requireSucceeded(ctx, tx)
  const left = refundableMinor(tx)
  if (left < 2) {
    throw new CheckFailure(
      'fixture_exhausted',
      `${fixture(ctx, 'transaction')} has ${formatAmount(left, (tx.amount as { currency: string }).currency)} left to refund: the refund checks need a succeeded charge with at least 2 minor units left to refund; pass one as -transaction`,
    )
  }
  return { amount_minor: Math.min(2000, left - 1), currency: (tx.amount as { currency: string }).currency }
}

function refundRequest(ctx: KitContext, amount: { amount_minor: number; currency: string }, dryRun: boolean): Obj {
  return { transaction_ref: fixture(ctx, 'transaction'), amount, reason: REASON, dry_run: dryRun }
}

export const refundDryRun: CheckDefinition = {
  id: 'refund_dry_run',
  needs: ['get_transaction'],
  tools: ['sr_get_transaction', 'sr_refund'],
  async run(ctx) {
    const before = await freshTransaction(ctx)
    const amount = partialAmount(ctx, before)
    const value = await callOk(ctx, 'sr_refund', { request: refundRequest(ctx, amount, true) })
    await expectHarmlessDryRun(value, before, () => freshTransaction(ctx), 'transaction')
    if (ctx.transport === 'rest') {
      await expectKeyedDryRunRefused(ctx, amount)
      await expectHarmlessDryRun(value, before, () => freshTransaction(ctx), 'transaction')
      return `would_succeed for ${formatAmount(amount.amount_minor, amount.currency)}; a dry run carrying Idempotency-Key is 400; the transaction is unchanged`
    }
    return `would_succeed for ${formatAmount(amount.amount_minor, amount.currency)}; the transaction is unchanged`
  },
}

// REST (rest-binding.md §2): a dry run carries no key; one sent with the Idempotency-Key header is 400.
async function expectKeyedDryRunRefused(ctx: KitContext, amount: { amount_minor: number; currency: string }) {
  const args = { idempotency_key: ctx.newKey('refund'), request: refundRequest(ctx, amount, true) }
  const out = await ctx.client.callTool('sr_refund', args, ctx.call)
  if (out.kind === 'result')
    throw new CheckFailure('dry_run_key_accepted', 'a dry run sent with an Idempotency-Key header was answered 200')
  if (out.kind !== 'error' || out.status !== 400 || out.code !== 'invalid_request')
    throw unexpected('sr_refund (dry run with a key)', out, 'invalid_request (400)')
}

export const refund: CheckDefinition = {
  id: 'refund',
  changesData: true,
  needs: ['get_transaction', 'mcp_profile'],
  tools: ['sr_get_transaction', 'sr_refund'],
  async run(ctx) {
    const tx = await freshTransaction(ctx)
    const amount = partialAmount(ctx, tx)
    const key = ctx.newKey('refund')
    const args = { idempotency_key: key, request: refundRequest(ctx, amount, false) }
    const out = await ctx.client.callTool('sr_refund', args, ctx.call)
    if (out.kind !== 'result') throw unexpected('sr_refund', out, 'a result')
    const value: Obj = { ...out.value }
    expect(
      value.status === 'succeeded' || value.status === 'pending',
      `the refund answered status ${String(value.status)}`,
    )
    expect(value.idempotency_key === key, 'the refund answered another idempotency_key')
    expect(value.transaction_ref === fixture(ctx, 'transaction'), 'the refund answered another transaction_ref')
    expect(sameJson(value.amount, amount), 'the refund answered another amount')
    ctx.state.refund = { key, args, value, ...(out.body !== undefined && { body: out.body }) }
    if (value.status === 'succeeded') {
      const after = await freshTransaction(ctx)
      const recorded = (after.refunds as Obj[]).some((r) => r.idempotency_key === key)
      if (!recorded) throw new CheckFailure('refund_not_recorded', 'the transaction lists no refund under the key')
    }
    return `${formatAmount(amount.amount_minor, amount.currency)} refunded: ${String(value.status)}`
  },
}

export const refundReplay: CheckDefinition = {
  id: 'refund_replay',
  changesData: true,
  needs: ['refund'],
  tools: ['sr_refund'],
  async run(ctx) {
    const first = ctx.state.refund as NonNullable<typeof ctx.state.refund>
    const out = await ctx.client.callTool('sr_refund', first.args, ctx.call)
    if (out.kind !== 'result') {
      throw new CheckFailure(
        'unexpected_status',
        `the replay answered ${out.kind === 'error' ? `${out.code} (${out.status})` : 'nothing'}`,
      )
    }
    if (!sameJson(out.value, first.value)) {
      // Name the fields that changed, so a person sees what the replay got wrong without diffing two excerpts.
      const replayed: Obj = { ...out.value }
      const fields = [...new Set([...Object.keys(first.value), ...Object.keys(replayed)])]
      const changed = fields.filter((field) => !sameJson(first.value[field], replayed[field]))
      throw new CheckFailure(
        'replay_differs',
        `the same key and arguments answered a different result (${changed.join(', ') || 'its shape'} changed)`,
      )
    }
    // REST: the same status (200 here) and byte-identical body (rest-binding.md §2).
    if (first.body !== undefined && (out.body === undefined || !out.body.equals(first.body)))
      throw new CheckFailure('replay_differs', 'the replay answered the same result in different bytes')
    return ctx.transport === 'rest'
      ? 'the same key and request replay status 200 and byte-identical body'
      : 'the same key and arguments replay the identical result'
  },
}

export const refundConflict: CheckDefinition = {
  id: 'refund_conflict',
  changesData: true,
  needs: ['refund'],
  tools: ['sr_refund'],
  async run(ctx) {
    const first = ctx.state.refund as NonNullable<typeof ctx.state.refund>
    const request = first.args.request as Obj
    const amount = request.amount as { amount_minor: number; currency: string }
    const other = {
      ...amount,
      amount_minor: amount.amount_minor > 1 ? amount.amount_minor - 1 : amount.amount_minor + 1,
    }
    const args = { idempotency_key: first.key, request: { ...request, amount: other } }
    return callRefused(ctx, 'sr_refund', args, 'idempotency_conflict', 'conflict_not_detected')
  },
}

export const refundExceeds: CheckDefinition = {
  id: 'refund_exceeds',
  changesData: true,
  needs: ['get_transaction', 'mcp_profile'],
  tools: ['sr_get_transaction', 'sr_refund'],
  async run(ctx) {
    const tx = await freshTransaction(ctx)
    requireSucceeded(ctx, tx)
    const left = refundableMinor(tx)
    const amount = { amount_minor: left + 1, currency: (tx.amount as { currency: string }).currency }
    const args = { idempotency_key: ctx.newKey('refund'), request: refundRequest(ctx, amount, false) }
    return callRefused(ctx, 'sr_refund', args, 'amount_exceeds_refundable', 'refund_not_refused')
  },
}

export const getOperation: CheckDefinition = {
  id: 'get_operation',
  changesData: true,
  needs: ['refund'],
  tools: ['sr_get_operation'],
  async run(ctx) {
    const first = ctx.state.refund as NonNullable<typeof ctx.state.refund>
    const value = await callOk(ctx, 'sr_get_operation', { idempotency_key: first.key })
    expect(value.idempotency_key === first.key, 'the operation names another idempotency_key')
    if (value.operation !== undefined)
      expect(value.operation === 'refund', `the operation is ${String(value.operation)}, expected refund`)
    if (first.value.status === 'succeeded') {
      expect(value.status === 'succeeded', `the operation is ${String(value.status)}, the refund answered succeeded`)
      if (value.result !== undefined)
        expect(sameJson(value.result, first.value), "the operation's result differs from the refund's answer")
    } else {
      expect(
        ['pending', 'succeeded', 'failed'].includes(String(value.status)),
        `the operation is ${String(value.status)}`,
      )
    }
    return `the refund's key reports ${String(value.status)}`
  },
}
