// The capacity bench's load client, in a process of its own: one plain HTTP caller per token (support/plain-call.ts,
// the 2026-07-28 rates.window request, every answer checked), each a closed loop of one call in flight, for WARM_S
// seconds unmeasured, then "WARM" on stdout, then SECONDS measured; prints one JSON line {calls, seconds, cpuShare}.
// Exits 1 at the first refused call.
// Usage: capacity-load.ts URL WARM_S SECONDS TOKEN...
import { plainCaller } from './plain-call.js'

const [url, warmS, seconds, ...tokens] = process.argv.slice(2) as [string, string, string, ...string[]]
const ARGS = { currency: 'USD', start: '2026-03-01', end: '2026-03-31' }
const callers = tokens.map((t) => plainCaller(url, t, 1))
let measuring = false
let calls = 0
let stopAt = Number.POSITIVE_INFINITY
const loops = callers.map(async ({ call }) => {
  while (performance.now() < stopAt) {
    await call(ARGS)
    if (measuring) calls++
  }
})
for (const loop of loops)
  loop.catch((error: unknown) => {
    console.error(`capacity load: ${(error as Error).message.slice(0, 300)}`)
    process.exit(1)
  })
await new Promise((r) => setTimeout(r, Number(warmS) * 1000))
measuring = true
console.log('WARM')
const cpu0 = process.cpuUsage()
const t0 = performance.now()
stopAt = t0 + Number(seconds) * 1000
await Promise.all(loops)
const wall = (performance.now() - t0) / 1000
const cpu = process.cpuUsage(cpu0)
for (const c of callers) c.close()
console.log(JSON.stringify({ calls, seconds: wall, cpuShare: (cpu.user + cpu.system) / 1e6 / wall }))
