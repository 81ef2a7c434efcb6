// npm run demo: for each transport (MCP, then REST), fakemerchant (the real provider on demo data) on a fresh
// temporary SQLite file with a freshly generated sandbox secret on a free port; providercheck against it with the
// seed's fixtures, lines streamed; the sealed report verified; the server stopped. Exits non-zero when either
// transport's run (or its seal) fails.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startProvider } from '@tollgate/provider'
import { main, type Output } from '../src/index.js'

const io: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}
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
// PROVIDERCHECK_DEMO_REPORT=FILE keeps the MCP run's sealed report as FILE and the REST run's beside it
// (FILE with -rest before the extension); by default both go with the temporary directories.
const kept = process.env.PROVIDERCHECK_DEMO_REPORT
const cleanups: (() => Promise<void>)[] = []
process.once('SIGINT', () => {
  void Promise.all(cleanups.map((c) => c())).then(() => process.exit(130))
})

/** One transport's demo against its own fresh provider; returns the kit's exit status (or the seal's). */
async function demo(transport: 'mcp' | 'rest'): Promise<number> {
  const secret = `srmps_${randomBytes(24).toString('hex')}`
  const dir = mkdtempSync(join(tmpdir(), `providercheck-demo-${transport}-`))
  const provider = await startProvider({
    secrets: [secret],
    store: { kind: 'sqlite', file: join(dir, 'fakemerchant.sqlite') },
    port: 0,
    logger: false,
  })
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await provider.close()
    rmSync(dir, { recursive: true, force: true })
  }
  cleanups.push(stop)
  try {
    const url = transport === 'mcp' ? provider.url : provider.baseUrl
    io.out(`fakemerchant: ${url} (${transport}; fresh SQLite in a temporary directory, new sandbox secret)`)
    const env = { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: secret }
    const report =
      kept === undefined
        ? join(dir, 'report.json')
        : transport === 'mcp'
          ? kept
          : kept.replace(/(\.[^./]*)?$/, (ext) => `-rest${ext}`)
    const argv = ['-sandbox', '-transport', transport, '-allow-private', '-base-url', url, ...FIXTURE_FLAGS]
    io.out(`$ providercheck ${argv.join(' ')} -json report.json`)
    let code = await main([...argv, '-json', report], env, io)
    io.out('$ providercheck verify report.json')
    // A report that does not verify fails the demo even when every check passed.
    const verified = await main(['verify', report], env, io)
    if (code === 0 && verified !== 0) code = verified
    return code
  } finally {
    await stop()
  }
}

const codes = [await demo('mcp'), await demo('rest')]
if (kept === undefined)
  io.out('(the reports go with the temporary directories; PROVIDERCHECK_DEMO_REPORT=FILE keeps them)')
io.out(`demo: mcp ${codes[0] === 0 ? 'PASS' : 'FAIL'}, rest ${codes[1] === 0 ? 'PASS' : 'FAIL'}`)
process.exitCode = codes.find((c) => c !== 0) ?? 0
