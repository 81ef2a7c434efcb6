// The live source's cache: a default folder that works for a service user with no home, and pruning to a bounded
// size and age (on a real SQLite file filled by the live source's own table).
import assert from 'node:assert/strict'
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { defaultCacheLocation, pruneCache } from '../../src/server/cache-folder.ts'
import { planFromArgv } from '../../src/server/serve-plan.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'

const { scratch } = scratchWithEmptyRecordings('quenchz-cache-')
after(() => rmSync(scratch, { recursive: true, force: true }))
const uid = process.getuid?.() ?? 0

describe('the default cache folder', () => {
  test("systemd's $CACHE_DIRECTORY first (its first entry), then an absolute $XDG_CACHE_HOME, then $HOME/.cache", () => {
    const home = join(scratch, 'home')
    mkdirSync(home, { recursive: true })
    assert.deepEqual(
      defaultCacheLocation({
        CACHE_DIRECTORY: '/var/cache/quenchz:/var/cache/other',
        XDG_CACHE_HOME: '/x',
        HOME: home,
      }),
      {
        file: '/var/cache/quenchz/ecb-live.sqlite',
        rule: 'CACHE_DIRECTORY',
      },
    )
    assert.deepEqual(defaultCacheLocation({ XDG_CACHE_HOME: '/srv/cache', HOME: home }), {
      file: '/srv/cache/quenchz/ecb-live.sqlite',
      rule: 'XDG_CACHE_HOME',
    })
    // A relative XDG_CACHE_HOME is ignored, as the XDG specification says.
    assert.deepEqual(defaultCacheLocation({ XDG_CACHE_HOME: 'cache', HOME: home }), {
      file: join(home, '.cache', 'quenchz', 'ecb-live.sqlite'),
      rule: 'HOME',
    })
  })

  test('a service user with no usable home gets a private folder of its own under the temp dir', () => {
    const temp = mkdtempSync(join(scratch, 'tmp-'))
    // No HOME, a HOME that does not exist, a relative one: all the temp-dir fallback.
    for (const env of [{}, { HOME: '/nonexistent' }, { HOME: 'relative' }]) {
      assert.deepEqual(defaultCacheLocation(env, uid, temp), {
        file: join(temp, `quenchz-cache-${uid}`, 'ecb-live.sqlite'),
        rule: 'tmpdir',
      })
    }
    // The folder it makes is a real folder, owner-only.
    const stat = lstatSync(join(temp, `quenchz-cache-${uid}`))
    assert.ok(stat.isDirectory())
    assert.equal(stat.mode & 0o077, 0, 'no access for group or others')
  })

  test('a HOME this user may not write falls back to the temp dir', {
    skip: uid === 0 ? 'root may write anywhere' : false,
  }, () => {
    const home = join(scratch, 'readonly-home')
    mkdirSync(home, { recursive: true })
    chmodSync(home, 0o555)
    after(() => chmodSync(home, 0o755))
    assert.equal(
      (defaultCacheLocation({ HOME: home }, uid, mkdtempSync(join(scratch, 'tmp-'))) as { rule: string }).rule,
      'tmpdir',
    )
  })

  test('a fallback folder someone else could have made (another owner, a symlink, writable by others) is refused, naming --cache', () => {
    const temp = mkdtempSync(join(scratch, 'tmp-'))
    const folder = join(temp, `quenchz-cache-${uid}`)
    const refused = {
      problem: `the cache folder ${folder} is not a private folder of this user; choose a cache file with --cache`,
    }
    // Another owner: the folder exists, made by this process, but asked for as another uid.
    const other = join(temp, `quenchz-cache-${uid + 1}`)
    mkdirSync(other, { mode: 0o700 })
    assert.deepEqual(defaultCacheLocation({}, uid + 1, temp), {
      problem: `the cache folder ${other} is not a private folder of this user; choose a cache file with --cache`,
    })
    // A symlink planted at the name, pointing to a folder of this user's.
    const target = join(temp, 'planted')
    mkdirSync(target, { mode: 0o700 })
    symlinkSync(target, folder)
    assert.deepEqual(defaultCacheLocation({}, uid, temp), refused)
    rmSync(folder)
    // Group- or world-writable.
    mkdirSync(folder, { mode: 0o700 })
    chmodSync(folder, 0o777)
    assert.deepEqual(defaultCacheLocation({}, uid, temp), refused)
    chmodSync(folder, 0o700)
    assert.equal((defaultCacheLocation({}, uid, temp) as { rule: string }).rule, 'tmpdir')
  })

  test('servePlan uses it for --source live; --cache wins over it', () => {
    const plan = planFromArgv(
      ['--jwks-url', 'https://issuer.example/jwks', '--issuer', 'https://issuer.example'],
      scratch,
      {
        XDG_CACHE_HOME: '/srv/cache',
      },
    ) as { source: { cacheFile: string } }
    assert.equal(plan.source.cacheFile, '/srv/cache/quenchz/ecb-live.sqlite')
    const explicit = planFromArgv(
      ['--jwks-url', 'https://i.example/jwks', '--issuer', 'https://i.example', '--cache', 'c.sqlite'],
      scratch,
      {},
    ) as {
      source: { cacheFile: string }
    }
    assert.equal(explicit.source.cacheFile, join(scratch, 'c.sqlite'))
  })

  test('--cache-max-mib and --cache-max-age-days: defaults 256 MiB and 30 days, bounds, only with --source live', () => {
    const jwks = ['--jwks-url', 'https://i.example/jwks', '--issuer', 'https://i.example']
    const env = { XDG_CACHE_HOME: '/srv/cache' }
    assert.deepEqual((planFromArgv(jwks, scratch, env) as { cacheLimits: unknown }).cacheLimits, {
      maxBytes: 256 * 1_048_576,
      maxAgeMs: 30 * 86_400_000,
    })
    assert.deepEqual(
      (
        planFromArgv([...jwks, '--cache-max-mib', '1', '--cache-max-age-days', '2'], scratch, env) as {
          cacheLimits: unknown
        }
      ).cacheLimits,
      { maxBytes: 1_048_576, maxAgeMs: 2 * 86_400_000 },
    )
    assert.deepEqual(planFromArgv([...jwks, '--cache-max-mib', '0'], scratch, env), {
      problem: '--cache-max-mib must be a whole number from 1 to 1048576',
    })
    assert.deepEqual(
      planFromArgv(
        [...jwks, '--source', 'recordings', '--recordings', scratch, '--cache-max-age-days', '3'],
        scratch,
        env,
      ),
      {
        problem: '--cache-max-age-days needs --source live',
      },
    )
  })
})

