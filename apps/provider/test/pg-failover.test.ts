// A PostgreSQL failover under load, as production runs it: a primary with a streaming standby of the test's own, one
// address in front (a TCP forwarder the test repoints, as a managed database's name or a Patroni VIP moves), two
// provider replicas on that address behind HAProxy, closed-loop refund callers on REST and MCP (2026-07-28) through
// the platform client (@tollgate/platform-client), which honours Retry-After within its deadline as the platform
// does. The primary is lost (SIGKILL of the postmaster and every backend: the host gone), the standby promoted, the
// address repointed, the load kept on.
// - synchronous replication: every key answered succeeded before the failover has exactly one refund after it; no key
//   has two; every answer the servers send during the switch (noted per attempt, under the client's retries) is
//   unavailable / in_progress with Retry-After, and every call ends in a result; no caller is refused later than
//   10 s after the loss. Then the old primary rejoins as a standby (pg_rewind) and the address moves to it: read-only
//   (25006) is an outage, and the providers recover by themselves once the address leads to the primary again. And
//   with a ledger outside the database whose refunds take a while, the calls the loss cuts between their claim and
//   their record are resumed within seconds (the process that made the claims ends them), not after the 30 s lease.
// - asynchronous replication, the standby made to lag (frozen for a moment): what is lost is counted, and a retry of
//   each lost key ends with one refund — with the demo ledger in the failed database (the refund vanished with its
//   key), and with a ledger outside it (a SQLite file: the retry finds the first refund instead of refunding again).
// The figures (switch time, keys, lost counts) are printed as test diagnostics.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { type Socket, type Server as TcpServer, connect as tcpConnect, createServer as tcpServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { ProfileToolName, ToolResult } from '@tollgate/contract'
import { MemorySessionStore } from '@tollgate/mcp-endpoint'
import {
  type AttemptOptions,
  type CallContext,
  type CallResult,
  PlatformClient,
  type PlatformClientOptions,
  type ToolOutcome,
  UnexpectedHttpStatus,
} from '@tollgate/platform-client'
import { freeLoopbackPort, startHaproxy } from '@tollgate/test-support'
import pg from 'pg'
import { type BillingPort, type RunningProvider, startProvider } from '../src/index.js'
import { type DemoBilling, demoBilling, SECRET } from './helpers.js'
import { LOAD_CHARGES } from './outage-harness.js'
import { privatePostgresSkip, type ReplicatedPostgres, startReplicatedPostgres } from './private-postgres.js'

const REQUIRED = process.env.TOLLGATE_REQUIRE_SERVICES === '1'
const haproxyMissing =
  spawnSync('haproxy', ['-v']).status === 0
    ? undefined
    : 'haproxy is not installed (sudo apt-get update && sudo apt-get install -y haproxy)'
const skipReason = privatePostgresSkip ?? haproxyMissing
if (skipReason !== undefined && REQUIRED) throw new Error(`${skipReason}, and TOLLGATE_REQUIRE_SERVICES=1`)
const skip = skipReason

