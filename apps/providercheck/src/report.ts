import { createHmac, timingSafeEqual } from 'node:crypto'
import { parsePlain } from '@tollgate/strict-json'
import type { CheckResult } from './check-types.js'
import { CHECK_IDS } from './requirements.js'
import { canonicalJson } from './rfc8785-canonical-json.js'
import type { KitRun } from './run-kit.js'
import { KIT_NAME, KIT_VERSION } from './version.js'

export const REPORT_FORMAT = 'providercheck-report/1'
const SEAL_PREFIX = 'hmac-sha256:'

/** The sealed report written by -json. */
export interface Report {
  format: typeof REPORT_FORMAT
  kit: { name: string; version: string }
  target: {
    base_url: string
    transport: 'mcp' | 'rest'
    /** 'production': a live run (`-live`), sealed with the production secret; only what changes nothing ran. */
    environment: 'sandbox' | 'production'
    tenant: string
    era: string | null
  }
  /** The fixtures given; a live run may leave any of them out (null). */
  fixtures: { customer: string | null; transaction: string | null; subscription: string | null }
  /** Sent besides the signature: whether a bearer token, and the edge header names. Never a value. */
  credentials: { bearer_token: boolean; edge_headers: string[] }
  started_at: string
  finished_at: string
  /** 'interrupted': Ctrl-C stopped the run; `checks` holds the checks that ended, `not_run` the others. */
  outcome: 'pass' | 'fail' | 'interrupted'
  summary: { pass: number; fail: number; skip: number }
  checks: ReportCheck[]
  /** Checks that never ran because the run was interrupted (empty otherwise). */
  not_run: string[]
  seal: string
}

export interface ReportCheck {
  id: string
  verdict: string
  code: string | null
  reason: string
  duration_ms: number
  /** A failing check's calls: what was sent and what came back (shortened, secrets scrubbed). */
  exchanges?: { sent: string; received: string }[]
}

export interface ReportTarget {
  baseUrl: string
  tenant: string
  customer?: string | undefined
  transaction?: string | undefined
  subscription?: string | undefined
}

/** Builds and seals the report of a run: seal = HMAC-SHA256(secret, canonicalJson(report without seal)). */
export function buildReport(run: KitRun, target: ReportTarget, secret: string): Report {
  const unsealed: Omit<Report, 'seal'> = {
    format: REPORT_FORMAT,
    kit: { name: KIT_NAME, version: KIT_VERSION },
    target: {
      base_url: target.baseUrl,
      transport: run.transport,
      environment: run.environment ?? 'sandbox',
      tenant: target.tenant,
      era: run.era ?? null,
    },
    fixtures: {
      customer: target.customer ?? null,
      transaction: target.transaction ?? null,
      subscription: target.subscription ?? null,
    },
    credentials: { bearer_token: run.credentials.bearerToken, edge_headers: [...run.credentials.edgeHeaderNames] },
    started_at: run.startedAt.toISOString(),
    finished_at: run.finishedAt.toISOString(),
    outcome: run.interrupted ? 'interrupted' : run.passed ? 'pass' : 'fail',
    summary: count(run.results),
    checks: run.results.map((r) => ({
      id: r.id,
      verdict: r.verdict,
      code: r.code,
      reason: r.reason,
      duration_ms: r.durationMs,
      ...(r.exchanges !== undefined && { exchanges: r.exchanges.map((e) => ({ sent: e.sent, received: e.received })) }),
    })),
    not_run: CHECK_IDS.filter((id) => !run.results.some((r) => r.id === id)),
  }
  return { ...unsealed, seal: sealOf(unsealed, secret) }
}

/** The seal of a report body (everything but `seal`). */
export function sealOf(body: object, secret: string): string {
  return SEAL_PREFIX + createHmac('sha256', secret).update(canonicalJson(body), 'utf8').digest('hex')
}

export type ReportVerification =
  | { ok: true; report: Report }
  | { ok: false; reason: 'malformed' | 'unsealed' | 'seal_mismatch' }

/** Checks a report file's seal with the secret (read strictly: a duplicate key is malformed). */
export function verifyReport(bytes: Uint8Array, secret: string): ReportVerification {
  let value: unknown
  try {
    value = parsePlain(bytes, { maxBytes: 4 * 1024 * 1024, maxDepth: 32 })
  } catch {
    return { ok: false, reason: 'malformed' }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'malformed' }
  const { seal, ...body } = value as Record<string, unknown>
  if (typeof seal !== 'string' || !seal.startsWith(SEAL_PREFIX)) return { ok: false, reason: 'unsealed' }
  let expected: string
  try {
    expected = sealOf(body, secret)
  } catch {
    return { ok: false, reason: 'malformed' }
  }
  const a = Buffer.from(seal, 'utf8')
  const b = Buffer.from(expected, 'utf8')
  if (a.length !== b.length || !timingSafeEqual(a, b)) return { ok: false, reason: 'seal_mismatch' }
  return { ok: true, report: value as Report }
}

function count(results: CheckResult[]): { pass: number; fail: number; skip: number } {
  return {
    pass: results.filter((r) => r.verdict === 'pass').length,
    fail: results.filter((r) => r.verdict === 'fail').length,
    skip: results.filter((r) => r.verdict === 'skip').length,
  }
}
