// An adapter's mistakes are named (issue 23 §3): an object from the BillingPort that fails its schema is the same
// internal_error on every binding, era and path, logged as a fault naming the tool, the schema paths and the $id —
// never the values; in sandbox the answer names the paths too. A port that throws keeps the contract's answer and
// the log carries the error's class, message and stack. startProvider refuses an invalid describe() and a declared
// capability whose method the port lacks. Real pino output, official SDK clients, real HTTP.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Transaction } from '@tollgate/contract'
import { pino } from 'pino'
import {
  type BillingPort,
  DemoLedger,
  DescribeInvalidError,
  demoLedgerStore,
  openSqliteStore,
  PortIncompleteError,
  type RunningProvider,
  startProvider,
} from '../src/index.js'
import { connect, delegateBilling, type Era, newKey, SECRET } from './helpers.js'
import { rest } from './rest-helpers.js'

// A value that must never reach a log line or an answer.
const PRIVATE_TEXT = 'card-holder-note-7f3a'
const TRANSACTION_ID = 'https://schemas.supportroute.dev/merchant-provider/v1/transaction.json'

interface Captured {
  lines: Record<string, unknown>[]
}

function capturingLogger(into: Captured) {
  // Real pino: its own serialization of each record, written as one JSON line.
  return pino(
    { level: 'info' },
    { write: (line: string) => void into.lines.push(JSON.parse(line) as Record<string, unknown>) },
  )
}

/** The demo ledger, except: ch_broken answers a transaction with no settlement and a private note; refunds of
 * ch_throws throw (a processor timeout). */
async function brokenPort(dir: string) {
  const ledgerStore = openSqliteStore(join(dir, 'ledger.sqlite'))
  const ledger = new DemoLedger(demoLedgerStore(ledgerStore))
  await ledger.seed()
  const port = delegateBilling(ledger, {
    appliesGenericRefusals: false,
    getTransaction: async (ref: string) => {
      if (ref !== 'ch_broken') return ledger.getTransaction(ref)
      const good = (await ledger.getTransaction('ch_1001')) as Transaction
      const { settlement: _, ...withoutSettlement } = { ...good, transaction_ref: 'ch_broken' }
      // The cast stands for an adapter whose mistake the compiler cannot see (JSON from elsewhere).
      return { ...withoutSettlement, description: PRIVATE_TEXT } as unknown as Transaction
    },
    refund: async (key, command) => {
      if (command.transaction_ref === 'ch_1001' && command.amount.amount_minor === 13) {
        throw new ProcessorTimeout('the processor did not answer within 10 s')
      }
      return ledger.refund(key, command)
    },
  })
  return { port, close: () => ledgerStore.close() }
}

class ProcessorTimeout extends Error {}

const start = (
  billing: BillingPort,
  logger: pino.Logger,
  options: { modernFastPath?: boolean; secret?: string } = {},
) =>
  startProvider({
    secrets: [options.secret ?? SECRET],
    billing,
    logger,
    store: { kind: 'sqlite', file: join(mkdtempSync(join(tmpdir(), 'tollgate-faults-')), 'keys.sqlite') },
    ...(options.modernFastPath !== undefined && { modernFastPath: options.modernFastPath }),
  })

