// npm run demo: fakemerchant (the real provider on demo data) on a fresh temporary SQLite file with a freshly
// generated sandbox secret on a free port; providercheck against it with the seed's fixtures, lines streamed;
// the sealed report verified; the server stopped; the kit's exit status returned.
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, parse, resolve } from 'node:path'
import { startProvider } from '@tollgate/provider'
import { main, type Output } from '../src/index.js'

const secret = `srmps_${randomBytes(24).toString('hex')}`
const dir = mkdtempSync(join(tmpdir(), 'providercheck-demo-'))
const io: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}

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
process.once('SIGINT', () => {
  void stop().then(() => process.exit(130))
})

let code = 1
try {
  io.out(`fakemerchant: ${provider.url} (fresh SQLite in a temporary directory, new sandbox secret)`)
  const env = { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: secret }
  // PROVIDERCHECK_DEMO_REPORT keeps the sealed report (and its HTML page beside it); by default both go with the
  // temporary directory.
  const kept = process.env.PROVIDERCHECK_DEMO_REPORT
  // A relative path is relative to where the user ran npm (INIT_CWD), not to the package folder npm runs in.
  const report = kept === undefined ? join(dir, 'report.json') : resolve(process.env.INIT_CWD ?? '.', kept)
  const page = besideReport(report, '.html')
  io.out(
    `$ providercheck -sandbox -transport mcp -allow-private -base-url ${provider.url} -tenant 0199a3c1-0a0b-7c0d-8e0f-101112131415 -customer cus_1001 -transaction ch_1001 -subscription sub_1001 -json report.json -html report.html`,
  )
  code = await main(
    [
      '-sandbox',
      '-transport',
      'mcp',
      '-allow-private',
      '-base-url',
      provider.url,
      '-tenant',
      '0199a3c1-0a0b-7c0d-8e0f-101112131415',
      '-customer',
      'cus_1001',
      '-transaction',
      'ch_1001',
      '-subscription',
      'sub_1001',
      '-json',
      report,
      '-html',
      page,
    ],
    env,
    io,
  )
  io.out('$ providercheck verify report.json')
  // A report that does not verify fails the demo even when every check passed.
  const verified = await main(['verify', report], env, io)
  if (code === 0 && verified !== 0) code = verified
  if (kept === undefined) {
    io.out('(the report and its page go with the temporary directory; PROVIDERCHECK_DEMO_REPORT=FILE keeps them)')
  } else {
    keepSecret(report)
  }
} finally {
  await stop()
}
process.exitCode = code

/** The report's path with another extension: report.json → report.html. */
function besideReport(path: string, extension: string): string {
  const { dir: folder, name } = parse(path)
  return join(folder, `${name}${extension}`)
}

// The seal can only be checked with the demo's random secret: keep it beside the report in a file only its owner
// can read, and print the command that reads it. The secret itself never reaches stdout.
function keepSecret(reportPath: string): void {
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
