// What the outage suites share: refunds through every binding (REST, and MCP clients of both eras on the fast path or
// the SDK's) with the HTTP status and Retry-After each answer came with, a refund loop that retries one key until it
// succeeds, the log lines, and the ledger's refunds counted per key.
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv'
import { createContractAjv } from '@tollgate/contract'
import { signHeaders } from '@tollgate/signing'
import { pino } from 'pino'
import type { RunningProvider } from '../src/index.js'
import { SECRET, signingFetch } from './helpers.js'

/** One answer to a refund, as the caller saw it. */
export interface Seen {
  binding: string
  key: string
  /** ok, or the error envelope's code. */
  code: string
  retryable?: boolean
  /** The HTTP status of the response that carried it (MCP: the JSON-RPC answer's, 200). */
  status: number
  /** The Retry-After header, when there was one. */
  retryAfter: string | null
  ms: number
}

export interface Binding {
  name: string
  refund(key: string, charge: string): Promise<Seen>
  close(): Promise<void>
}

const refundArgs = (charge: string) => ({
  transaction_ref: charge,
  amount: { amount_minor: 1, currency: 'USD' },
  reason: 'goodwill',
  dry_run: false,
})

/** POST /v1/refunds, signed with the key field, the status and Retry-After read off the response. */
export function restBinding(name: string, p: RunningProvider): Binding {
  return {
    name,
    refund: async (key, charge) => {
      const started = performance.now()
      const url = new URL('/v1/refunds', p.baseUrl)
      const body = Buffer.from(JSON.stringify(refundArgs(charge)))
      const headers = {
        'content-type': 'application/json',
        'idempotency-key': key,
        ...signHeaders(SECRET, { method: 'POST', host: url.host, path: url.pathname, body, key }),
      }
      const res = await fetch(url, { method: 'POST', headers, body })
      const json = (await res.json()) as { status?: string; error?: { code: string; retryable: boolean } }
      return {
        binding: name,
        key,
        code: res.status === 200 ? 'ok' : (json.error?.code ?? `http_${res.status}`),
        ...(json.error !== undefined && { retryable: json.error.retryable }),
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        ms: performance.now() - started,
      }
    },
    close: async () => {},
  }
}

/** An official v2 client ('modern': 2026-07-28, 'legacy': a 2025-era session), its tools/call responses' headers kept. */
export async function mcpBinding(name: string, p: RunningProvider, era: 'modern' | 'legacy'): Promise<Binding> {
  const signed = signingFetch()
  // The last tools/call response's status and Retry-After (calls on one binding run one at a time).
  let last: { status: number; retryAfter: string | null } = { status: 0, retryAfter: null }
  const fetchFn = async (input: string | URL, init?: RequestInit) => {
    const res = await signed(input, init)
    if (typeof init?.body === 'string' && init.body.includes('"tools/call"'))
      last = { status: res.status, retryAfter: res.headers.get('retry-after') }
    return res
  }
  const client = new Client(
    { name: 'tollgate-outage-test', version: '0.0.1' },
    {
      jsonSchemaValidator: new AjvJsonSchemaValidator(createContractAjv() as never),
      ...(era === 'modern' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
    },
  )
  const transport = new StreamableHTTPClientTransport(new URL(p.url), { fetch: fetchFn })
  await client.connect(transport)
  return {
    name,
    refund: async (key, charge) => {
      const started = performance.now()
      last = { status: 0, retryAfter: null }
      let code: string
      let retryable: boolean | undefined
      try {
        const r = (await client.callTool({
          name: 'sr_refund',
          arguments: { idempotency_key: key, request: refundArgs(charge) },
        })) as { isError?: boolean; structuredContent?: { error?: { code: string; retryable: boolean } } }
        const error = r.isError === true ? r.structuredContent?.error : undefined
        code = error?.code ?? 'ok'
        retryable = error?.retryable
      } catch (error) {
        // Not a tool result at all (an HTTP error the transport raised): named so the suite shows it.
        code = `transport: ${error instanceof Error ? error.message.slice(0, 120) : String(error)}`
      }
      return {
        binding: name,
        key,
        code,
        ...(retryable !== undefined && { retryable }),
        ...last,
        ms: performance.now() - started,
      }
    },
    close: async () => {
      await transport.terminateSession().catch(() => {})
      await client.close()
    },
  }
}

/** A pino logger whose lines are kept, parsed. */
export function capturedLogger() {
  const lines: Record<string, unknown>[] = []
  const raw: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue
        raw.push(line)
        lines.push(JSON.parse(line) as Record<string, unknown>)
      }
      done()
    },
  })
  const logger = pino({ level: 'info' }, stream)
  return { logger, lines, raw, messages: (msg: string) => lines.filter((l) => l.msg === msg) }
}

