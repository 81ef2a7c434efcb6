// Certificate cost for the full-history window (1999-01-04 … today), as ratios to a baseline measured in this run:
// building the observation list the tool returns anyway (one [date, value] pair and one Set entry per delivered day).
// Uses the ECB history file when ../shared is present, else a synthetic weekday series of the same length.
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { sharedDir } from '@tollgate/test-support'
import {
  buildCertificate,
  closingReason,
  createRatesTools,
  formatDay,
  HistorySource,
  type Observation,
  openSource,
  parseIsoDay,
  type RatesSource,
} from '../src/rates/index.js'

const zip = resolve(sharedDir(), 'data/ecb/eurofxref-hist.zip')

const from = parseIsoDay('1999-01-04') as number
const now = new Date()
const to = Math.floor(now.getTime() / 86_400_000)

async function loadSource(): Promise<{ source: RatesSource; label: string }> {
  if (existsSync(zip)) return { source: await openSource({ kind: 'history', file: zip }), label: 'eurofxref-hist.zip' }
  const rows = ['Date,USD,']
  for (let d = to; d >= from; d--) if (closingReason(d) === null) rows.push(`${formatDay(d)},1.1,`)
  return { source: HistorySource.fromText(`${rows.join('\n')}\n`), label: 'synthetic weekday series' }
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

function time(runs: number, fn: () => unknown): number {
  for (let i = 0; i < 5; i++) fn() // warm-up
  const samples: number[] = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    fn()
    samples.push(performance.now() - t0)
  }
  return median(samples)
}

const { source, label } = await loadSource()
const outcome = await source.window({ currency: 'USD', from, to }, now)
const observations: Observation[] = outcome.kind === 'observations' ? outcome.observations : []
const days = to - from + 1

let sink = 0
const baseline = time(200, () => {
  const pairs = observations.map((o) => [o.date, o.value])
  const delivered = new Set(observations.map((o) => o.day))
  sink += pairs.length + delivered.size
})
const certificate = time(200, () => {
  const result = buildCertificate({ from, to, delivered: observations.map((o) => o.day), now, seriesStart: from })
  sink += result.ok ? result.certificate.expected_observations : 0
})
const [windowTool] = createRatesTools({ source, now: () => now })
// A dated file cannot be certified past its last row, so the tool is timed up to there.
const toolEnd = Math.min(to, (await source.extent('USD'))?.coveredUntil ?? to)
const probe = await windowTool?.call({ currency: 'USD', start: formatDay(from), end: formatDay(toolEnd) })
if (!probe?.ok) throw new Error(`the bench window was refused: ${probe?.text}`)
const toolSamples: number[] = []
for (let i = 0; i < 50; i++) {
  const t0 = performance.now()
  await windowTool?.call({ currency: 'USD', start: formatDay(from), end: formatDay(toolEnd) })
  toolSamples.push(performance.now() - t0)
}
const tool = median(toolSamples.slice(5))

console.log(
  `certificate bench: window ${formatDay(from)} … ${formatDay(to)} (${days} days, ${observations.length} rates, ${label})`,
)
console.log(`  baseline (build the observation list): 1.00`)
console.log(`  certificate (walk every day):          ${(certificate / baseline).toFixed(2)} x baseline`)
console.log(
  `  whole rates.window call to ${formatDay(toolEnd)}: ${(tool / baseline).toFixed(2)} x baseline (JSON text included)`,
)
if (sink < 0) console.log(sink)
await source.close()
