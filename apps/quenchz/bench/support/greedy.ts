// The greedy caller of the fairness bench, in its own process: N calls always in flight (closed loop, each sent as
// soon as the last answer on its connection is read) until SIGTERM, then prints how many calls completed. Plain
// HTTP keep-alive (./plain-call.ts), the same request the SDK v2 client sends, every answer checked: sixteen SDK
// clients in one process spent a whole core of their own parsing answers, which throttled the load below what the
// server could take and stalled the quiet caller's process beside them. Exits 1 if any call is refused.
// Usage: greedy.ts URL TOKEN N
import { plainCaller } from './plain-call.js'

const [url, token, n] = process.argv.slice(2) as [string, string, string]
const ARGS = { currency: 'USD', start: '2026-03-01', end: '2026-03-31' }
const inFlight = Number(n)
const { call, close } = plainCaller(url, token, inFlight)
let running = true
let calls = 0
const loops = Array.from({ length: inFlight }, async () => {
  while (running) {
    await call(ARGS)
    calls++
  }
})
for (const loop of loops)
  loop.catch((error: unknown) => {
    console.error(`greedy caller: ${(error as Error).message}`)
    process.exit(1)
  })
console.log('ready')
process.once('SIGTERM', () => {
  running = false
  void Promise.all(loops).then(() => {
    close()
    console.log(String(calls))
    process.exit(0)
  })
})
