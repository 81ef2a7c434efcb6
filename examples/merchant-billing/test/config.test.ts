// The server's configuration: every variable checked before start, a problem named by its variable and never by its
// value; the shipped environment file is a configuration the server accepts; the README's table names every variable.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { CONFIG_VARIABLES, ConfigError, readConfig } from '../src/config.js'

// Run from the sources (test/*.ts) or compiled (dist/test/*.js): the example's folder either way.
const fromSource = import.meta.url.endsWith('.ts')
const ROOT = fileURLToPath(new URL(fromSource ? '..' : '../..', import.meta.url))
const SERVER = fileURLToPath(new URL(`../src/server.${fromSource ? 'ts' : 'js'}`, import.meta.url))
const NODE_ARGS = fromSource ? ['--import', import.meta.resolve('tsx')] : []

const SECRET = 'srmps_5e5a1bd7c0f24c4d9d1b0a6b8f3e2c11'
/** A value no message may echo. */
const MARK = 'Zq9SECRETISH'

test('unset variables take the documented defaults', () => {
  const c = readConfig({ SIGNING_SECRET: SECRET })
  assert.equal(c.host, '127.0.0.1')
  assert.equal(c.port, 8080)
  assert.deepEqual(c.secrets, { values: [SECRET] })
  assert.equal(c.shutdownDelayMs, 3000)
  assert.equal(c.shutdownDeadlineMs, 10000)
  assert.equal(c.seedDemo, false)
  for (const key of ['publicHost', 'stripPrefix', 'adminPort', 'tls', 'databaseUrl', 'sessionKey'] as const)
    assert.equal(c[key], undefined, key)
  assert.deepEqual(readConfig({ SIGNING_SECRET: `${SECRET},${SECRET}x` }).secrets, {
    values: [SECRET, `${SECRET}x`],
  })
})

const bad: [Record<string, string>, string][] = [
  [{ PORT: `80${MARK}` }, 'PORT'],
  [{ PORT: '65536' }, 'PORT'],
  [{ HOST: `http://${MARK}` }, 'HOST'],
  [{ PUBLIC_HOST: `https://${MARK}.example/x` }, 'PUBLIC_HOST'],
  [{ STRIP_PREFIX: `${MARK}/` }, 'STRIP_PREFIX'],
  [{ STRIP_PREFIX: '/billing/' }, 'STRIP_PREFIX'],
  [{ ADMIN_PORT: '8080' }, 'ADMIN_PORT'],
  [{ ADMIN_HOST: '127.0.0.1' }, 'ADMIN_HOST'],
  [{ TLS_CERT_FILE: `/etc/${MARK}.pem` }, 'TLS_KEY_FILE'],
  [{ TLS_KEY_FILE: `/etc/${MARK}.pem` }, 'TLS_CERT_FILE'],
  [{ SIGNING_SECRET: `${MARK},${MARK},${MARK}` }, 'SIGNING_SECRET'],
  [{ SIGNING_SECRET: `${MARK},` }, 'SIGNING_SECRET'],
  [{ SIGNING_SECRET_FILE: '/etc/s' }, 'SIGNING_SECRET'],
  [{ DATABASE_URL: `mysql://u:${MARK}@db/x` }, 'DATABASE_URL'],
  [{ DATABASE_URL: `${MARK}` }, 'DATABASE_URL'],
  [{ DATABASE_SCHEMA: 'acme' }, 'DATABASE_SCHEMA'],
  [{ DATABASE_URL: 'postgres://db/x', DATABASE_SCHEMA: `${MARK};` }, 'DATABASE_SCHEMA'],
  [{ DATABASE_URL: 'postgres://db/x', ACME_DATA_DIR: '/var/lib/x' }, 'ACME_DATA_DIR'],
  [{ ACME_SEED_DEMO: 'yes' }, 'ACME_SEED_DEMO'],
  [{ MCP_SESSION_KEY: MARK }, 'MCP_SESSION_KEY'],
  [{ RETENTION_DAYS: '7' }, 'RETENTION_DAYS'],
  [{ SHUTDOWN_DELAY_MS: '-1' }, 'SHUTDOWN_DELAY_MS'],
  [{ SHUTDOWN_DEADLINE_MS: '1.5' }, 'SHUTDOWN_DEADLINE_MS'],
]
for (const [env, variable] of bad) {
  test(`${Object.keys(env).join(' + ')} refused, naming ${variable} and no value`, () => {
    const withSecret = 'SIGNING_SECRET' in env ? env : { SIGNING_SECRET: SECRET, ...env }
    assert.throws(
      () => readConfig(withSecret),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.code === 'ERR_ACME_CONFIG' &&
        error.variable === variable &&
        error.message.startsWith(variable) &&
        !error.message.includes(MARK),
    )
  })
}

test('no signing secret at all is refused, naming SIGNING_SECRET_FILE', () => {
  assert.throws(() => readConfig({}), { code: 'ERR_ACME_CONFIG', variable: 'SIGNING_SECRET_FILE' })
})

test('deploy/environment.example is a configuration the server accepts', () => {
  const text = readFileSync(`${ROOT}/deploy/environment.example`, 'utf8')
  const env: Record<string, string> = {}
  for (const line of text.split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line)
    if (m?.[1] !== undefined && m[2] !== undefined) env[m[1]] = m[2]
  }
  for (const name of Object.keys(env)) assert.ok((CONFIG_VARIABLES as readonly string[]).includes(name), name)
  const c = readConfig(env)
  assert.deepEqual(c.secrets, { file: '/etc/merchant-billing/signing-secrets' })
  assert.equal(c.stripPrefix, '/billing')
  assert.equal(c.publicHost, 'billing.acme.example')
})

test("the README's configuration table names every variable the server reads, and no other", () => {
  const readme = readFileSync(`${ROOT}/README.md`, 'utf8')
  const table = /### Configuration\n[\s\S]*?\n((?:\|.*\n)+)/.exec(readme)?.[1] ?? ''
  const named = [...table.matchAll(/^\| `([A-Z_]+)`/gm)].map((m) => m[1])
  assert.deepEqual(named, [...CONFIG_VARIABLES])
})

/** Runs the server with only `env` (and PATH), to its exit. */
async function runServer(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [...NODE_ARGS, SERVER], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c
  })
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  return { code, stderr }
}

test('the server exits 2 on a bad variable with one line naming it, never the value', async () => {
  const r = await runServer({ SIGNING_SECRET: SECRET, PORT: `x${MARK}` })
  assert.equal(r.code, 2)
  assert.equal(r.stderr, 'acme-provider: PORT must be a whole number from 0 to 65535\n')
})

test('the server exits 2 on a malformed signing secret, naming the variable and not the secret', async () => {
  const r = await runServer({ SIGNING_SECRET: `srmps_${MARK} with a space` })
  assert.equal(r.code, 2)
  assert.match(r.stderr, /^acme-provider: SIGNING_SECRET: .*\(ERR_PROVIDER_SECRET_MALFORMED\)\n$/)
  assert.ok(!r.stderr.includes(MARK))
})
