// Types only: what a check is, what it returns and what it sees. The classes a check throws are in errors.ts.
import type { CallContext, Era, PlatformClient, Transport } from '@tollgate/platform-client'
import type { Exchange } from './exchange-recorder.js'
import type { CheckId } from './requirements.js'

export type VerdictName = 'pass' | 'fail' | 'skip'

/** One check's end: pass (code null), fail (a stable code) or skip (not_applicable or dependency_failed). */
export interface CheckResult {
  id: CheckId
  verdict: VerdictName
  code: string | null
  reason: string
  durationMs: number
  /** A failing check's calls: what was sent and what came back (only with recordExchanges). */
  exchanges?: Exchange[]
}

/** What the fixtures and earlier checks established; later checks read it. */
export interface KitState {
  era?: Era
  describe?: { capabilities: Record<string, boolean>; currencies: string[] }
  customer?: Record<string, unknown>
  transaction?: Record<string, unknown>
  subscription?: Record<string, unknown>
  /** The first refund; over REST also its status and received bytes (a replay must repeat both). */
  refund?: { key: string; args: Record<string, unknown>; value: Record<string, unknown>; body?: Buffer }
  /** Profile tools mcp_profile found missing from tools/list: checks calling them are skipped, not failed. */
  missingTools?: readonly string[]
}

/**
 * The workspace and the fixtures the checks read. A sandbox run needs all three fixtures; a live run (issue 29 §4)
 * reads only those given: a check that needs one not given does not apply (skip not_applicable).
 */
export interface Fixtures {
  tenant: string
  customer?: string | undefined
  transaction?: string | undefined
  subscription?: string | undefined
}

export interface KitContext {
  client: PlatformClient
  /** The binding under test (the client speaks it). */
  transport: Transport
  fixtures: Fixtures
  call: CallContext
  state: KitState
  /** A fresh idempotency key shaped like the platform's: {tenant}:ticket:{uuid}:{operation}:{uuid}. */
  newKey(operation: 'refund' | 'cancel_subscription'): string
  /** true for the live contract check: checks that change data are not run (skip not_applicable). */
  live?: boolean
  /** The whole mcp_profile check's budget (the seed's 15 s). */
  profileBudgetMs: number
  /** Epoch ms clock (injected in tests). */
  now(): number
  /** What the run sends besides the signature (names only), for reasons that explain a refusal. */
  credentials: KitCredentials
}

/** Whether a bearer token is sent, and the edge header names (never values). */
export interface KitCredentials {
  bearerToken: boolean
  edgeHeaderNames: string[]
}

export interface CheckDefinition {
  id: CheckId
  /** Checks that must pass first; otherwise this one is skipped (dependency_failed). */
  needs: readonly CheckId[]
  /** The bindings the check applies to (default both); on another one it is skipped not_applicable. */
  transports?: readonly Transport[]
  /**
   * true for a check that changes the provider's data (a refund, a cancellation, or what rests on one): never run by
   * the live contract check.
   */
  changesData?: true
  /** The profile tools the check calls: one that mcp_profile found missing skips it (dependency_failed). */
  tools?: readonly string[]
  /** One-line pass reason. Throws CheckFailure or NotApplicable. */
  run(ctx: KitContext): Promise<string>
}
