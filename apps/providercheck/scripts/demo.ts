// npm run demo: for each transport (MCP, then REST), fakemerchant (the real provider on demo data) on a fresh
// temporary SQLite file with a freshly generated sandbox secret on a free port; providercheck against it with the
// seed's fixtures, lines streamed; the sealed report and its HTML page written and the seal verified; the server
// stopped. Exits non-zero when either transport's run (or its seal) fails.
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, parse, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { startProvider } from '@tollgate/provider'
import { main, type Output } from '../src/index.js'

const FIXTURE_FLAGS = [
  '-tenant',
  '0199a3c1-0a0b-7c0d-8e0f-101112131415',
  '-customer',
  'cus_1001',
  '-transaction',
  'ch_1001',
  '-subscription',
  'sub_1001',
]

export type Transport = 'mcp' | 'rest'

export interface DemoOptions {
  io: Output
  /** Keep the MCP run's sealed report as this file and the REST run's beside it (-rest before the extension). */
  kept?: string | undefined
  /** How a fresh provider is started: the real one by default (tests pass a misconfigured one). */
  start?: (options: Parameters<typeof startProvider>[0], transport: Transport) => ReturnType<typeof startProvider>
  /** Registers a cleanup to run on Ctrl-C. */
  onCleanup?: (cleanup: () => Promise<void>) => void
}

/** Both transports' demos, each against its own fresh provider: 0 only when both passed and both seals verify. */
export async function runDemo(options: DemoOptions): Promise<number> {
  const codes = [await demo('mcp', options), await demo('rest', options)]
  const { io } = options
  if (options.kept === undefined)
    io.out('(the reports and their pages go with the temporary directories; PROVIDERCHECK_DEMO_REPORT=FILE keeps them)')
  io.out(`demo: mcp ${codes[0] === 0 ? 'PASS' : 'FAIL'}, rest ${codes[1] === 0 ? 'PASS' : 'FAIL'}`)
  return codes.find((c) => c !== 0) ?? 0
}

/** One transport's demo against its own fresh provider; returns the kit's exit status (or the seal's). */
async function demo(transport: Transport, options: DemoOptions): Promise<number> {
  const { io, kept } = options
  const secret = `srmps_${randomBytes(24).toString('hex')}`
  const dir = mkdtempSync(join(tmpdir(), `providercheck-demo-${transport}-`))
  const provider = await (options.start ?? startProvider)(
    {
      secrets: [secret],
      store: { kind: 'sqlite', file: join(dir, 'fakemerchant.sqlite') },
      port: 0,
      logger: false,
      demoLedger: {},
    },
    transport,
  )
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await provider.close()
    rmSync(dir, { recursive: true, force: true })
  }
  options.onCleanup?.(stop)
  try {
    const url = transport === 'mcp' ? provider.url : provider.baseUrl
    io.out(`fakemerchant: ${url} (${transport}; fresh SQLite in a temporary directory, new sandbox secret)`)
    const env = { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: secret }
    // `kept` keeps the sealed report (with its HTML page and secret beside it); by default all go with the
    // temporary directory. A relative path is relative to where the user ran npm (INIT_CWD), not the package folder.
    const keptPath = kept === undefined ? undefined : resolve(process.env.INIT_CWD ?? '.', kept)
    const report =
      keptPath === undefined
        ? join(dir, 'report.json')
        : transport === 'mcp'
          ? keptPath
          : keptPath.replace(/(\.[^./]*)?$/, (ext) => `-rest${ext}`)
    const page = besideReport(report, '.html')
    const argv = ['-sandbox', '-transport', transport, '-allow-private', '-base-url', url, ...FIXTURE_FLAGS]
    io.out(`$ providercheck ${argv.join(' ')} -json report.json -html report.html`)
    let code = await main([...argv, '-json', report, '-html', page], env, io)
    io.out('$ providercheck verify report.json')
    // A report that does not verify fails the demo even when every check passed.
    const verified = await main(['verify', report], env, io)
    if (code === 0 && verified !== 0) code = verified
    if (keptPath !== undefined) keepSecret(report, secret, io)
    return code
  } finally {
    await stop()
  }
}

/** The report's path with another extension: report.json → report.html. */
function besideReport(path: string, extension: string): string {
  const { dir: folder, name } = parse(path)
  return join(folder, `${name}${extension}`)
}

// The seal can only be checked with the demo's random secret: keep it beside the report in a file only its owner
// can read, and print the command that reads it. The secret itself never reaches stdout.
function keepSecret(reportPath: string, secret: string, io: Output): void {
  const secretFile = besideReport(reportPath, '.secret')
  writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 })
  chmodSync(secretFile, 0o600) // an existing file keeps its old mode on write
  io.out(`kept: ${reportPath} (sealed) and ${besideReport(reportPath, '.html')} (open it in a browser)`)
  io.out(`the demo's signing secret is in ${secretFile} (mode 0600); check the seal with:`)
  io.out(
    `  PROVIDERCHECK_SANDBOX_SIGNING_SECRET="$(cat ${shellQuote(secretFile)})" npx providercheck verify ${shellQuote(reportPath)}`,
  )
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`
}

// Run as a script (npm run demo): print to the terminal; PROVIDERCHECK_DEMO_REPORT=FILE keeps the reports.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const cleanups: (() => Promise<void>)[] = []
  process.once('SIGINT', () => {
    void Promise.all(cleanups.map((c) => c())).then(() => process.exit(130))
  })
  process.exitCode = await runDemo({
    io: { out: (line) => process.stdout.write(`${line}\n`), err: (line) => process.stderr.write(`${line}\n`) },
    kept: process.env.PROVIDERCHECK_DEMO_REPORT,
    onCleanup: (c) => cleanups.push(c),
  })
}
