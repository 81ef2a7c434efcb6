// Which store fakemerchant runs on, from its flags and environment: SQLite (default) or PostgreSQL with
// --database-url / DATABASE_URL. Messages name the flag and never repeat the URL (it may hold a password).
import { StoreError } from './errors.js'
import type { StoreOptions } from './provider.js'
import type { SqliteDurability } from './store/sqlite-connection.js'

export const DEFAULT_DATABASE_SCHEMA = 'fakemerchant'
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export interface StoreFlags {
  db?: string | undefined
  databaseUrl?: string | undefined
  databaseSchema?: string | undefined
  durability?: string | undefined
}

export type StoreChoice =
  /** where: what the start line shows (a file path, or the PostgreSQL schema; never the URL). */
  | { ok: true; store: StoreOptions; where: string }
  /** A usage error: one line naming the flag (exit 2). */
  | { ok: false; problem: string }

/**
 * The store the flags ask for. A flag beats the environment: --db wins over DATABASE_URL. --db with --database-url is
 * refused by the flag table (fakemerchant-flags.ts) before this runs.
 */
export function chooseStore(
  flags: StoreFlags,
  env: NodeJS.ProcessEnv,
  /** Makes the default SQLite file's path (only called when no store was asked for). */
  defaultSqliteFile: () => string,
): StoreChoice {
  const fromEnv = flags.db === undefined && flags.databaseUrl === undefined && (env.DATABASE_URL ?? '') !== ''
  const url = flags.databaseUrl ?? (fromEnv ? env.DATABASE_URL : undefined)
  if (url === undefined) {
    if (flags.databaseSchema !== undefined) return { ok: false, problem: '--database-schema needs --database-url' }
    const file = flags.db ?? defaultSqliteFile()
    return {
      ok: true,
      store: {
        kind: 'sqlite',
        file,
        ...(flags.durability !== undefined && { durability: flags.durability as SqliteDurability }),
      },
      where: file,
    }
  }
  const source = fromEnv ? 'DATABASE_URL' : '--database-url'
  if (!isPostgresUrl(url)) return { ok: false, problem: `${source} must be a postgres:// or postgresql:// URL` }
  if (flags.durability !== undefined) {
    return {
      ok: false,
      problem: "--durability applies to the SQLite store; PostgreSQL's durability is the server's (synchronous_commit)",
    }
  }
  const schema = flags.databaseSchema ?? DEFAULT_DATABASE_SCHEMA
  if (!SCHEMA_NAME.test(schema)) {
    return { ok: false, problem: '--database-schema must be lower-case letters, digits and _ (at most 63)' }
  }
  return {
    ok: true,
    store: { kind: 'postgres', connectionString: url, schema },
    where: `PostgreSQL schema ${schema} (${source})`,
  }
}

function isPostgresUrl(value: string): boolean {
  try {
    const u = new URL(value)
    return (u.protocol === 'postgres:' || u.protocol === 'postgresql:') && u.hostname !== ''
  } catch {
    return false
  }
}

// PostgreSQL's and Node's error codes, in words. The server's own message is not shown: it can name the user.
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused (is PostgreSQL running there?)',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  '28P01': 'authentication failed',
  '28000': 'authentication failed',
  '3D000': 'the database does not exist',
  '42501': 'permission denied (the user cannot create the schema or its tables)',
  '53300': 'too many connections',
  '57P03': 'the server is starting up or shutting down',
}

/** A start-up failure of the PostgreSQL store, in one line naming where the URL came from; undefined otherwise. */
export function explainStoreFailure(error: unknown, choice: StoreChoice): string | undefined {
  if (!choice.ok || choice.store.kind !== 'postgres' || !(error instanceof StoreError)) return undefined
  const source = choice.where.endsWith('(DATABASE_URL)') ? 'DATABASE_URL' : '--database-url'
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined
  const code = typeof cause?.code === 'string' ? cause.code : undefined
  const timedOut = typeof cause?.message === 'string' && /timeout/i.test(cause.message)
  const reason =
    (code !== undefined ? REASONS[code] : undefined) ??
    (timedOut ? 'the connection timed out' : code !== undefined ? `error ${code}` : 'the server did not answer')
  return `cannot open the PostgreSQL database given by ${source}: ${reason}`
}
