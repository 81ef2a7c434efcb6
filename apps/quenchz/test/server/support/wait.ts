// Waiting for a running server to reach a state the test can only observe from outside (a status, a log line).
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Asks every 50 ms until `check` holds (a throw counts as not yet), at most `tries` times: a wait bounded so a broken
 * server fails the test instead of hanging it.
 */
export async function until(what: string, check: () => Promise<boolean>, tries = 600): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check().catch(() => false)) return
    await sleep(50)
  }
  assert.fail(`never happened: ${what}`)
}
