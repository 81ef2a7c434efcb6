// Quick start: call one tool the way the platform does, against fakemerchant started in-process.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PlatformClient } from '@tollgate/platform-client'
import { startProvider } from '@tollgate/provider'

const secret = 'srmps_quick_start_0123456789abcdef'
const dir = mkdtempSync(join(tmpdir(), 'platform-client-quick-start-'))
const provider = await startProvider({
  secrets: [secret],
  store: { kind: 'sqlite', file: join(dir, 'p.sqlite') },
  logger: false,
  demoLedger: {}, // the demo data (sandbox only); your provider passes `billing`, your BillingPort
})
try {
  // allowPrivate: the demo server is plain http on 127.0.0.1; a real provider is https on 443, public.
  const client = new PlatformClient({ baseUrl: provider.url, secret, allowPrivate: true })
  const out = await client.callTool(
    'sr_get_transaction',
    { transaction_ref: 'ch_1001' },
    { correlationId: 'c-1', channel: 'ticket' },
  )
  if (out.kind === 'result') {
    const tx = out.value as { transaction_ref: string; amount: { amount_minor: number; currency: string } }
    console.log(`${tx.transaction_ref}: ${tx.amount.amount_minor} ${tx.amount.currency} minor units (${out.era})`)
  } else console.log(out.kind === 'error' ? `${out.code} (${out.status})` : 'outcome unknown')
} finally {
  await provider.close()
  rmSync(dir, { recursive: true, force: true })
}
