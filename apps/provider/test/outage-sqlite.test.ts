// A full disk under SQLite is answered as an outage: the store's files on a small tmpfs of the test's own, refunds
// running on every binding (REST, MCP 2026-07-28 and 2025-era on the fast paths, and through the SDK on a second
// provider), the disk filled up: `unavailable` (retryable; REST 503 + Retry-After, the fast paths' HTTP answer with
// Retry-After too), never internal_error. Once space is freed the same keys succeed, each with exactly one refund;
// the log names SQLITE_FULL once per provider, and the end of it once. Mounting needs root (CAP_SYS_ADMIN): skipped
// otherwise, with the reason.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { type RunningProvider, startProvider } from '../src/index.js'
import { SECRET } from './helpers.js'
import {
  assertOnlyOutages,
  type Binding,
  capturedLogger,
  mcpBinding,
  refundsByKey,
  restBinding,
  startLoad,
} from './outage-harness.js'

let dir = ''
let skip: string | undefined
let fast: RunningProvider | undefined
let sdk: RunningProvider | undefined
const fastLog = capturedLogger()
const sdkLog = capturedLogger()
let bindings: Binding[] = []
const FAST_BINDINGS = new Set(['rest', 'modern-fast', 'legacy-fast'])

before(async () => {
  if (process.getuid?.() !== 0) {
    skip = 'mounting a tmpfs needs root'
    return
  }
  dir = mkdtempSync(join(tmpdir(), 'tollgate-fulldisk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir], { stdio: 'ignore' })
  } catch {
    rmSync(dir, { recursive: true, force: true })
    dir = ''
    skip = 'cannot mount a tmpfs here'
    return
  }
  fast = await startProvider({
    secrets: [SECRET],
    store: { kind: 'sqlite', file: join(dir, 'fast.sqlite') },
    logger: fastLog.logger,
    inProgressLeaseMs: 1000,
    demoLedger: {},
  })
  sdk = await startProvider({
    secrets: [SECRET],
    store: { kind: 'sqlite', file: join(dir, 'sdk.sqlite') },
    logger: sdkLog.logger,
    inProgressLeaseMs: 1000,
    modernFastPath: false,
    demoLedger: {},
  })
  bindings = [
    restBinding('rest', fast),
    await mcpBinding('modern-fast', fast, 'modern'),
    await mcpBinding('legacy-fast', fast, 'legacy'),
    await mcpBinding('modern-sdk', sdk, 'modern'),
    await mcpBinding('legacy-sdk', sdk, 'legacy'),
  ]
})

after(async () => {
  for (const b of bindings) await b.close().catch(() => {})
  await fast?.close().catch(() => {})
  await sdk?.close().catch(() => {})
  if (dir !== '') {
    execFileSync('umount', [dir], { stdio: 'ignore' })
    rmSync(dir, { recursive: true, force: true })
  }
})

/** Writes a file until the disk refuses (ENOSPC); its path. */
function fillDisk(): string {
  const file = join(dir, 'filler')
  const fd = openSync(file, 'w')
  const chunk = Buffer.alloc(16 * 1024, 1)
  try {
    for (;;) writeSync(fd, chunk)
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOSPC') throw error
  } finally {
    closeSync(fd)
  }
  return file
}

test('a full disk under SQLite: unavailable with Retry-After on every binding, then exactly one refund per key', async (t) => {
  if (skip !== undefined) return t.skip(skip)
  const load = startLoad(bindings, { pauseMs: 50, keyTimeoutMs: 30_000 })
  await load.successes(2, 20_000)
  const atFull = load.seen.length
  const filler = fillDisk()
  // The WAL may still have room it reuses after a checkpoint: refunds go on until a write needs a new page.
  await load.saw('unavailable', atFull, 20_000)
  const refusedBeforeFree = load.seen.slice(atFull).filter((s) => s.code === 'unavailable').length
  unlinkSync(filler)
  await load.successes(2, 30_000)
  await load.stop()

  assertOnlyOutages(load.seen, (b) => FAST_BINDINGS.has(b))
  const refused = load.seen.slice(atFull).filter((s) => s.code === 'unavailable')
  // A full disk is not fixed in a second: callers are told 5 s where HTTP carries it.
  for (const s of refused.filter((x) => FAST_BINDINGS.has(x.binding))) assert.equal(s.retryAfter, '5', s.binding)
  for (const b of FAST_BINDINGS)
    assert.ok(
      refused.some((s) => s.binding === b && s.retryAfter !== null),
      `${b}: an unavailable answer with Retry-After`,
    )
  assert.ok(fast?.diagnostics.fastPathAnswered && fast.diagnostics.legacyFastPathAnswered)
  assert.equal((sdk?.diagnostics.fastPathAnswered ?? 0) + (sdk?.diagnostics.legacyFastPathAnswered ?? 0), 0)

  for (const [p, names, log, label] of [
    [fast, FAST_BINDINGS, fastLog, 'fast'],
    [sdk, new Set(['modern-sdk', 'legacy-sdk']), sdkLog, 'sdk'],
  ] as const) {
    if (p === undefined) continue
    const keys = [...load.done].filter(([b]) => names.has(b)).flatMap(([, k]) => k)
    const refunds = [...(await refundsByKey(p))].filter(([k]) => k.startsWith('outage-'))
    assert.deepEqual(
      refunds.filter(([, n]) => n !== 1),
      [],
      `${label}: a key refunded more than once`,
    )
    assert.deepEqual(refunds.map(([k]) => k).sort(), keys.sort(), `${label}: refunds are the keys that succeeded`)
    const down = log.messages('store unavailable')
    assert.equal(down.length, 1, `${label}: 'store unavailable' lines`)
    assert.deepEqual(down[0]?.store_error, { type: 'SqliteError', code: 'SQLITE_FULL' })
    assert.equal(log.messages('store available again').length, 1, `${label}: 'store available again' lines`)
    assert.equal(log.messages('tool failed').length, 0, `${label}: per-call fault lines`)
    assert.ok(!log.raw.some((l) => l.includes('outage-')), `${label}: an idempotency key was logged`)
  }
  t.diagnostic(
    `${refusedBeforeFree} unavailable answers while full, ${refused.length} in all; ` +
      `${[...load.done.values()].flat().length} keys done`,
  )
})
