// Headless Chromium (Debian's `chromium` package) driven by playwright-core. The suite skips with the reason when
// the browser is absent, unless TOLLGATE_REQUIRE_SERVICES=1 (CI, where .ci/run installs it): then it fails.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Page } from 'playwright-core'

export const CHROMIUM = process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium'

/** Why the browser suite cannot run here; undefined when it can. Throws instead when services are required. */
export function browserSkipReason(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined
  const reason = `no Chromium at ${CHROMIUM} (apt-get install chromium, or set TOLLGATE_CHROMIUM)`
  if (process.env.TOLLGATE_REQUIRE_SERVICES === '1') throw new Error(`${reason}, and TOLLGATE_REQUIRE_SERVICES=1`)
  return reason
}

export interface Browser {
  page: Page
  /** Every URL the page asked for, in order (a self-contained page asks for its own file only). */
  requests: string[]
  close(): Promise<void>
}

/** A fresh headless browser with its own throwaway profile; close() removes the profile. */
export async function openBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'providercheck-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  const page = context.pages()[0] ?? (await context.newPage())
  const requests: string[] = []
  page.on('request', (request) => requests.push(request.url()))
  return {
    page,
    requests,
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
