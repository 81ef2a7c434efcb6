// The bench's load client, in a process of its own: autocannon (each request written as one buffer on a raw socket; a
// closed loop, one request in flight per connection). Every
// request is built and signed when it is sent (autocannon's setupRequest), as the platform does: a refund carries a
// fresh platform-shaped key each time, and a 2025-era attempt carries the session id its initialize answered.
// Every answer is checked; any unexpected one fails the run.
// argv[2]: a JSON LoadSpec. Prints one JSON LoadResult line. Exits 1 if any answer was not the expected one.

import type { IncomingHttpHeaders } from 'node:http'
import { signHeaders } from '@tollgate/signing'
import autocannon from 'autocannon'
import {
  type AnswerChecks,
  answerProblem,
  type BenchTool,
  LEGACY_INITIALIZE,
  LEGACY_INITIALIZED,
  legacyCallBody,
  legacySessionHeaders,
  modernCallRequest,
  platformKey,
  refundRequest,
} from './calls.js'

/** What each connection sends, in turn. */
export type LoadLeg =
  /** The same request every time (a REST read, a signed GET to the floor). */
  | { kind: 'fixed'; method: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> }
  /** A 2026-07-28 tools/call, built afresh each time (a refund under a new key). */
  | { kind: 'modern'; path: string; tool: BenchTool }
  /** A 2025-era attempt: initialize → initialized → tools/call → DELETE, the session id carried along. */
  | { kind: 'legacy'; path: string; tool: BenchTool; deleteStatus: number }
  /** A REST refund (POST /v1/refunds) under a fresh key, sent in Idempotency-Key and signed with the request. */
  | { kind: 'rest-refund' }

/** A leg to run, with what the answer to each call (a fixed or modern request, an attempt's tools/call) must hold. */
export interface LoadSpec extends AnswerChecks {
  /** Origin of the server, e.g. http://127.0.0.1:1234 */
  origin: string
  leg: LoadLeg
  secret: string
  connections: number
  /** The measured run lasts this many seconds. */
  seconds: number
  /** The raw HMAC floor: every answer is 200 with an empty result; only the status is checked. */
  floor?: boolean
  /** Calls (or attempts) sent before the measured run; default 300. */
  warmCalls?: number
}

export interface LoadResult {
  /** Calls (or, for a 2025-era leg, whole attempts) per second. */
  perSecond: number
  /** Of a call, or of a whole attempt (initialize sent → DELETE answered). */
  p99Ms: number
  count: number
  /** The client's own CPU (user + system) over the run's wall time: near 100% means the client set the pace. */
  clientCpuShare: number
}

interface Step {
  method: 'GET' | 'POST' | 'DELETE'
  path: string
  /** Body, headers and idempotency key (signed with the request) of this request, given the attempt so far. */
  build: (context: Attempt) => { body?: string | undefined; headers: Record<string, string>; key?: string }
  status: number
  /** This step's answer is the call's (its body is checked), and it ends a measured unit. */
  call?: boolean
  ends?: boolean
}

/** autocannon's per-connection context: reset when a connection's list of requests starts again. */
interface Attempt {
  startedAt?: number
  session?: string
}

const spec = JSON.parse(process.argv[2] ?? '') as LoadSpec
const host = new URL(spec.origin).host
const leg = spec.leg
const floor = spec.floor === true

function stepsOf(): Step[] {
  if (leg.kind === 'fixed') {
    const { body, headers = {} } = leg
    return [
      { method: leg.method, path: leg.path, build: () => ({ body, headers }), status: 200, call: true, ends: true },
    ]
  }
  if (leg.kind === 'rest-refund') {
    const build = () => {
      const key = platformKey()
      const body = JSON.stringify(refundRequest())
      return { body, key, headers: { 'content-type': 'application/json', 'idempotency-key': key } }
    }
    return [{ method: 'POST', path: '/v1/refunds', build, status: 200, call: true, ends: true }]
  }
  if (leg.kind === 'modern') {
    return [
      { method: 'POST', path: leg.path, build: () => modernCallRequest(leg.tool), status: 200, call: true, ends: true },
    ]
  }
  const session = (a: Attempt) => legacySessionHeaders(a.session)
  return [
    { method: 'POST', path: leg.path, build: () => ({ body: LEGACY_INITIALIZE, headers: session({}) }), status: 200 },
    { method: 'POST', path: leg.path, build: (a) => ({ body: LEGACY_INITIALIZED, headers: session(a) }), status: 202 },
    {
      method: 'POST',
      path: leg.path,
      build: (a) => ({ body: legacyCallBody(leg.tool), headers: session(a) }),
      status: 200,
      call: true,
    },
    { method: 'DELETE', path: leg.path, build: (a) => ({ headers: session(a) }), status: leg.deleteStatus, ends: true },
  ]
}
const steps = stepsOf()

