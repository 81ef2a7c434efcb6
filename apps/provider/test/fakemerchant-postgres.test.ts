// fakemerchant on PostgreSQL through the real binary: --database-url (or DATABASE_URL) and --database-schema run the
// demo there, across restarts; a bad value is a usage error naming the flag (exit 2); an unreachable database is
// waited for, with one line naming the flag, and the URL's password never shows.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { runFakemerchant } from './fakemerchant-process.js'
import { attempt, type CallResult, newKey, SECRET } from './helpers.js'
import { dropSchemas, PG_URL, probePostgres, uniqueSchema } from './postgres.js'

interface Started {
  url: string
  stdout: string
  stderr(): string
  kill(): Promise<void>
  stop(): Promise<void>
}

/** Starts fakemerchant; resolves when it serves (or rejects with its exit code and output). */
async function start(args: string[], env: Record<string, string> = {}): Promise<Started> {
  const run = runFakemerchant(['--port', '0', ...args], { ...process.env, SIGNING_SECRET: SECRET, ...env })
  const url = await run.serving()
  return {
    url,
    stdout: run.stdout(),
    stderr: run.stderr,
    kill: async () => {
      run.child.kill('SIGKILL')
      await run.exited
    },
    stop: async () => {
      run.child.kill('SIGTERM')
      await run.exited
    },
  }
}

/** Runs fakemerchant expecting it to refuse to start: its exit code and output. */
async function refused(args: string[], env: Record<string, string> = {}) {
  try {
    const s = await start(args, env)
    await s.stop()
    assert.fail('fakemerchant started')
  } catch (e) {
    const { code, stderr, stdout } = e as { code: number; stderr: string; stdout: string }
    return { code, stderr, stdout }
  }
}

const refund = (key: string) => ({
  idempotency_key: key,
  request: {
    transaction_ref: 'ch_9001',
    amount: { amount_minor: 210, currency: 'USD' },
    reason: 'goodwill',
    dry_run: false,
  },
})

const pgSkip = await probePostgres()

describe('fakemerchant on PostgreSQL', { skip: pgSkip }, () => {
  const schema = uniqueSchema('fakemerchant')
  after(() => dropSchemas(schema))

  test('--database-url runs the demo there; a restart with DATABASE_URL replays the key from the same schema', async () => {
    const key = newKey()
    const first = await start(['--database-url', PG_URL, '--database-schema', schema])
    let answer: unknown
    try {
      assert.match(first.stdout, new RegExp(`data: PostgreSQL schema ${schema} \\(--database-url\\)`))
      const r = await attempt(first.url, 'modern', 'sr_refund', refund(key))
      assert.equal(r.isError, false)
      answer = r.structuredContent
    } finally {
      await first.stop()
    }
    const second = await start(['--database-schema', schema], { DATABASE_URL: PG_URL })
    try {
      assert.match(second.stdout, /\(DATABASE_URL\)/)
      const again = await attempt(second.url, 'legacy', 'sr_refund', refund(key))
      assert.deepEqual(again.structuredContent, answer)
      const tx = await attempt(second.url, 'modern', 'sr_get_transaction', { transaction_ref: 'ch_9001' })
      const refunds = (tx.structuredContent?.refunds ?? []) as { idempotency_key?: string }[]
      assert.equal(refunds.filter((x) => x.idempotency_key === key).length, 1)
    } finally {
      await second.stop()
    }
  })
})

