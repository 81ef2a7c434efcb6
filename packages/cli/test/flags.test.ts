// The flag table: one declaration drives the parser, the checks of bounds/needs/conflicts and --help.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type FlagTable, flagHelp, readFlags } from '../src/index.js'

const TABLE = {
  port: { type: 'integer', value: 'N', min: 0, max: 65_535, default: 8080, help: 'port to listen on' },
  workers: { type: 'integer', value: 'N', min: 1, max: 1024, help: 'workers' },
  'tls-cert': { type: 'string', value: 'FILE', needs: ['tls-key'], help: 'certificate' },
  'tls-key': { type: 'string', value: 'FILE', needs: ['tls-cert'], help: 'key' },
  db: { type: 'string', value: 'FILE', conflicts: ['database-url'], help: 'SQLite file' },
  'database-url': { type: 'string', value: 'URL', shown: '$DATABASE_URL', help: 'PostgreSQL' },
  'allowed-host': { type: 'string', multiple: true, value: 'HOST', help: 'another Host' },
  verbose: { type: 'boolean', help: 'say more' },
  help: { type: 'boolean', short: 'h', help: 'show this help and exit' },
  version: { type: 'boolean', help: 'print the version and exit' },
} as const satisfies FlagTable

test('values arrive typed: integers as numbers, defaults filled in, repeatable flags as arrays', () => {
  const read = readFlags(['--workers', '4', '--allowed-host', 'a', '--allowed-host', 'b', '--verbose'], TABLE)
  assert.ok('values' in read)
  assert.equal(read.values.port, 8080)
  assert.equal(read.values.workers, 4)
  assert.deepEqual(read.values['allowed-host'], ['a', 'b'])
  assert.equal(read.values.verbose, true)
  assert.equal(read.values.db, undefined)
  const port: number = read.values.port // a flag with a default is never undefined (a type error otherwise)
  assert.equal(port, 8080)
})

test('bounds come from the table, and the problem names the flag and the bounds, never the value', () => {
  for (const bad of ['0', '1025', '-1', '1.5', '1e3', '', ' 4', '99999999999999999999']) {
    assert.deepEqual(readFlags([`--workers=${bad}`], TABLE), {
      problem: '--workers must be a whole number from 1 to 1024',
    })
  }
  assert.deepEqual(readFlags(['--port', '65536'], TABLE), { problem: '--port must be a whole number from 0 to 65535' })
  assert.ok('values' in readFlags(['--port', '0', '--workers', '1024'], TABLE))
})

test('"needs" and "conflicts" are one sentence each, whichever flag is given', () => {
  assert.deepEqual(readFlags(['--tls-cert', 'c.pem'], TABLE), { problem: '--tls-cert needs --tls-key' })
  assert.deepEqual(readFlags(['--tls-key', 'k.pem'], TABLE), { problem: '--tls-key needs --tls-cert' })
  assert.ok('values' in readFlags(['--tls-cert', 'c.pem', '--tls-key', 'k.pem'], TABLE))
  assert.deepEqual(readFlags(['--db', 'x', '--database-url', 'postgres://u:secret@h/db'], TABLE), {
    problem: '--db and --database-url exclude each other: give one',
  })
})

test('a stray argument or an unknown flag is refused without echoing what was typed', () => {
  const stray = readFlags(['--verbose', 'srmp_live_secret'], TABLE)
  assert.deepEqual(stray, { problem: 'unexpected argument: this command takes flags only' })
  assert.deepEqual(readFlags(['--token=srmp_live_secret'], TABLE), { problem: 'unknown flag --token' })
  assert.deepEqual(readFlags(['--workers'], TABLE), { problem: '--workers needs a value' })
})

test('--help and --version win over relation problems, but only when the table declares them', () => {
  assert.deepEqual(readFlags(['--tls-cert', 'c', '-h'], TABLE), { help: true })
  assert.deepEqual(readFlags(['--version'], TABLE), { version: true })
  assert.deepEqual(readFlags(['--version'], { port: TABLE.port }), { problem: 'unknown flag --version' })
})

test('a table naming a flag it does not declare is a programming error, found on the first read', () => {
  assert.throws(() => readFlags([], { a: { type: 'string', needs: ['b'], help: '' } }), TypeError)
})

test('--help prints each flag once with its default, bounds and relations', () => {
  const help = flagHelp('usage: tool [options]', TABLE, 'tail\n')
  assert.match(help, /^usage: tool \[options\]\n\noptions:\n/)
  assert.match(help, / {4}--port N +port to listen on \(default: 8080; 0–65535\)\n/)
  assert.match(help, / {4}--workers N +workers \(1–1024\)\n/)
  assert.match(help, / {4}--tls-cert FILE +certificate \(needs --tls-key\)\n/)
  assert.match(help, / {4}--db FILE +SQLite file \(not with --database-url\)\n/)
  assert.match(help, / {4}--database-url URL +PostgreSQL \(default: \$DATABASE_URL\)\n/)
  assert.match(help, /-h, --help +show this help and exit\n/)
  assert.ok(help.endsWith('tail\n'))
})