let mismatched = 0
let latencies: number[] = []
const mismatch = (what: string) => {
  if (mismatched++ === 0) process.stderr.write(`load: first unexpected answer: ${what.slice(0, 300)}\n`)
}

const requests = steps.map((step, index) => ({
  method: step.method,
  path: step.path,
  setupRequest: (req: autocannon.Request, ctx: object) => {
    const context = ctx as Attempt
    if (index === 0) context.startedAt = performance.now()
    const { body, headers, key = '' } = step.build(context)
    const bytes = Buffer.from(body ?? '')
    return {
      ...req,
      ...(body !== undefined && { body: bytes }),
      headers: {
        ...headers,
        ...signHeaders(spec.secret, { method: step.method, host, path: step.path, body: bytes, key }),
      },
    }
  },
  onResponse: (status: number, body: string, ctx: object, headers: IncomingHttpHeaders | undefined) => {
    const context = ctx as Attempt
    const expected = floor ? 200 : step.status
    if (status !== expected) return mismatch(`${step.method} HTTP ${status} (expected ${expected}) ${body}`)
    const problem = !floor && step.call ? answerProblem(body, spec) : undefined
    if (problem !== undefined) return mismatch(`${problem}: ${body}`)
    if (index === 0 && leg.kind === 'legacy') {
      const id = headers?.['mcp-session-id']
      if (typeof id === 'string') context.session = id
    }
    if (step.ends && context.startedAt !== undefined) latencies.push(performance.now() - context.startedAt)
  },
}))

const load = (amount: number | undefined) =>
  autocannon({
    url: spec.origin,
    connections: spec.connections,
    pipelining: 1,
    // autocannon ignores `Connection: close`; the servers close a connection after 1,000 requests (the provider's
    // keep-alive limit), so the client reconnects before that, as a client honouring the header would. (autocannon
    // neither counts nor shows onResponse the answer it reconnects after: one in 500 — for a 2025-era leg a DELETE,
    // as 500 is a multiple of its four requests — goes unchecked and uncounted, alike for every server.)
    reconnectRate: 500,
    ...(amount !== undefined && { amount }),
    duration: spec.seconds,
    requests,
  })

// The same 300-call (or attempt) warm-up as the in-process legs, unless the spec asks for more (in neither the figures
// nor the server's CPU).
await load((spec.warmCalls ?? 300) * steps.length)
// A server that answers wrongly fails the leg at once, not after a whole measured run.
if (mismatched > 0) process.exit(1)
latencies = []
// The bench reads the server's CPU now and at the result line: the measured run's alone.
process.stdout.write('WARM\n')
const cpu0 = process.cpuUsage()
const started = performance.now()
const result = await load(undefined)
const wall = (performance.now() - started) / 1000
const cpu = process.cpuUsage(cpu0)
// A non-2xx answer counts as unexpected unless a step expects one (a sessionless peer's DELETE: 405).
const non2xxExpected = !floor && steps.some((s) => s.status >= 300)
if (mismatched > 0 || result.errors > 0 || result.timeouts > 0 || (result.non2xx > 0 && !non2xxExpected)) {
  process.stderr.write(
    `load: ${mismatched} unexpected answers, ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts\n`,
  )
  process.exit(1)
}
latencies.sort((a, b) => a - b)
const out: LoadResult = {
  perSecond: latencies.length / wall,
  p99Ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0,
  count: latencies.length,
  clientCpuShare: (cpu.user + cpu.system) / 1e6 / wall,
}
process.stdout.write(`${JSON.stringify(out)}\n`)