describe('fakemerchant on PostgreSQL across a crash', { skip: pgSkip }, () => {
  const schema = uniqueSchema('fakemerchant_crash')
  after(() => dropSchemas(schema))
  const full = (key: string) => ({
    idempotency_key: key,
    // The full amount: a blind re-run would be refused (nothing left), so only billing.lookup(key) can answer right.
    request: {
      transaction_ref: 'ch_1001',
      amount: { amount_minor: 4999, currency: 'USD' },
      reason: 'goodwill',
      dry_run: false,
    },
  })

  test('SIGKILL between the ledger commit and the outcome: a retry on a new process finishes it, one refund', async () => {
    const flags = ['--database-url', PG_URL, '--database-schema', schema, '--lease-ms', '200']
    const first = await start(flags, { TOLLGATE_PROVIDER_TEST_HANG_AFTER_REFUND: 'ch_1001' })
    const key = newKey()
    const inflight = attempt(first.url, 'modern', 'sr_refund', full(key)).catch((e: unknown) => e)
    for (let i = 0; i < 500 && !first.stderr().includes('TEST-HOOK hanging after refund commit'); i++) await sleep(20)
    await first.kill()
    assert.ok((await inflight) instanceof Error, 'the attempt in flight never got an answer')
    const second = await start(flags)
    try {
      let answer: CallResult | undefined
      for (let i = 0; i < 200; i++) {
        answer = await attempt(second.url, 'modern', 'sr_refund', full(key))
        if ((answer.structuredContent?.error as { code: string } | undefined)?.code !== 'in_progress') break
        await sleep(50)
      }
      assert.equal(answer?.structuredContent?.status, 'succeeded', JSON.stringify(answer?.structuredContent))
      const tx = await attempt(second.url, 'legacy', 'sr_get_transaction', { transaction_ref: 'ch_1001' })
      const refunds = (tx.structuredContent?.refunds ?? []) as { idempotency_key?: string }[]
      assert.deepEqual(
        refunds.map((r) => r.idempotency_key),
        [key],
      )
    } finally {
      await second.stop()
    }
  })
})

describe('fakemerchant store flags', () => {
  test('a URL that is not postgres:// is a usage error naming the flag (or DATABASE_URL)', async () => {
    const flag = await refused(['--database-url', 'mysql://root:hunter2secret@127.0.0.1/x'])
    assert.equal(flag.code, 2)
    assert.equal(
      flag.stderr,
      'fakemerchant: --database-url must be a postgres:// or postgresql:// URL\nsee fakemerchant --help\n',
    )
    const env = await refused([], { DATABASE_URL: 'not a url' })
    assert.equal(env.code, 2)
    assert.match(env.stderr, /^fakemerchant: DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL\n/)
  })

  test('a bad --database-schema, a schema without a URL, --db with --database-url, --durability on PostgreSQL: exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['--database-url', PG_URL, '--database-schema', 'Robert"; DROP'], /--database-schema must be/],
      [['--database-schema', 'demo'], /--database-schema needs --database-url/],
      [
        ['--database-url', PG_URL, '--db', '/tmp/x.sqlite'],
        /^fakemerchant: --db and --database-url exclude each other: give one$/m,
      ],
      [['--database-url', PG_URL, '--durability', 'power-loss'], /--durability applies to the SQLite store/],
    ]
    for (const [args, message] of cases) {
      const r = await refused(args)
      assert.equal(r.code, 2, args.join(' '))
      assert.match(r.stderr, message)
      assert.match(r.stderr, /\nsee fakemerchant --help\n$/)
      assert.equal(r.stderr.split('\n').length, 3)
    }
  })

  test('an unreachable database: one line naming --database-url and the reason, never the URL or its password; it waits', async () => {
    const url = 'postgres://postgres:s3cr3t-pw-4711@127.0.0.1:1/test'
    const run = runFakemerchant(['--port', '0', '--database-url', url], { ...process.env, SIGNING_SECRET: SECRET })
    const line =
      'fakemerchant: cannot open the PostgreSQL database given by --database-url: the connection was refused (is PostgreSQL running there?); waiting for it (/readyz answers 503 until it opens)'
    await run.says(line)
    // Not a crash loop: still waiting, still one line, after a few retries; a SIGTERM ends the wait with status 0.
    await sleep(1_600)
    assert.equal(run.child.exitCode, null)
    run.child.kill('SIGTERM')
    const r = { code: await run.exited, stderr: run.stderr(), stdout: run.stdout() }
    assert.equal(r.code, 0)
    assert.deepEqual(run.said(), [line])
    assert.doesNotMatch(r.stderr + r.stdout, /s3cr3t|127\.0\.0\.1:1|postgres:\/\//)
  })
})
