// The label values of quenchz's metrics: every one from a set fixed when the server starts (outcome words, error
// codes, result classes), so no caller can add a series.
import type { KeySetFetchOutcome } from '@tollgate/gate'
import type { UpstreamResult } from '../rates/index.js'

/**
 * The words of a finished call's outcome (the log's `outcome`); anything else a later gate reports is `other`.
 * `unknown-caller`, `unavailable` (the budget store could not charge: a 503) and `abandoned` (the client had gone
 * before the charge) come with the open budget and the Redis outage handling.
 */
export const CALL_OUTCOMES = [
  'served',
  'refused',
  'over-budget',
  'unknown-caller',
  'no-such-tool',
  'unavailable',
  'abandoned',
] as const

/** Why the budget refused a call: `spent` (reserve and shared pool empty) or `unknown-caller` (no reserve held). */
export const BUDGET_REFUSALS: ReadonlyMap<string, string> = new Map([
  ['over-budget', 'spent'],
  ['unknown-caller', 'unknown-caller'],
])

/** Where a charged unit came from (the log's `charged`). */
export const CHARGED_FROM = ['reserve', 'spare', 'bucket'] as const

/** Why the gate refused a bearer token: its stable codes. */
export const TOKEN_REFUSALS = [
  'ERR_GATE_TOKEN_MISSING',
  'ERR_GATE_TOKEN_INVALID',
  'ERR_GATE_TOKEN_EXPIRED',
  'ERR_GATE_CLAIM_MISSING',
  'ERR_GATE_ISSUER',
  'ERR_GATE_AUDIENCE',
  'ERR_GATE_AUDIENCE_LIST',
] as const

/** The gate's fault codes (server-side failures; each also logged). */
export const FAULT_CODES = [
  'budget-store',
  'tool-threw',
  'output-schema',
  'sdk',
  'adapter',
  'legacy-transport',
  'audience',
  'unhandled',
  'ERR_GATE_KEYS_UNAVAILABLE',
] as const

export const UPSTREAM_RESULTS: readonly UpstreamResult[] = [
  '2xx',
  '3xx',
  '4xx',
  '5xx',
  'timeout',
  'unreachable',
  'too-large',
]

/** Results of a JWKS fetch: ok, the HTTP status class of a non-200 answer, or why nothing usable came back. */
export const JWKS_RESULTS = ['ok', '3xx', '4xx', '5xx', 'timeout', 'unreachable', 'too-large', 'invalid'] as const

/** A key set fetch's outcome as its `result` label (a word from JWKS_RESULTS, never text from the issuer). */
export function jwksResult(outcome: KeySetFetchOutcome): (typeof JWKS_RESULTS)[number] {
  if (outcome.ok) return 'ok'
  const status = /^http-([1-5])\d\d$/.exec(outcome.reason)?.[1]
  if (status === '3' || status === '4' || status === '5') return `${status}xx` as '3xx' | '4xx' | '5xx'
  if (outcome.reason === 'timeout' || outcome.reason === 'unreachable' || outcome.reason === 'too-large')
    return outcome.reason
  return 'invalid'
}

/** The `tool` label of a call the caller was not granted (or named nothing the server has): never the typed name. */
export const NO_TOOL = 'none'
