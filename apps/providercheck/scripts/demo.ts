// npm run demo: fakemerchant (the real provider on demo data) on a fresh temporary SQLite file with a freshly
// generated sandbox secret on a free port; providercheck against it with the seed's fixtures, lines streamed;
// the sealed report verified; the server stopped; the kit's exit status returned.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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
  // PROVIDERCHECK_DEMO_REPORT keeps the sealed report; by default it goes with the temporary directory.
  const report = process.env.PROVIDERCHECK_DEMO_REPORT ?? join(dir, 'report.json')
  io.out(
    `$ providercheck -sandbox -transport mcp -allow-private -base-url ${provider.url} -tenant 0199a3c1-0a0b-7c0d-8e0f-101112131415 -customer cus_1001 -transaction ch_1001 -subscription sub_1001 -json report.json`,
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
    ],
    env,
    io,
  )
  io.out('$ providercheck verify report.json')
  // A report that does not verify fails the demo even when every check passed.
  const verified = await main(['verify', report], env, io)
  if (code === 0 && verified !== 0) code = verified
  if (process.env.PROVIDERCHECK_DEMO_REPORT === undefined) {
    io.out('(the report goes with the temporary directory; PROVIDERCHECK_DEMO_REPORT=FILE keeps it)')
  }
} finally {
  await stop()
}
process.exitCode = code
