// The greedy caller of the fairness bench, in its own process: N calls always in flight (closed loop) until SIGTERM,
// then prints how many calls completed. Usage: greedy.ts URL TOKEN N
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'

const [url, token, n] = process.argv.slice(2) as [string, string, string]
const ARGS = { currency: 'USD', start: '2026-03-01', end: '2026-03-31' }
const clients = await Promise.all(
  Array.from({ length: Number(n) }, async () => {
    const c = new Client({ name: 'greedy', version: '0' }, { versionNegotiation: { mode: 'auto' } })
    await c.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
    return c
  }),
)
let running = true
let calls = 0
const loops = clients.map(async (c) => {
  while (running) {
    await c.callTool({ name: 'rates.window', arguments: ARGS })
    calls++
  }
})
console.log('ready')
process.once('SIGTERM', () => {
  running = false
  void Promise.all(loops).then(() => {
    console.log(String(calls))
    process.exit(0)
  })
})
