import { contractValidator } from '@tollgate/contract'
import { type KeyFieldFault, type SignatureMode, UnexpectedHttpStatus } from '@tollgate/platform-client'
import { parsePlain } from '@tollgate/strict-json'
import type { CheckDefinition, KitContext } from '../check-types.js'
import { CheckFailure } from '../errors.js'
import { callOk, fixture, type Obj, sameJson } from './call-helpers.js'

const STALE_SECONDS = 600
/**
 * The transaction a refused read names when a live run was given no -transaction: a correct provider refuses the
 * signature before it reads anything, so the reference never matters; a provider that does not answers normally
 * (a result or not_found), and either fails the check.
 */
const PROBE_TRANSACTION = 'ch_providercheck_signature_probe'

async function expect401(
  ctx: KitContext,
  signatureFor: (phase: string) => SignatureMode,
  whenAccepted: string,
  phases: string[],
): Promise<string> {
  try {
    const transaction = ctx.fixtures.transaction ?? PROBE_TRANSACTION
    await ctx.client.attempt('sr_get_transaction', { transaction_ref: transaction }, ctx.call, {
      signatureFor,
    })
  } catch (error) {
    if (!(error instanceof UnexpectedHttpStatus)) throw error
    if (!phases.includes(error.phase)) {
      throw new CheckFailure('unexpected_status', `the correctly signed ${error.phase} was answered ${error.status}`)
    }
    if (error.status !== 401)
      throw new CheckFailure('unexpected_status', `${error.phase} answered ${error.status}, expected 401`)
    judgeEnvelope(error.body)
    const what = error.phase === 'rest' ? 'the REST request' : error.phase
    return `${what} answered 401 with the credentials_rejected envelope`
  }
  throw new CheckFailure(whenAccepted, 'the call was answered normally')
}

// The 401 body is the REST error envelope: strict JSON, the contract's error.json, credentials_rejected.
function judgeEnvelope(body: Buffer): void {
  let value: unknown
  try {
    value = parsePlain(body, { maxBytes: 64 * 1024, maxDepth: 16, integersOnly: true })
  } catch {
    throw new CheckFailure('invalid_error_envelope', 'the 401 body is not strict JSON')
  }
  const verdict = contractValidator('error.json')(value)
  if (!verdict.valid)
    throw new CheckFailure('invalid_error_envelope', `the 401 body is not the error envelope: ${verdict.errors}`)
  const error = (value as { error: { code: string; retryable: boolean } }).error
  if (error.code !== 'credentials_rejected' || error.retryable !== false) {
    throw new CheckFailure(
      'invalid_error_envelope',
      `the 401 body says ${error.code}, expected credentials_rejected, not retryable`,
    )
  }
}

export const signatureToolCall: CheckDefinition = {
  id: 'signature_tool_call',
  needs: ['discovery'],
  run: (ctx) =>
    expect401(
      ctx,
      (phase) => (phase === 'tools/call' || phase === 'rest' ? 'broken' : 'valid'),
      'signature_not_verified',
      ['tools/call', 'rest'],
    ),
}

export const signatureStale: CheckDefinition = {
  id: 'signature_stale',
  needs: ['discovery'],
  run: (ctx) =>
    expect401(ctx, () => ({ staleSeconds: STALE_SECONDS }), 'stale_accepted', ['discover', 'initialize', 'rest']),
}

// The three ways a REST refund's key can come loose from its signature (rest-binding.md §3), in the issue's order.
const KEY_FIELD_PARTS: readonly [string, KeyFieldFault, string][] = [
  ['a', 'header_differs', 'signed over one key, sent with another Idempotency-Key'],
  ['b', 'signed_empty', 'signed with an empty key field (the MCP form) while the header is sent'],
  ['c', 'header_removed', 'signed over the key, sent without the header'],
]

export const signatureIdempotencyKey: CheckDefinition = {
  id: 'signature_idempotency_key',
  needs: ['get_transaction', 'mcp_profile'],
  transports: ['rest'],
  tools: ['sr_get_transaction', 'sr_refund', 'sr_get_operation'],
  async run(ctx) {
    const transaction = fixture(ctx, 'transaction')
    const read = () => callOk(ctx, 'sr_get_transaction', { transaction_ref: transaction })
    const before = await read()
    const amount = (before.amount as { currency: string }).currency
    const keys: string[] = []
    for (const [part, fault, what] of KEY_FIELD_PARTS) {
      const key = ctx.newKey('refund')
      keys.push(key)
      // One minor unit: if a broken provider accepts it, the damage to the fixture is the smallest possible. A live
      // run sends a dry run instead, so even a provider that ignores the key field changes nothing: every answer
      // but 401 (a would_succeed, or the 400 of a dry run carrying a key) still fails the check.
      const request = {
        transaction_ref: transaction,
        amount: { amount_minor: 1, currency: amount },
        reason: 'service_issue',
        dry_run: ctx.live === true,
      }
      try {
        const out = await ctx.client.attempt('sr_refund', { idempotency_key: key, request }, ctx.call, {
          keyFieldFault: fault,
        })
        throw new CheckFailure(
          'signature_ignores_key',
          `part (${part}) ${what}: answered ${out.kind === 'result' ? '200 with a result' : `${out.status} ${out.code}`}, expected 401`,
        )
      } catch (error) {
        if (!(error instanceof UnexpectedHttpStatus)) throw error
        if (error.status !== 401)
          throw new CheckFailure('unexpected_status', `part (${part}) ${what}: answered ${error.status}, expected 401`)
        judgeEnvelope(error.body)
      }
    }
    if (!sameJson(before, await read()))
      throw new CheckFailure('refused_call_changed_data', 'the transaction changed after refused refunds')
    for (const key of keys) {
      const op: Obj = await callOk(ctx, 'sr_get_operation', { idempotency_key: key })
      if (op.status !== 'unknown')
        throw new CheckFailure('refused_call_changed_data', `a refused refund's key reports ${String(op.status)}`)
    }
    return 'a changed, an empty-signed and a removed Idempotency-Key are each 401 with the envelope; nothing changed'
  },
}
