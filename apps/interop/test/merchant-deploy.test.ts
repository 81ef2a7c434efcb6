// The worked example's systemd unit (examples/merchant-billing/deploy/merchant-billing.service) as systemd reads it:
// `systemd-analyze verify` on the repository's file itself — no error and no warning (systemd ignores a directive it
// cannot parse with a warning only, so a warning is a failure here) — and the settings the README promises: SIGTERM
// with a stop timeout longer than the shutdown the environment file configures, reload by SIGHUP, the environment
// file, a service user, the hardening options.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { EXAMPLE_SYSTEMD_UNIT } from './support/merchant-template.js'

const REQUIRED = process.env.TOLLGATE_REQUIRE_SERVICES === '1'
const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' })
const MISSING =
  analyze.error !== undefined || analyze.status !== 0
    ? 'systemd-analyze is not installed (install it with: sudo apt-get update && sudo apt-get install -y systemd)'
    : undefined
if (MISSING !== undefined && REQUIRED) throw new Error(`${MISSING}, and TOLLGATE_REQUIRE_SERVICES=1`)

const unit = readFileSync(EXAMPLE_SYSTEMD_UNIT, 'utf8')
const environment = readFileSync(new URL('environment.example', `file://${EXAMPLE_SYSTEMD_UNIT}`), 'utf8')

/** The [Service] section's settings (the last value of each key, as systemd keeps it). */
function serviceSettings(text: string): Map<string, string> {
  const section = /^\[Service\]\n([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(text)?.[1] ?? ''
  const settings = new Map<string, string>()
  for (const line of section.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line.trim())
    if (m?.[1] !== undefined && m[2] !== undefined) settings.set(m[1], m[2])
  }
  return settings
}

test('systemd-analyze verify accepts the shipped unit without an error or a warning', { skip: MISSING }, (t) => {
  const r = spawnSync('systemd-analyze', ['verify', '--man=no', EXAMPLE_SYSTEMD_UNIT], { encoding: 'utf8' })
  t.diagnostic(`${analyze.stdout.split('\n')[0]}`)
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`)
  // Only the unit's own lines count (a host may warn about units of its own).
  const ours = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.includes('merchant-billing'))
  assert.deepEqual(ours, [])
})

test('the unit stops with SIGTERM and waits longer than the configured shutdown, reloads with SIGHUP', () => {
  const s = serviceSettings(unit)
  assert.equal(s.get('KillSignal'), 'SIGTERM')
  assert.match(s.get('ExecReload') ?? '', /^\/bin\/kill -HUP \$MAINPID$/)
  assert.equal(s.get('EnvironmentFile'), '/etc/merchant-billing/environment')
  assert.ok((s.get('User') ?? 'root') !== 'root', 'a service user')
  assert.equal(s.get('RestartPreventExitStatus'), '2', 'a configuration error (exit 2) is not restarted')
  const ms = (name: string) => Number(new RegExp(`^${name}=(\\d+)$`, 'm').exec(environment)?.[1])
  const shutdownSeconds = (ms('SHUTDOWN_DELAY_MS') + ms('SHUTDOWN_DEADLINE_MS')) / 1000
  assert.ok(Number.isFinite(shutdownSeconds), 'environment.example sets both shutdown durations')
  assert.ok(Number(s.get('TimeoutStopSec')) > shutdownSeconds, `TimeoutStopSec must exceed ${shutdownSeconds} s`)
  for (const [key, value] of [
    ['NoNewPrivileges', 'yes'],
    ['ProtectSystem', 'strict'],
    ['ProtectHome', 'yes'],
    ['PrivateTmp', 'yes'],
    ['CapabilityBoundingSet', ''],
  ] as const)
    assert.equal(s.get(key), value, key)
})
