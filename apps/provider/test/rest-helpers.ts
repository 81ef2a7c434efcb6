// REST test helpers: signed requests as the platform sends them (the key field carries Idempotency-Key), and the
// two stores the binding is proven on (SQLite in a temp dir; PostgreSQL in a fresh schema, skipped when absent).

import { request } from 'node:http'
import { signHeaders } from '@tollgate/signing'
import type { StoreOptions } from '../src/index.js'
import { SECRET } from './helpers.js'
import { dropSchemas, PG_URL, probePostgres, uniqueSchema } from './postgres.js'

export const REJECTED =
  '{"error":{"code":"credentials_rejected","message":"the request signature was not accepted","retryable":false}}'

export interface RestOptions {
  /** JSON-serialized unless a string or Buffer (sent as is). */
  body?: unknown
  /** Sent as Idempotency-Key and signed in the key field. */
  key?: string
  /** Sent after (and over) the ones built here; an array value sends the header once per element. */
  headers?: Record<string, string | string[]>
  secret?: string
  /** Sign these instead of what is sent (to prove what the signature covers). */
  signKey?: string
  signPath?: string
  signHost?: string
  /** Send no signature headers at all. */
  unsigned?: boolean
  /** Leave out Content-Type on a body. */
  noContentType?: boolean
  when?: Date
}

export interface RestReply {
  status: number
  type: string | null
  allow: string | null
  text: string
  json: Record<string, unknown>
}

/**
 * One signed REST request to `base` + `path` (path as sent, already escaped), over node:http: unlike fetch it can
 * send a GET with a body and a header twice, which the provider must refuse.
 */
export async function rest(base: string, method: string, path: string, o: RestOptions = {}): Promise<RestReply> {
  const url = new URL(path, base)
  const bytes =
    o.body === undefined
      ? Buffer.alloc(0)
      : Buffer.isBuffer(o.body)
        ? o.body
        : Buffer.from(typeof o.body === 'string' ? o.body : JSON.stringify(o.body), 'utf8')
  const headers: Record<string, string | string[]> = {}
  if (bytes.length > 0 && o.noContentType !== true) headers['content-type'] = 'application/json'
  if (o.key !== undefined) headers['idempotency-key'] = o.key
  if (o.unsigned !== true) {
    Object.assign(
      headers,
      signHeaders(
        o.secret ?? SECRET,
        {
          method,
          host: o.signHost ?? url.host,
          path: o.signPath ?? url.pathname,
          body: bytes,
          key: o.signKey ?? o.key ?? '',
        },
        o.when,
      ),
    )
  }
  Object.assign(headers, o.headers)
  if (bytes.length > 0) headers['content-length'] = String(bytes.length)
  return new Promise<RestReply>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: Record<string, unknown> = {}
        try {
          json = JSON.parse(text) as Record<string, unknown>
        } catch {}
        const allow = res.headers.allow
        resolve({
          status: res.statusCode ?? 0,
          type: res.headers['content-type'] ?? null,
          allow: typeof allow === 'string' ? allow : null,
          text,
          json,
        })
      })
    })
    req.on('error', reject)
    req.end(bytes)
  })
}

export const errorCode = (r: RestReply) => (r.json.error as { code?: string } | undefined)?.code

export const refundBody = (transaction_ref: string, amount_minor: number, dry_run = false, currency = 'USD') => ({
  transaction_ref,
  amount: { amount_minor, currency },
  reason: 'customer_request',
  dry_run,
})

export interface Backend {
  name: 'SQLite' | 'PostgreSQL'
  skip: string | undefined
  /** Store options for one more provider (undefined: the test helper's SQLite file in its temp dir). */
  store(): StoreOptions | undefined
  cleanup(): Promise<void>
}

/** SQLite and PostgreSQL; PostgreSQL skips with the reason when absent (fails under TOLLGATE_REQUIRE_SERVICES=1). */
export async function backends(): Promise<Backend[]> {
  const pgSkip = await probePostgres()
  const made: string[] = []
  return [
    { name: 'SQLite', skip: undefined, store: () => undefined, cleanup: async () => {} },
    {
      name: 'PostgreSQL',
      skip: pgSkip,
      store: () => {
        const schema = uniqueSchema('rest')
        made.push(schema)
        return { kind: 'postgres', connectionString: PG_URL, schema }
      },
      cleanup: async () => {
        if (made.length > 0) await dropSchemas(...made)
      },
    },
  ]
}
