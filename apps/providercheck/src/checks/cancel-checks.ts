import type { CheckDefinition, KitContext } from '../check-types.js'
import { CheckFailure, UnsuitableFixture } from '../errors.js'
import { callOk, callRefused, expect, expectHarmlessDryRun, fixture, type Obj } from './call-helpers.js'

const REASON = 'forgot_to_cancel'

async function freshSubscription(ctx: KitContext): Promise<Obj> {
  return callOk(ctx, 'sr_get_subscription', { subscription_ref: fixture(ctx, 'subscription') })
}

// Phases a cancel at period end can act on; paused and expired subscriptions are the wrong fixture, not a fault.
const CANCELABLE_PHASES = new Set(['trialing', 'active', 'past_due'])

function requireCancelable(ctx: KitContext, sub: Obj | undefined): void {
  const phase = sub?.phase
  if (sub === undefined || phase === 'canceled' || CANCELABLE_PHASES.has(String(phase))) return
  throw new UnsuitableFixture(
    `${fixture(ctx, 'subscription')} is ${String(phase)}: the cancel checks need an active (or trialing) subscription that is not set to cancel; pass one as -subscription`,
  )
}

function atPeriodEnd(dryRun: boolean): Obj {
  return { at_period_end: true, reason: REASON, dry_run: dryRun }
}

export const cancelDryRun: CheckDefinition = {
  id: 'cancel_dry_run',
  needs: ['get_subscription'],
  tools: ['sr_get_subscription', 'sr_cancel_subscription'],
  async run(ctx) {
    const before = await freshSubscription(ctx)
    requireCancelable(ctx, before)
    if (before.cancel_at_period_end === true || before.phase === 'canceled') {
      throw new CheckFailure(
        'fixture_exhausted',
        `${fixture(ctx, 'subscription')} is already canceled: the cancel checks need an active (or trialing) subscription that is not set to cancel; pass one as -subscription`,
      )
    }
    const value = await callOk(ctx, 'sr_cancel_subscription', {
      subscription_ref: fixture(ctx, 'subscription'),
      request: atPeriodEnd(true),
    })
    await expectHarmlessDryRun(value, before, () => freshSubscription(ctx), 'subscription')
    return 'would_succeed; the subscription is unchanged'
  },
}

export const cancelAtPeriodEnd: CheckDefinition = {
  id: 'cancel_at_period_end',
  changesData: true,
  needs: ['get_subscription', 'mcp_profile'],
  tools: ['sr_get_subscription', 'sr_cancel_subscription'],
  async run(ctx) {
    const sub = ctx.state.subscription
    requireCancelable(ctx, sub)
    if (sub?.cancel_at_period_end === true || sub?.phase === 'canceled') {
      throw new CheckFailure(
        'fixture_exhausted',
        `${fixture(ctx, 'subscription')} is already canceled: the cancel checks need an active (or trialing) subscription that is not set to cancel; pass one as -subscription`,
      )
    }
    const key = ctx.newKey('cancel_subscription')
    const value = await callOk(ctx, 'sr_cancel_subscription', {
      idempotency_key: key,
      subscription_ref: fixture(ctx, 'subscription'),
      request: atPeriodEnd(false),
    })
    expect(
      value.status === 'succeeded' || value.status === 'pending',
      `the cancel answered status ${String(value.status)}`,
    )
    expect(value.idempotency_key === key, 'the cancel answered another idempotency_key')
    expect(value.subscription_ref === fixture(ctx, 'subscription'), 'the cancel answered another subscription_ref')
    expect(value.at_period_end === true, 'the cancel answered at_period_end false')
    if (value.status === 'succeeded') {
      const after = await freshSubscription(ctx)
      if (after.cancel_at_period_end !== true)
        throw new CheckFailure('cancel_not_recorded', 'the subscription does not show cancel_at_period_end')
    }
    return `canceled at period end: ${String(value.status)}, effective ${String(value.effective_at)}`
  },
}

export const cancelAgain: CheckDefinition = {
  id: 'cancel_again',
  changesData: true,
  needs: ['cancel_at_period_end'],
  tools: ['sr_cancel_subscription'],
  async run(ctx) {
    const args = {
      idempotency_key: ctx.newKey('cancel_subscription'),
      subscription_ref: fixture(ctx, 'subscription'),
      request: atPeriodEnd(false),
    }
    return callRefused(ctx, 'sr_cancel_subscription', args, 'already_canceled', 'cancel_not_refused')
  },
}
