import http from 'node:http'
import { signHeaders } from '@tollgate/signing'

const SECRET = 'srmps_bench_0123456789abcdef0123456789abcdef'
const url = new URL(process.argv[2]!)
const ms = Number(process.argv[3] ?? 5000)
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
let seq = 0
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}
function call(): Promise<number> {
  const n = ++seq
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: n,
    method: 'tools/call',
    params: {
      name: 'sr_refund',
      arguments: {
        idempotency_key: `m-${process.pid}-${n}`,
        request: {
          transaction_ref: `ch_9${100 + (n % 256)}`,
          amount: { amount_minor: 1, currency: 'USD' },
          reason: 'goodwill',
          dry_run: false,
        },
      },
      _meta: ENVELOPE,
    },
  })
  const signed = signHeaders(SECRET, {
    method: 'POST',
    host: url.host,
    path: url.pathname,
    body: Buffer.from(body),
    key: '',
  })
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          ...signed,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'sr_refund',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let d = ''
        res.setEncoding('utf8')
        res.on('data', (c) => {
          d += c
        })
        res.on('end', () => {
          if (!d.includes('"succeeded"')) reject(new Error(d.slice(0, 300)))
          resolve(res.statusCode ?? 0)
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
const t0 = performance.now()
let n = 0
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (performance.now() - t0 < ms) {
      await call()
      n++
    }
  }),
)
console.log(`n=${n} ${(n / ((performance.now() - t0) / 1000)).toFixed(0)}/s`)
agent.destroy()
