// preflight checks one receipt per process, so its cost is the whole process: node's start, loading the CLI, reading
// and checking the file. Baseline, same run: `node -e` that reads the same file and JSON.parse-s it (the least any
// Node checker must do). Cases: the seed's example and a receipt of exactly 1 MiB (the reader's limit).
// Runs alternate A/B so both see the same machine load; each round reports median(preflight) / median(baseline);
// the result is the median round ratio with the range over rounds. When dist/ is built, the unbundled CLI
// (dist/cli.js, ESM, one module per source file) runs in the same rotation, for what the bundle changed.
// Usage: npm run bench -w apps/preflight   (env BENCH_ROUNDS, BENCH_RUNS to change the sizes)
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const APP = fileURLToPath(new URL('..', import.meta.url))
const BIN = join(APP, 'bin', 'preflight.cjs')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const RUNS = Number(process.env.BENCH_RUNS ?? 20)
const BASELINE = "JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8'))"
const UNBUNDLED = join(APP, 'dist', 'cli.js')
const withUnbundled = existsSync(UNBUNDLED)

if (!existsSync(join(APP, 'bundle', 'bin', 'preflight.cjs'))) {
  const built = spawnSync(process.execPath, [join(APP, '..', '..', 'scripts', 'bundle.mjs'), APP], { stdio: 'inherit' })
  if (built.status !== 0) process.exit(1)
}

const work = mkdtempSync(join(tmpdir(), 'preflight-bench-'))
const example = join(APP, 'examples', '01-current_control.json')
const big = join(work, 'receipt-1mib.json')
{
  const doc = JSON.parse(readFileSync(example, 'utf8'))
  const base = Buffer.byteLength(JSON.stringify(doc, null, 2))
  doc.response.result.content[0].text = 'x'.repeat(1_048_576 - base)
  writeFileSync(big, JSON.stringify(doc, null, 2))
}

function timeRun(args: string[]): number {
  const start = process.hrtime.bigint()
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`)
  return ms
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] as number
}

try {
  for (const [name, file] of [
    ['seed example', example],
    ['1 MiB receipt', big],
  ] as const) {
    const check = spawnSync(process.execPath, [BIN, file], { encoding: 'utf8' })
    if (!check.stdout.includes('"outcome":"consistent_sample"')) throw new Error(`${name}: ${check.stdout}`)
    // Warm the file cache and node's own start-up once, outside the measurement.
    timeRun([BIN, file])
    timeRun(['-e', BASELINE, file])
    const ratios: number[] = []
    const unbundledRatios: number[] = []
    const medians: Array<[number, number]> = []
    for (let round = 0; round < ROUNDS; round++) {
      const a: number[] = []
      const b: number[] = []
      const u: number[] = []
      for (let i = 0; i < RUNS; i++) {
        a.push(timeRun([BIN, file]))
        b.push(timeRun(['-e', BASELINE, file]))
        if (withUnbundled) u.push(timeRun([UNBUNDLED, file]))
      }
      ratios.push(median(a) / median(b))
      if (withUnbundled) unbundledRatios.push(median(u) / median(b))
      medians.push([median(a), median(b)])
    }
    const range = (xs: number[]) => {
      const sorted = [...xs].sort((x, y) => x - y)
      return `${median(xs).toFixed(2)}x [${sorted[0]?.toFixed(2)}–${sorted.at(-1)?.toFixed(2)}]`
    }
    const ms = medians.map(([a, b]) => `${a.toFixed(1)}/${b.toFixed(1)}`).join(' ')
    console.log(
      `${name}: preflight (bundle) / node -e read+JSON.parse = ${range(ratios)} over ${ROUNDS} rounds of ${RUNS} runs each (median ms per round: ${ms})`,
    )
    if (withUnbundled) console.log(`${name}: unbundled dist/cli.js / node -e, same rounds = ${range(unbundledRatios)}`)
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
