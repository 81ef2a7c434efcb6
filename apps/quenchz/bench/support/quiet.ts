// The quiet caller of the fairness bench, in its own process (away from the greedy caller's): the official SDK v2
// client, one connection, calling rates.window on a fixed schedule (open loop). For each line `run N` on stdin it
// makes N calls at RATE per second and prints one JSON line {latencies, loopDelayMaxMs, loopDelayP99Ms}: end-to-end
// latencies in ms, and this process's own event-loop delay over the run (a late timer or a late read here is
// latency the quiet caller measures that no server caused). Each request carries `x-bench-sent-at`, the time it was
// handed to fetch on the machine's clock (performance.timeOrigin + now, ms), so the server can tell how long it took
// to reach its `request` event. Exits 1 if a call is refused.
// Usage: quiet.ts URL TOKEN RATE
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'

const [url, token, rate] = process.argv.slice(2) as [string, string, string]
const ARGS = { currency: 'USD', start: '2026-03-01', end: '2026-03-31' }
const perSecond = Number(rate)
const client = new Client({ name: 'quiet', version: '0' }, { versionNegotiation: { mode: 'auto' } })
const stampedFetch: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers)
  headers.set('x-bench-sent-at', (performance.timeOrigin + performance.now()).toFixed(3))
  return fetch(input, { ...init, headers })
}
await client.connect(
  new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: stampedFetch,
  }),
)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function run(calls: number): Promise<number[]> {
  const latencies: number[] = []
  const pending: Promise<void>[] = []
  const start = performance.now()
  for (let i = 0; i < calls; i++) {
    const wait = start + (i * 1000) / perSecond - performance.now()
    if (wait > 0) await sleep(wait)
    const t0 = performance.now()
    pending.push(
      client.callTool({ name: 'rates.window', arguments: ARGS }).then((r) => {
        if (r.isError) throw new Error('a quiet call was refused')
        latencies.push(performance.now() - t0)
      }),
    )
  }
  await Promise.all(pending)
  return latencies
}

console.log('ready')
for await (const line of createInterface({ input: process.stdin })) {
  const calls = Number(/^run (\d+)$/.exec(line)?.[1])
  if (!(calls > 0)) continue
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  try {
    const latencies = await run(calls)
    delay.disable()
    console.log(
      JSON.stringify({ latencies, loopDelayMaxMs: delay.max / 1e6, loopDelayP99Ms: delay.percentile(99) / 1e6 }),
    )
  } catch (error) {
    console.error(`quiet caller: ${(error as Error).message}`)
    process.exit(1)
  }
}
await client.close()