describe('an object that fails its schema', () => {
  let dir: string
  let broken: Awaited<ReturnType<typeof brokenPort>>
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-faults-'))
    broken = await brokenPort(dir)
  })
  after(async () => {
    await broken.close()
    rmSync(dir, { recursive: true, force: true })
  })

  for (const fastPath of [true, false]) {
    test(`sandbox, fast path ${fastPath ? 'on' : 'off'}: MCP (2026-07-28, 2025 v2, 2025 v1) and REST answer the same internal_error naming the path; each is logged as a fault`, async () => {
      const captured: Captured = { lines: [] }
      const p = await start(broken.port, capturingLogger(captured), { modernFastPath: fastPath })
      try {
        const messages: string[] = []
        for (const era of ['modern', 'legacy', 'v1'] as Era[]) {
          const c = await connect(p.url, era)
          try {
            const r = await c.callTool(
              'sr_get_transaction',
              { transaction_ref: 'ch_broken' },
              {
                'dev.supportroute/request_id': `req-${era}`,
              },
            )
            assert.equal(r.isError, true, era)
            const error = (r.structuredContent as { error: { code: string; message: string; retryable: boolean } })
              .error
            assert.equal(error.code, 'internal_error', era)
            assert.equal(error.retryable, true)
            messages.push(error.message)
          } finally {
            await c.close()
          }
        }
        const viaRest = await rest(p.baseUrl, 'GET', '/v1/transactions/ch_broken', {
          headers: { 'x-supportroute-request-id': 'req-rest' },
        })
        assert.equal(viaRest.status, 500)
        assert.equal((viaRest.json.error as { code: string }).code, 'internal_error')
        messages.push((viaRest.json.error as { message: string }).message)
        // The same answer everywhere, and it names the field.
        assert.deepEqual(new Set(messages).size, 1, messages.join(' | '))
        assert.match(messages[0] as string, /transaction\.settlement: required/)
        assert.equal(messages[0]?.includes(PRIVATE_TEXT), false)
        if (fastPath) assert.ok(p.diagnostics.fastPathAnswered + p.diagnostics.legacyFastPathAnswered >= 2)

        for (const requestId of ['req-modern', 'req-legacy', 'req-v1', 'req-rest']) {
          const fault = captured.lines.find(
            (l) => l.msg === 'tool answer failed its schema' && l.request_id === requestId,
          )
          assert.ok(fault, `no fault line for ${requestId}`)
          assert.equal(fault.level, 50) // error
          assert.equal(fault.tool, 'sr_get_transaction')
          assert.equal(fault.schema, TRANSACTION_ID)
          assert.deepEqual(fault.errors, ['transaction.settlement: required'])
          const call = captured.lines.find((l) => l.msg === 'tool call' && l.request_id === requestId)
          assert.ok(call, `no call line for ${requestId}`)
          assert.equal(call.outcome, 'internal_error')
          assert.equal(call.fault, 'invalid_output')
        }
        assert.equal(JSON.stringify(captured.lines).includes(PRIVATE_TEXT), false, 'a value reached the log')
        assert.equal(
          captured.lines.some((l) => l.msg === 'tool call' && l.outcome === 'ok' && l.tool === 'sr_get_transaction'),
          false,
        )
      } finally {
        await p.close()
      }
    })
  }

  test('production: the answer is internal_error without the path; the log still names it', async () => {
    const captured: Captured = { lines: [] }
    const secret = 'srmp_production_faults_0123456789abcdef'
    const p = await start(broken.port, capturingLogger(captured), { secret })
    try {
      const viaRest = await rest(p.baseUrl, 'GET', '/v1/transactions/ch_broken', { secret })
      assert.equal(viaRest.status, 500)
      const error = viaRest.json.error as { code: string; message: string }
      assert.equal(error.code, 'internal_error')
      assert.equal(error.message.includes('settlement'), false)
      const c = await connect(p.url, 'modern', { secret })
      try {
        const r = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_broken' })
        assert.deepEqual(r.structuredContent, viaRest.json)
      } finally {
        await c.close()
      }
      const faults = captured.lines.filter((l) => l.msg === 'tool answer failed its schema')
      assert.equal(faults.length, 2)
      for (const f of faults) assert.deepEqual(f.errors, ['transaction.settlement: required'])
    } finally {
      await p.close()
    }
  })

  test('a port that throws: the answer stays unavailable, the log names the class, message and stack', async () => {
    const captured: Captured = { lines: [] }
    const p = await start(broken.port, capturingLogger(captured))
    try {
      const key = newKey()
      const request = { transaction_ref: 'ch_1001', amount: { amount_minor: 13, currency: 'USD' }, reason: 'goodwill' }
      const viaRest = await rest(p.baseUrl, 'POST', '/v1/refunds', { body: { ...request, dry_run: false }, key })
      assert.equal(viaRest.status, 503)
      assert.equal((viaRest.json.error as { code: string }).code, 'unavailable')
      const c = await connect(p.url, 'modern')
      try {
        const r = await c.callTool('sr_refund', { idempotency_key: newKey(), request: { ...request, dry_run: false } })
        assert.equal((r.structuredContent as { error: { code: string } }).error.code, 'unavailable')
      } finally {
        await c.close()
      }
      const failed = captured.lines.filter((l) => l.msg === 'tool failed')
      assert.equal(failed.length, 2)
      for (const line of failed) {
        assert.equal(line.level, 50)
        assert.equal(line.tool, 'sr_refund')
        assert.equal(line.fault, 'exception')
        const err = line.exception as { type: string; message: string; stack: string }
        assert.equal(err.type, 'ProcessorTimeout')
        assert.equal(err.message, 'the processor did not answer within 10 s')
        assert.match(err.stack, /adapter-faults\.test\.ts/)
        // No argument values: not the key, not the amount object.
        assert.equal(JSON.stringify(line).includes(key), false)
      }
      const calls = captured.lines.filter((l) => l.msg === 'tool call' && l.tool === 'sr_refund')
      assert.deepEqual(
        calls.map((l) => [l.outcome, l.fault]),
        [
          ['unavailable', 'exception'],
          ['unavailable', 'exception'],
        ],
      )
    } finally {
      await p.close()
    }
  })
})

