// The REST read bench's load client, in a process of its own: autocannon (pre-built requests on raw sockets, about
// a fifth of node:http's client CPU per call), so the client is not what limits a server answering >10k calls/s.
// Every request is signed when it is sent (autocannon's setupRequest), as the platform does.
// argv[2]: a JSON LoadSpec. Prints one JSON LoadResult line. Exits 1 if any answer was not the expected one.

import { signHeaders } from '@tollgate/signing'
import autocannon from 'autocannon'

export interface LoadSpec {
  /** Origin of the server, e.g. http://127.0.0.1:1234 */
  origin: string
  method: 'GET' | 'POST'
  path: string
  body?: string
  headers?: Record<string, string>
  secret: string
  connections: number
  /** The measured run lasts this many seconds. */
  seconds: number
  /** Every answer's status must be 200 and its body include this. */
  bodyIncludes: string
}

export interface LoadResult {
  perSecond: number
  p99Ms: number
  count: number
  /** The client's own CPU (user + system) over the run's wall time: near 100% means the client set the pace. */
  clientCpuShare: number
}

const spec = JSON.parse(process.argv[2] ?? '') as LoadSpec
const url = new URL(spec.path, spec.origin)
const bodyBytes = Buffer.from(spec.body ?? '')
let mismatched = 0
// A run ends on autocannon's 1 s sampling tick, so a run bounded by `amount` lasts a whole number of seconds and its
// rate comes out quantised; the measured run is bounded by `seconds` instead (the warm-up by a count).
const load = (amount: number | undefined) =>
  autocannon({
    url: spec.origin,
    connections: spec.connections,
    pipelining: 1,
    // autocannon ignores `Connection: close`; the servers close a connection after 1,000 requests (the provider's
    // keep-alive limit), so the client reconnects before that, as a client honouring the header would.
    reconnectRate: 500,
    ...(amount !== undefined && { amount }),
    duration: spec.seconds,
    requests,
  })
const requests = [
  {
    method: spec.method,
    path: spec.path,
    ...(spec.body !== undefined && { body: spec.body }),
    setupRequest: (req: autocannon.Request) => ({
      ...req,
      headers: {
        ...spec.headers,
        ...signHeaders(spec.secret, {
          method: spec.method,
          host: url.host,
          path: url.pathname,
          body: bodyBytes,
          key: '',
        }),
      },
    }),
    onResponse: (status: number, body: string) => {
      if (status !== 200 || !body.includes(spec.bodyIncludes)) {
        if (mismatched++ === 0)
          process.stderr.write(`load: first unexpected answer: HTTP ${status} ${body.slice(0, 200)}\n`)
      }
    },
  },
]
// The same 300-call warm-up as the in-process legs (counted in the server's CPU, not in the figures).
await load(300)
const cpu0 = process.cpuUsage()
const started = performance.now()
const result = await load(undefined)
const wall = (performance.now() - started) / 1000
const cpu = process.cpuUsage(cpu0)
const count = result.requests.total
if (mismatched > 0 || result.errors > 0 || result.non2xx > 0 || result.timeouts > 0) {
  process.stderr.write(
    `load: ${mismatched} unexpected answers, ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts\n`,
  )
  process.exit(1)
}
const out: LoadResult = {
  perSecond: count / wall,
  p99Ms: result.latency.p99,
  count,
  clientCpuShare: (cpu.user + cpu.system) / 1e6 / wall,
}
process.stdout.write(`${JSON.stringify(out)}\n`)
