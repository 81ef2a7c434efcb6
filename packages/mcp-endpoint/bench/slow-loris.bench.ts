// npm run bench -w packages/mcp-endpoint: normal callers' latency while slow senders hold connections.
// The server runs in its own process (default limits); this process is the load client. Each round measures
// 2026-07-28 tools/call latency at concurrency 8, first with no slow senders (baseline), then with SLOW connections
// each dripping a body at one byte per 500 ms. Reports p50/p99 and throughput, and the ratio to the baseline round.
import { spawn } from 'node:child_process'
import http from 'node:http'
import { connect, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'

const SLOW = Number(process.env.BENCH_SLOW ?? 200)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const MS = Number(process.env.BENCH_MS ?? 3000)
const CONCURRENCY = 8
const DIR = fileURLToPath(new URL('..', import.meta.url))

const child = spawn(process.execPath, ['--conditions=@tollgate/source', '--import', 'tsx', 'bench/door-server.ts'], {
  cwd: DIR,
  stdio: ['ignore', 'pipe', 'inherit'],
})
const port = await new Promise<number>((resolve) => {
  let out = ''
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString()
    const m = /READY (\d+)/.exec(out)
    if (m?.[1] !== undefined) resolve(Number(m[1]))
  })
})

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'noop',
    arguments: {},
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
})
function call(): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'noop',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume()
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

function slowSender(): Socket {
  const s = connect(port, '127.0.0.1')
  s.on('error', () => {})
  s.write(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n`,
  )
  const drip = setInterval(() => (s.writable ? s.write('{') : clearInterval(drip)), 500)
  s.on('close', () => clearInterval(drip))
  return s
}

async function measure(): Promise<{ perSecond: number; p50: number; p99: number }> {
  const lat: number[] = []
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() - started < MS) {
        const t0 = performance.now()
        await call()
        lat.push(performance.now() - t0)
      }
    }),
  )
  lat.sort((a, b) => a - b)
  const at = (q: number) => lat[Math.min(lat.length - 1, Math.floor(lat.length * q))] ?? 0
  return { perSecond: lat.length / ((performance.now() - started) / 1000), p50: at(0.5), p99: at(0.99) }
}

for (let i = 0; i < 200; i++) await call() // warm-up
const rows: string[] = []
const ratios: number[] = []
try {
  for (let round = 0; round < ROUNDS; round++) {
    const base = await measure()
    const slow = Array.from({ length: SLOW }, slowSender)
    await new Promise((r) => setTimeout(r, 300))
    const loaded = await measure()
    for (const s of slow) s.destroy()
    ratios.push(loaded.perSecond / base.perSecond)
    rows.push(
      `round ${round + 1}: no slow senders ${base.perSecond.toFixed(0)}/s p50 ${base.p50.toFixed(1)} ms p99 ${base.p99.toFixed(1)} ms | ${SLOW} slow senders ${loaded.perSecond.toFixed(0)}/s p50 ${loaded.p50.toFixed(1)} ms p99 ${loaded.p99.toFixed(1)} ms`,
    )
  }
} finally {
  child.kill('SIGINT')
  agent.destroy()
}
console.log(`concurrency ${CONCURRENCY}, ${ROUNDS} rounds of ${MS} ms, server in its own process with default limits`)
for (const r of rows) console.log(r)
console.log(
  `throughput with slow senders ÷ without (same round): ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`,
)