let seq = 0
/** A fresh idempotency key. */
export const outageKey = (label: string) =>
  `outage-${label}-${process.pid}-${Date.now().toString(36)}-${++seq}-${Math.random().toString(16).slice(2, 10)}`

/** The 256 roomy load charges of the demo fixtures (ch_9100 … ch_9355). */
export const LOAD_CHARGES = Array.from({ length: 256 }, (_, i) => `ch_9${String(100 + i).padStart(3, '0')}`)

export interface Load {
  seen: Seen[]
  /** Keys that got a success, by binding. */
  done: Map<string, string[]>
  /** Resolves once every binding has `n` more successes than now (or rejects after timeoutMs). */
  successes(n: number, timeoutMs: number): Promise<void>
  /** Resolves once every binding has seen `code` at least once since `fromIndex` in `seen`. */
  saw(code: string, fromIndex: number, timeoutMs: number): Promise<void>
  /** Stops taking new keys; resolves when every binding's last key succeeded. */
  stop(): Promise<void>
}

/**
 * One worker per binding: a fresh key on a load charge, retried (same key, `pauseMs` apart) until it succeeds, then
 * the next key. A key not done within keyTimeoutMs fails the suite.
 */
export function startLoad(bindings: readonly Binding[], opts: { pauseMs: number; keyTimeoutMs: number }): Load {
  const seen: Seen[] = []
  const done = new Map<string, string[]>(bindings.map((b) => [b.name, []]))
  let stopping = false
  let failure: unknown
  const workers = bindings.map(async (b, i) => {
    let n = 0
    while (!stopping) {
      const key = outageKey(b.name)
      const charge = LOAD_CHARGES[(i * 37 + n++) % LOAD_CHARGES.length] as string
      const deadline = performance.now() + opts.keyTimeoutMs
      for (;;) {
        const s = await b.refund(key, charge)
        seen.push(s)
        if (s.code === 'ok') break
        if (performance.now() > deadline) throw new Error(`${b.name}: key not done in ${opts.keyTimeoutMs} ms`)
        await new Promise((r) => setTimeout(r, opts.pauseMs))
      }
      done.get(b.name)?.push(key)
    }
  })
  const all = Promise.all(workers).catch((e: unknown) => {
    failure = e
    stopping = true
  })
  const until = async (what: string, ok: () => boolean, timeoutMs: number) => {
    const deadline = performance.now() + timeoutMs
    while (!ok()) {
      if (failure !== undefined) throw failure
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  return {
    seen,
    done,
    successes: (n, timeoutMs) => {
      const from = new Map([...done].map(([k, v]) => [k, v.length]))
      return until(
        `${n} more successes on every binding`,
        () => [...done].every(([k, v]) => v.length >= (from.get(k) ?? 0) + n),
        timeoutMs,
      )
    },
    saw: (code, fromIndex, timeoutMs) =>
      until(
        `${code} on every binding`,
        () => bindings.every((b) => seen.slice(fromIndex).some((s) => s.binding === b.name && s.code === code)),
        timeoutMs,
      ),
    stop: async () => {
      stopping = true
      await all
      if (failure !== undefined) throw failure
    },
  }
}

/** Every answer was a success or an outage's `unavailable` (retryable, Retry-After 1..5 s where HTTP carries it). */
export function assertOnlyOutages(seen: readonly Seen[], headerOn: (binding: string) => boolean): void {
  for (const s of seen) {
    if (s.code === 'ok') continue
    // in_progress is a fair answer after an outage cut a call whose claim committed: the retry recovers it.
    if (s.code === 'in_progress') continue
    assert.equal(s.code, 'unavailable', `${s.binding} answered ${s.code}`)
    assert.equal(s.retryable, true, `${s.binding}: unavailable is retryable`)
    if (s.binding.startsWith('rest')) assert.equal(s.status, 503, `${s.binding}: unavailable is HTTP 503`)
    if (headerOn(s.binding)) {
      const after = Number(s.retryAfter)
      assert.ok(Number.isInteger(after) && after >= 1 && after <= 5, `${s.binding}: Retry-After ${s.retryAfter}`)
    }
  }
}

/** Each key's refunds in the ledger, over every load charge. */
export async function refundsByKey(p: RunningProvider): Promise<Map<string, number>> {
  const counts = new Map<string, number>()
  for (const charge of LOAD_CHARGES) {
    const tx = await p.billing.getTransaction(charge)
    for (const r of (tx?.refunds ?? []) as { idempotency_key?: string }[]) {
      const k = r.idempotency_key ?? ''
      counts.set(k, (counts.get(k) ?? 0) + 1)
    }
  }
  return counts
}