/** Waits until `check()` holds, polling; fails naming `what` after `limitMs`. */
async function until(check: () => boolean | Promise<boolean>, what: string, limitMs = 60_000): Promise<void> {
  const started = performance.now()
  while (!(await check())) {
    if (performance.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

// ---- the address in front of the database: a TCP forwarder the test repoints ----

interface Forwarder {
  port: number
  /** New connections go to `port` from now on; `cut` also closes every open one (the old host is gone or fenced). */
  repoint(port: number, cut: boolean): void
  /** Open connections forwarded to `port`. */
  openTo(port: number): number
  /** Stops passing on what the target sends (it waits in buffers), until the connections are cut. */
  holdReplies(): void
  close(): Promise<void>
}

async function startForwarder(target: number): Promise<Forwarder> {
  let to = target
  let holding = false
  const open = new Map<Socket, { port: number; client: Socket }>()
  const server: TcpServer = tcpServer((client) => {
    const port = to
    const upstream = tcpConnect(port, '127.0.0.1')
    open.set(upstream, { port, client })
    const close = () => {
      open.delete(upstream)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', close).on('close', close)
    upstream.on('error', close).on('close', close)
    client.pipe(upstream)
    if (!holding) upstream.pipe(client)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    port: (server.address() as { port: number }).port,
    repoint: (port, cut) => {
      to = port
      if (!cut) return
      for (const [upstream, { client }] of open) {
        upstream.destroy()
        client.destroy()
      }
    },
    openTo: (port) => [...open.values()].filter((c) => c.port === port).length,
    holdReplies: () => {
      holding = true
      for (const [upstream, { client }] of open) {
        upstream.unpipe(client)
        upstream.pause()
      }
    },
    close: async () => {
      for (const [upstream, { client }] of open) {
        upstream.destroy()
        client.destroy()
      }
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

// ---- HAProxy in front of the replicas ----

/**
 * The README's balancer settings (round-robin, /readyz checked every 300 ms, out after two failures, in after two
 * successes, a refused connection redispatched), and HAProxy's own 503 — every replica out, as during a database
 * switch, since all of them share the database — answered as the provider answers an outage: the `unavailable`
 * envelope with Retry-After, so callers wait and retry as for the provider's own.
 */
function haproxyConfig(bind: number, servers: readonly number[]): string {
  const unavailable = JSON.stringify({
    error: { code: 'unavailable', message: 'no provider replica is ready; retry with the same key', retryable: true },
  })
  return `${[
    'global',
    '  maxconn 1024',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout check 1s',
    '  retries 3',
    '  option redispatch 1',
    'frontend provider',
    `  bind 127.0.0.1:${bind}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    `  http-error status 503 content-type application/json string '${unavailable}' hdr retry-after 2`,
    ...servers.map((p, i) => `  server r${i + 1} 127.0.0.1:${p} check inter 300ms fall 2 rise 2`),
  ].join('\n')}\n`
}

/** HAProxy on `haproxyConfig`, ready once it answers /readyz 200 from a replica; resolves with its stop. */
async function startBalancer(dir: string, bind: number, servers: readonly number[]): Promise<() => Promise<void>> {
  const haproxy = await startHaproxy({ dir, config: haproxyConfig(bind, servers), ports: [bind] })
  try {
    await until(async () => {
      if (haproxy.child.exitCode !== null) throw new Error('haproxy exited')
      const res = await fetch(`http://127.0.0.1:${bind}/readyz`).catch(() => undefined)
      return res?.status === 200
    }, 'haproxy to serve a ready replica')
  } catch (error) {
    await haproxy.stop()
    throw error
  }
  return haproxy.stop
}

// ---- callers: the platform client, as the platform calls ----

/** One attempt's answer as the server (or the balancer) sent it, before the client's own retry. */
interface Answered {
  binding: string
  key: string
  /** 'ok', the envelope's code, 'unavailable_http' (the balancer's own 503), or the client's ERR_PLATFORM_… code. */
  code: string
  /** The answer's Retry-After in ms, when it carried one. */
  retryAfterMs: number | undefined
  /** When the attempt was sent and when its answer came (performance.now()). */
  sentAt: number
  at: number
}

const refundRequest = (charge: string) => ({
  transaction_ref: charge,
  amount: { amount_minor: 1, currency: 'USD' },
  reason: 'goodwill',
  dry_run: false,
})

/**
 * The platform client, every attempt's answer noted as it comes (callTool retries through `attempt`): what the
 * servers sent during the switch is counted, not only what the client made of it.
 */
class ObservedClient extends PlatformClient {
  constructor(
    options: PlatformClientOptions,
    private readonly noted: (key: string, answer: Omit<Answered, 'binding' | 'key'>) => void,
  ) {
    super(options)
  }

  override attempt<N extends ProfileToolName>(
    name: N,
    args: Record<string, unknown>,
    context: CallContext,
    options?: AttemptOptions,
  ): Promise<ToolOutcome<ToolResult<N>>>
  override attempt(
    name: string,
    args: Record<string, unknown>,
    context: CallContext,
    options?: AttemptOptions,
  ): Promise<ToolOutcome>
  override async attempt(
    name: string,
    args: Record<string, unknown>,
    context: CallContext,
    options?: AttemptOptions,
  ): Promise<ToolOutcome> {
    const sentAt = performance.now()
    const key = String(args.idempotency_key ?? '')
    try {
      const outcome = await super.attempt(name, args, context, options)
      this.noted(key, {
        code: outcome.kind === 'result' ? 'ok' : outcome.code,
        retryAfterMs: outcome.kind === 'error' ? outcome.retryAfterMs : undefined,
        sentAt,
        at: performance.now(),
      })
      return outcome
    } catch (error) {
      // The balancer's own 503 (every replica out) to an MCP request, or one whose body is not the envelope.
      const http = error instanceof UnexpectedHttpStatus && error.status === 503
      this.noted(key, {
        code: http ? 'unavailable_http' : ((error as { code?: string }).code ?? String(error)),
        retryAfterMs: error instanceof UnexpectedHttpStatus ? error.retryAfterMs : undefined,
        sentAt,
        at: performance.now(),
      })
      throw error
    }
  }
}

interface Caller {
  name: string
  client: PlatformClient
}

/**
 * A platform client on one binding through the balancer: REST on its base URL, MCP (2026-07-28) on its MCP URL;
 * loopback allowed, a call's deadline 30 s, Retry-After honoured up to 10 s (the client's default).
 */
function platformCaller(
  name: string,
  transport: 'rest' | 'mcp',
  baseUrl: string,
  noted?: (answer: Answered) => void,
  signal?: AbortSignal,
): Caller {
  const options: PlatformClientOptions = {
    baseUrl,
    secret: SECRET,
    transport,
    allowPrivate: true,
    callTimeoutMs: 30_000,
    ...(transport === 'mcp' && { era: '2026-07-28' as const }),
    ...(signal !== undefined && { signal }),
  }
  const client =
    noted === undefined
      ? new PlatformClient(options)
      : new ObservedClient(options, (key, answer) => noted({ binding: name, key, ...answer }))
  return { name, client }
}

const refundCall = (caller: Caller, key: string, charge: string) =>
  caller.client.callTool(
    'sr_refund',
    { idempotency_key: key, request: refundRequest(charge) },
    { correlationId: key, channel: 'ticket' },
  )

/** What a call's final answer (after the client's retries) was: 'ok', or what it ended with. */
const finalCode = (r: CallResult): string => (r.kind === 'result' ? 'ok' : r.kind === 'error' ? r.code : `verified`)

interface Load {
  /** Every attempt's answer, as sent. */
  answers: Answered[]
  /** The calls' final answers that were not a success (the client gave up within its deadline, or failed). */
  finalFaults: string[]
  /** Keys answered succeeded: when, on which charge. */
  succeeded: Map<string, { charge: string; at: number }>
  /** Successes per caller answered after `since`. */
  successesSince(since: number): number[]
  stop(): Promise<void>
  /** Ends every loop at its next step, keys unfinished (a failed run's cleanup). */
  abort(): void
}

/**
 * One closed loop per caller: a fresh key on a load charge, called through the platform client (which retries on
 * Retry-After within its deadline); a call that does not end in a result is noted as a fault and called again with
 * the same key, until it succeeds; then the next key.
 */
function startLoad(callers: readonly Caller[], answers: Answered[]): Load {
  const succeeded = new Map<string, { charge: string; at: number }>()
  const finalFaults: string[] = []
  const perCaller = callers.map(() => [] as number[])
  let stopping = false
  let aborted = false
  let n = 0
  const loops = callers.map(async (c, i) => {
    while (!stopping) {
      const key = `failover-${c.name}-${process.pid}-${++n}-${Math.random().toString(16).slice(2, 10)}`
      const charge = LOAD_CHARGES[n % LOAD_CHARGES.length] as string
      const deadline = performance.now() + 60_000
      for (;;) {
        let code: string
        try {
          code = finalCode(await refundCall(c, key, charge))
        } catch (error) {
          code = (error as { code?: string }).code ?? String(error)
        }
        const at = performance.now()
        if (code === 'ok') {
          succeeded.set(key, { charge, at })
          perCaller[i]?.push(at)
          break
        }
        finalFaults.push(`${c.name}: the call ended ${code}`)
        if (aborted) return
        if (at > deadline) throw new Error(`${c.name}: a key not done in 60 s (last ${code})`)
        await new Promise((r) => setTimeout(r, 200))
      }
      // A little room between keys: the machine is shared.
      await new Promise((r) => setTimeout(r, 10))
    }
  })
  const all = Promise.all(loops)
  // A loop that fails stops the run at its next check instead of hanging it.
  let failure: unknown
  all.catch((e: unknown) => {
    failure = e
  })
  return {
    answers,
    finalFaults,
    succeeded,
    successesSince: (since) => {
      if (failure !== undefined) throw failure
      return perCaller.map((ats) => ats.filter((at) => at > since).length)
    },
    stop: async () => {
      stopping = true
      await all
    },
    abort: () => {
      stopping = true
      aborted = true
    },
  }
}

/**
 * Every refusal an answer a caller can act on: unavailable (the provider's, or the balancer's HTTP 503) or
 * in_progress, each with a Retry-After.
 */
function faultsOf(answers: readonly Answered[]): string[] {
  const faults: string[] = []
  for (const a of answers) {
    if (a.code === 'ok') continue
    if (a.code !== 'unavailable' && a.code !== 'unavailable_http' && a.code !== 'in_progress')
      faults.push(`${a.binding}: ${a.code}`)
    else if (a.retryAfterMs === undefined) faults.push(`${a.binding}: ${a.code} without Retry-After`)
  }
  return faults
}

const tally = (answers: readonly Answered[]) => {
  const out: Record<string, number> = {}
  for (const a of answers) out[a.code] = (out[a.code] ?? 0) + 1
  return out
}

// ---- one run ----

interface RunOptions {
  synchronous: boolean
  /** The standby frozen while refunds go on: the writes it did not receive are lost with the primary. */
  lag: boolean
  /** The ledger: the demo ledger in the failed database, or one on a SQLite file of its own. */
  ledger: 'postgres' | 'sqlite'
  /** After the failover: the old primary rejoins as a standby and the address moves to it, then back. */
  demote: boolean
  /** The SQLite ledger's refunds take this long (the calls the loss cuts are then between claim and record). */
  billingDelayMs?: number
}

interface RunFigures {
  keys: number
  /** Loss of the primary → the first success of a call sent after it. */
  switchMs: number
  /** The first refusal any caller got after the loss → the last one. */
  refusedForMs: number
  /** Loss of the primary → the last refusal any caller got. */
  lastRefusalMs: number
  answers: Record<string, number>
  lost: number
  demotion?: { lastRefusalMs: number; answers: Record<string, number> }
}

const EVERY_CALLER = 2 // successes per caller that mark a phase as under way

async function failover(options: RunOptions, diagnostic: (line: string) => void): Promise<RunFigures> {
  const scratch = mkdtempSync(join(tmpdir(), 'tollgate-pg-failover-'))
  let cluster: ReplicatedPostgres | undefined
  let forwarder: Forwarder | undefined
  let replication: Forwarder | undefined
  let demo: DemoBilling | undefined
  const providers: RunningProvider[] = []
  let stopHaproxy: (() => Promise<void>) | undefined
  let load: Load | undefined
  // Ends the clients' waits on Retry-After when a run fails.
  const calls = new AbortController()
  try {
    // The standby streams through a forwarder of its own, which can hold the stream back (a lagging standby: what it
    // has not received is lost with the primary, as no buffer on the way survives the host).
    cluster = await startReplicatedPostgres({
      synchronous: options.synchronous,
      replicationVia: async (port) => {
        replication = await startForwarder(port)
        return replication.port
      },
    })
    const { primary, standby } = cluster
    forwarder = await startForwarder(primary.port)
    const fwd = forwarder
    let billing: BillingPort | undefined
    if (options.ledger === 'sqlite') {
      // A billing system of its own, as a merchant's is: its refunds keyed by the idempotency key in its own database
      // (nothing written with the provider's key records, no one-write claim).
      const delayMs = options.billingDelayMs ?? 0
      demo = await demoBilling((ledger) => ({
        refund: async (key, command) => {
          if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs))
          return ledger.refund(key, command)
        },
      }))
      billing = demo.billing
    }
    for (let i = 0; i < 2; i++)
      providers.push(
        await startProvider({
          secrets: [SECRET],
          logger: false,
          store: {
            kind: 'postgres',
            // A statement's answer may take 2 s, a connection 2 s: what a lost server costs one call at most.
            connectionString: `postgres://postgres@127.0.0.1:${fwd.port}/postgres?query_timeout=2000&connect_timeout=2`,
            schema: 'failover',
          },
          sessionStore: new MemorySessionStore(),
          ...(billing !== undefined ? { billing } : { demoLedger: {} }),
          // A lost key whose claim survived (its outcome did not) is retried once its lease has run out: 5 s, not the
          // default 30 s that would outlast the retrying client's deadline. Every call here takes milliseconds.
          ...(options.lag && { inProgressLeaseMs: 5_000 }),
        }),
      )
    const lbPort = await freeLoopbackPort()
    stopHaproxy = await startBalancer(
      scratch,
      lbPort,
      providers.map((p) => p.port),
    )
    const base = `http://127.0.0.1:${lbPort}`
    const mcpPath = new URL((providers[0] as RunningProvider).url).pathname
    const answers: Answered[] = []
    const noted = (a: Answered) => answers.push(a)
    const running = startLoad(
      [
        platformCaller('rest1', 'rest', base, noted, calls.signal),
        platformCaller('rest2', 'rest', base, noted, calls.signal),
        platformCaller('mcp1', 'mcp', `${base}${mcpPath}`, noted, calls.signal),
        platformCaller('mcp2', 'mcp', `${base}${mcpPath}`, noted, calls.signal),
      ],
      answers,
    )
    load = running
    const everyCaller = (since: number, n = EVERY_CALLER) => running.successesSince(since).every((c) => c >= n)

    await until(() => everyCaller(0, 5), 'the load to run')
    let lagged = 0
    if (options.lag) {
      // The standby stops receiving; the primary goes on committing and answering.
      replication?.holdReplies()
      const frozenAt = performance.now()
      await until(() => everyCaller(frozenAt, 4), 'refunds answered while the standby lags')
      lagged = [...running.succeeded.values()].filter((s) => s.at > frozenAt).length
    }
    const answeredBefore = new Set(running.succeeded.keys())
    const lostAt = performance.now()
    await primary.crash()
    // What was on its way to the standby goes with the host.
    replication?.repoint(primary.port, true)
    await standby.promote()
    fwd.repoint(standby.port, true)
    const repointedMs = performance.now() - lostAt
    await until(() => everyCaller(lostAt + repointedMs, 5), 'every caller to succeed after the switch')
    const afterSwitch = running.answers.filter((a) => a.at > lostAt)
    const firstOk = afterSwitch.filter((a) => a.code === 'ok' && a.sentAt > lostAt).sort((x, y) => x.at - y.at)[0]
    const refusals = afterSwitch.filter((a) => a.code !== 'ok')
    const figures: RunFigures = {
      keys: 0,
      switchMs: Math.round((firstOk?.at ?? lostAt) - lostAt),
      refusedForMs: Math.round(
        refusals.length === 0 ? 0 : (refusals.at(-1) as Answered).at - (refusals[0] as Answered).at,
      ),
      lastRefusalMs: Math.round(refusals.length === 0 ? 0 : (refusals.at(-1) as Answered).at - lostAt),
      answers: tally(afterSwitch),
      lost: 0,
    }
    diagnostic(
      `failover: promote + repoint ${Math.round(repointedMs)} ms; first success of a call sent after the loss ${figures.switchMs} ms; refusals for ${figures.refusedForMs} ms, the last ${figures.lastRefusalMs} ms after the loss`,
    )

    if (options.demote) {
      // The old primary rejoins as a standby of the new one, and the address moves to it (its connections cut, as
      // when a host is fenced): writes now meet a read-only server.
      await primary.rejoinAsStandbyOf(standby)
      const movedAt = performance.now()
      const atMove = running.answers.length
      fwd.repoint(primary.port, true)
      await until(
        () => running.answers.slice(atMove).filter((a) => a.code === 'unavailable').length >= 8,
        'refunds refused by the read-only server',
      )
      // Back to the primary, without cutting: connections opened on the standby meanwhile must be let go by the
      // provider itself.
      const backAt = performance.now()
      fwd.repoint(standby.port, false)
      await until(() => everyCaller(backAt), 'every caller to succeed after the address is back')
      await until(() => fwd.openTo(primary.port) === 0, 'the providers to close their connections to the standby')
      const during = running.answers.slice(atMove)
      const refused = during.filter((a) => a.code !== 'ok')
      figures.demotion = {
        lastRefusalMs: Math.round(refused.length === 0 ? 0 : (refused.at(-1) as Answered).at - backAt),
        answers: tally(during),
      }
      diagnostic(
        `demotion: read-only for ${Math.round(backAt - movedAt)} ms; last refusal ${figures.demotion.lastRefusalMs} ms after the address came back; answers ${JSON.stringify(figures.demotion.answers)}`,
      )
    }
    await running.stop()
    figures.keys = running.succeeded.size

    // What the ledger holds now, per key.
    const counts = new Map<string, number>()
    const ledgerRead = demo !== undefined ? demo.billing : (providers[0] as RunningProvider).billing
    for (const charge of LOAD_CHARGES) {
      const tx = await ledgerRead.getTransaction(charge)
      for (const r of (tx?.refunds ?? []) as { idempotency_key?: string }[]) {
        const k = r.idempotency_key ?? ''
        counts.set(k, (counts.get(k) ?? 0) + 1)
      }
    }
    const doubled = [...counts].filter(([, n]) => n > 1)
    assert.deepEqual(doubled, [], 'no key has two refunds')
    // The keys' records as the promoted database holds them.
    const db = new pg.Client({ connectionString: standby.url() })
    await db.connect()
    let recorded: Set<string>
    try {
      // A key whose record there is still its claim ('running') lost its outcome too: the claim reached the standby,
      // the refund and its record (one later transaction) did not. Counting it as kept failed this test about one
      // run in five (seen on the code before and after issue 30's redesign alike).
      const r = await db.query<{ key: string }>("SELECT key FROM failover.operations WHERE status <> 'running'")
      recorded = new Set(r.rows.map((row) => row.key))
    } finally {
      await db.end()
    }
    // Lost: answered succeeded, and after the failover the database has no record of the key (demo ledger: nor its
    // refund, which shared the key's transaction). Every key answered is judged, not only those answered before the
    // loss: a commit made as the primary was being killed can be answered a moment after `lostAt`.
    const lost = [...running.succeeded.keys()].filter((k) => !recorded.has(k))
    const lostAnsweredAfter = lost.filter((k) => !answeredBefore.has(k)).length
    figures.lost = lost.length
    diagnostic(
      `${options.synchronous ? 'synchronous' : 'asynchronous'}, ledger ${options.ledger}: ${figures.keys} keys, ${answeredBefore.size} answered before the loss${options.lag ? ` (${lagged} while the standby lagged)` : ''}, ${lost.length} lost (${lostAnsweredAfter} of them answered after the loss began); answers after the loss ${JSON.stringify(figures.answers)}`,
    )
    for (const key of running.succeeded.keys()) {
      if (lost.includes(key)) continue
      assert.equal(counts.get(key), 1, 'every key answered succeeded and kept has exactly one refund')
    }
    // A retry of each lost key (same key, same request) ends with one refund: the platform client's call, which
    // waits out any unavailable / in_progress on its Retry-After.
    const retrier = platformCaller('retry', 'rest', base)
    for (const key of lost) {
      const { charge } = running.succeeded.get(key) as { charge: string }
      const again = await refundCall(retrier, key, charge)
      assert.equal(finalCode(again), 'ok', 'the retry of a lost key succeeds')
      const tx = await ledgerRead.getTransaction(charge)
      const mine = ((tx?.refunds ?? []) as { idempotency_key?: string; refund_ref?: string }[]).filter(
        (r) => r.idempotency_key === key,
      )
      assert.equal(mine.length, 1, 'a retried lost key has one refund')
      if (options.ledger === 'sqlite') assert.equal(counts.get(key), 1, 'the first refund was kept outside')
    }
    assert.deepEqual(faultsOf(running.answers), [], 'servers answered only unavailable / in_progress with Retry-After')
    assert.deepEqual(running.finalFaults, [], "every call ended in a result within the client's deadline")
    return figures
  } finally {
    load?.abort()
    calls.abort()
    await stopHaproxy?.()
    for (const p of providers) await p.close().catch(() => {})
    await forwarder?.close()
    await replication?.close()
    await cluster?.dispose()
    await demo?.dispose()
    rmSync(scratch, { recursive: true, force: true })
  }
}

test('synchronous standby: nothing answered is lost or doubled, refusals end within 10 s, a read-only address is an outage the providers recover from', {
  skip,
}, async (t) => {
  const f = await failover({ synchronous: true, lag: false, ledger: 'postgres', demote: true }, (l) => t.diagnostic(l))
  assert.equal(f.lost, 0, 'with a synchronous standby nothing answered is lost')
  assert.ok(f.lastRefusalMs <= 10_000, `no caller refused later than 10 s after the loss (${f.lastRefusalMs} ms)`)
  assert.ok((f.demotion?.lastRefusalMs ?? 0) <= 10_000, 'refusals end within 10 s of the address coming back')
})

test('synchronous standby, ledger outside the database: calls cut between their claim and their record are resumed within seconds, not after the lease', {
  skip,
}, async (t) => {
  // Each refund spends 40 ms in billing, between its claim and its record: the calls the loss cuts are there, their
  // claims on the standby (the lease 30 s) and their records lost. Their retries must not wait out the lease.
  const f = await failover(
    { synchronous: true, lag: false, ledger: 'sqlite', demote: false, billingDelayMs: 40 },
    (l) => t.diagnostic(l),
  )
  assert.equal(f.lost, 0, 'with a synchronous standby nothing answered is lost')
  assert.ok(f.lastRefusalMs <= 10_000, `no caller refused later than 10 s after the loss (${f.lastRefusalMs} ms)`)
})

test('asynchronous standby, demo ledger: what the standby lacked is lost, and a retry of a lost key refunds once', {
  skip,
}, async (t) => {
  const f = await failover({ synchronous: false, lag: true, ledger: 'postgres', demote: false }, (l) => t.diagnostic(l))
  assert.ok(f.lost > 0, 'the refunds answered while the standby lagged are lost with the primary')
  assert.ok(f.lastRefusalMs <= 10_000, `no caller refused later than 10 s after the loss (${f.lastRefusalMs} ms)`)
})

test('asynchronous standby, ledger outside the database: a lost key is retried into its first refund, never a second', {
  skip,
}, async (t) => {
  const f = await failover({ synchronous: false, lag: true, ledger: 'sqlite', demote: false }, (l) => t.diagnostic(l))
  assert.ok(f.lost > 0, 'the keys answered while the standby lagged are lost with the primary')
  assert.ok(f.lastRefusalMs <= 10_000, `no caller refused later than 10 s after the loss (${f.lastRefusalMs} ms)`)
})
