import { contractValidator } from '@tollgate/contract'
import { type SignatureMode, UnexpectedHttpStatus } from '@tollgate/platform-client'
import { parsePlain } from '@tollgate/strict-json'
import type { CheckDefinition, KitContext } from '../check-types.js'
import { CheckFailure } from '../errors.js'

const STALE_SECONDS = 600

async function expect401(
  ctx: KitContext,
  signatureFor: (phase: string) => SignatureMode,
  whenAccepted: string,
  phases: string[],
): Promise<string> {
  try {
    await ctx.client.attempt('sr_get_transaction', { transaction_ref: ctx.fixtures.transaction }, ctx.call, {
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
    return `${error.phase} answered 401 with the credentials_rejected envelope`
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
    expect401(ctx, (phase) => (phase === 'tools/call' ? 'broken' : 'valid'), 'signature_not_verified', ['tools/call']),
}

export const signatureStale: CheckDefinition = {
  id: 'signature_stale',
  needs: ['discovery'],
  run: (ctx) => expect401(ctx, () => ({ staleSeconds: STALE_SECONDS }), 'stale_accepted', ['discover', 'initialize']),
}