describe('pruning the cache', () => {
  /** A cache file with the live source's table, holding `rows` answers of `bytes` each, fetched at the given times. */
  const filled = (name: string, rows: Array<{ url: string; fetchedAtMs: number; bytes: number }>) => {
    const file = join(scratch, name)
    const db = new Database(file)
    db.exec(
      'CREATE TABLE IF NOT EXISTS answers (url TEXT PRIMARY KEY, status INTEGER NOT NULL, body BLOB NOT NULL, fetched_at_ms INTEGER NOT NULL)',
    )
    const insert = db.prepare('INSERT INTO answers (url, status, body, fetched_at_ms) VALUES (?, 200, ?, ?)')
    for (const r of rows) insert.run(r.url, Buffer.alloc(r.bytes, 1), r.fetchedAtMs)
    db.close()
    return file
  }
  const urls = (file: string) => {
    const db = new Database(file, { readonly: true })
    const list = (db.prepare('SELECT url FROM answers ORDER BY url').all() as Array<{ url: string }>).map((r) => r.url)
    db.close()
    return list
  }
  const day = 86_400_000
  const now = 1_800_000_000_000

  test('answers older than the age bound go; the rest stay', () => {
    const file = filled('age.sqlite', [
      { url: 'u/old', fetchedAtMs: now - 40 * day, bytes: 10 },
      { url: 'u/edge', fetchedAtMs: now - 30 * day, bytes: 10 },
      { url: 'u/new', fetchedAtMs: now - day, bytes: 10 },
    ])
    const report = pruneCache(file, { maxBytes: 1_000_000, maxAgeMs: 30 * day }, now)
    assert.deepEqual(urls(file), ['u/edge', 'u/new'])
    assert.equal(report.removedByAge, 1)
    assert.equal(report.removedBySize, 0)
  })

  test('past the size bound, the oldest go first until the rest fit', () => {
    const rows = Array.from({ length: 10 }, (_, i) => ({
      url: `u/${i}`,
      fetchedAtMs: now - (10 - i) * 1000,
      bytes: 1000 - 3,
    }))
    const file = filled('size.sqlite', rows)
    // Each row counts its body and its URL: 1000 bytes. Room for four.
    const report = pruneCache(file, { maxBytes: 4000, maxAgeMs: 30 * day }, now)
    assert.deepEqual(urls(file), ['u/6', 'u/7', 'u/8', 'u/9'])
    assert.deepEqual(report, { removedByAge: 0, removedBySize: 6, keptBytes: 4000 })
    // Pruning again changes nothing.
    assert.deepEqual(pruneCache(file, { maxBytes: 4000, maxAgeMs: 30 * day }, now), {
      removedByAge: 0,
      removedBySize: 0,
      keptBytes: 4000,
    })
  })

  test('a cache file the source has not filled yet is left alone', () => {
    const file = join(scratch, 'empty.sqlite')
    new Database(file).close()
    assert.deepEqual(pruneCache(file, { maxBytes: 1, maxAgeMs: 1 }, now), {
      removedByAge: 0,
      removedBySize: 0,
      keptBytes: 0,
    })
  })
})