describe('startProvider checks the port before it listens', () => {
  let dir: string
  let ledger: DemoLedger
  let close: () => Promise<void>
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-describe-'))
    const store = openSqliteStore(join(dir, 'ledger.sqlite'))
    ledger = new DemoLedger(demoLedgerStore(store))
    await ledger.seed()
    close = () => store.close()
  })
  after(async () => {
    await close()
    rmSync(dir, { recursive: true, force: true })
  })
  const starting = (billing: BillingPort): Promise<RunningProvider> => start(billing, pino({ enabled: false }))

  test('an invalid describe() is ERR_PROVIDER_DESCRIBE_INVALID naming the paths', async () => {
    const described = await ledger.describe()
    const { outcome_callbacks: _, ...capabilities } = described.capabilities
    const billing = delegateBilling(ledger, {
      describe: async () => ({ ...described, contract_version: 1, capabilities }) as never,
    })
    await assert.rejects(starting(billing), (error: unknown) => {
      assert.ok(error instanceof DescribeInvalidError)
      assert.equal(error.code, 'ERR_PROVIDER_DESCRIBE_INVALID')
      assert.deepEqual(error.faults, [
        'describe.contract_version: must be string',
        'describe.capabilities.outcome_callbacks: required',
      ])
      assert.match(error.message, /describe\.capabilities\.outcome_callbacks: required/)
      return true
    })
  })

  test('payment_attempts without listPaymentAttempts is ERR_PROVIDER_PORT_INCOMPLETE naming both', async () => {
    const billing = delegateBilling(ledger, {})
    delete (billing as { listPaymentAttempts?: unknown }).listPaymentAttempts
    await assert.rejects(starting(billing), (error: unknown) => {
      assert.ok(error instanceof PortIncompleteError)
      assert.equal(error.code, 'ERR_PROVIDER_PORT_INCOMPLETE')
      assert.deepEqual(error.missing, ['listPaymentAttempts'])
      assert.equal(
        error.message,
        'describe() declares capabilities.payment_attempts but BillingPort.listPaymentAttempts() is missing',
      )
      return true
    })
    // The same port without the capability starts.
    const described = await ledger.describe()
    const without = delegateBilling(billing, {
      describe: async () => ({ ...described, capabilities: { ...described.capabilities, payment_attempts: false } }),
    })
    delete (without as { listPaymentAttempts?: unknown }).listPaymentAttempts
    const p = await starting(without)
    await p.close()
  })
})
