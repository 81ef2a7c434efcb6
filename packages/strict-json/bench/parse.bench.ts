// Benchmark: parseStrict vs JSON.parse on the same generated 1 MiB mixed document, measured in the same run.
// Reported as medians and a ratio; JSON.parse is timed including the bytes→string decode it needs.
import { performance } from 'node:perf_hooks'
import { parseStrict } from '@tollgate/strict-json'

const TARGET_BYTES = 1 << 20
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 41)

/** Deterministic pseudo-random generator so every run parses the same document. */
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

function makeDocument(): Buffer {
  const r = rng(42)
  const words = [
    'refund',
    'order',
    'Возврат',
    'größe',
    'naïve',
    '返金',
    'line\nbreak',
    'quote"d',
    'tab\there',
    'emoji😀',
  ]
  const items: unknown[] = []
  let size = 2
  let id = 0
  while (size < TARGET_BYTES - 600) {
    const item = {
      id: `example-order-${id++}`,
      amount_minor: Math.floor(r() * 1e9),
      rate: Math.round(r() * 1e6) / 1e3,
      currency: ['RUB', 'USD', 'EUR'][Math.floor(r() * 3)],
      note: `${words[Math.floor(r() * words.length)]} ${words[Math.floor(r() * words.length)]} \u0001`,
      tags: [r() > 0.5, null, Math.floor(r() * 100), -r() * 1e-3],
      nested: { level: { deeper: [id, `${id}`] } },
    }
    const s = JSON.stringify(item)
    size += Buffer.byteLength(s) + 1
    items.push(item)
  }
  const doc = Buffer.from(JSON.stringify({ items }))
  return doc
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

const doc = makeDocument()
const bytes = new Uint8Array(doc.buffer, doc.byteOffset, doc.byteLength)
const options = { maxBytes: 2 * TARGET_BYTES, maxDepth: 64 }
const ours: number[] = []
const base: number[] = []
let sink = 0
// Warm up both paths, then interleave rounds so that machine noise hits both sides alike.
for (let k = 0; k < 5; k++) {
  parseStrict(bytes, options)
  JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'))
}
for (let k = 0; k < ROUNDS; k++) {
  let t0 = performance.now()
  const a = parseStrict(bytes, options) as { items: unknown[] }
  ours.push(performance.now() - t0)
  t0 = performance.now()
  const b = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'))
  base.push(performance.now() - t0)
  sink += a.items.length + b.items.length
}
const m = median(ours)
const mb = median(base)
console.log(`document: ${doc.byteLength} bytes, ${sink / ROUNDS / 2} items, ${ROUNDS} rounds`)
console.log(`parseStrict median: ${m.toFixed(2)} ms`)
console.log(`JSON.parse (incl. decode) median: ${mb.toFixed(2)} ms`)
console.log(`ratio parseStrict / JSON.parse: ${(m / mb).toFixed(2)}x (target <= 3x)`)
