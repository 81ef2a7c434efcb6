// One small SQL interface over SQLite (better-sqlite3) and PostgreSQL (pg), so the billing code below is written
// once. Statements use PostgreSQL's $1, $2 … placeholders; the SQLite side rewrites them.
import Database from 'better-sqlite3'
import pg from 'pg'

export interface Sql {
  readonly dialect: 'sqlite' | 'postgres'
  /** ' FOR UPDATE' on PostgreSQL (row lock inside a transaction); '' on SQLite, whose write transactions are serial. */
  readonly forUpdate: string
  all<T>(text: string, params?: unknown[]): Promise<T[]>
  one<T>(text: string, params?: unknown[]): Promise<T | undefined>
  run(text: string, params?: unknown[]): Promise<void>
  /** Runs fn in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** `$2 … $1` → `? … ?` with the parameters in the order they appear. */
function positional(text: string, params: unknown[]): [string, unknown[]] {
  const ordered: unknown[] = []
  const rewritten = text.replace(/\$(\d+)/g, (_, n: string) => {
    ordered.push(params[Number(n) - 1])
    return '?'
  })
  return [rewritten, ordered]
}

export function openSqlite(file: string): Sql {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('busy_timeout = 5000')
  // One connection: transactions queue behind each other instead of interleaving on it.
  let queue: Promise<unknown> = Promise.resolve()
  const on = (inTransaction: boolean): Sql => ({
    dialect: 'sqlite',
    forUpdate: '',
    async all<T>(text: string, params: unknown[] = []) {
      const [s, p] = positional(text, params)
      return db.prepare(s).all(...p) as T[]
    },
    async one<T>(text: string, params: unknown[] = []) {
      const [s, p] = positional(text, params)
      return db.prepare(s).get(...p) as T | undefined
    },
    async run(text: string, params: unknown[] = []) {
      const [s, p] = positional(text, params)
      db.prepare(s).run(...p)
    },
    transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
      if (inTransaction) return fn(on(true))
      const result = queue.then(async () => {
        db.exec('BEGIN IMMEDIATE')
        try {
          const value = await fn(on(true))
          db.exec('COMMIT')
          return value
        } catch (error) {
          db.exec('ROLLBACK')
          throw error
        }
      })
      queue = result.catch(() => {})
      return result
    },
    async close() {
      await queue
      db.close()
    },
  })
  return on(false)
}

export function openPostgres(connectionString: string, schema: string): Sql {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new RangeError('schema must match [a-z_][a-z0-9_]*')
  const pool = new pg.Pool({ connectionString, max: 8, options: `-c search_path=${schema}` })
  const over = (client: pg.Pool | pg.PoolClient): Sql => ({
    dialect: 'postgres',
    forUpdate: ' FOR UPDATE',
    async all<T>(text: string, params: unknown[] = []) {
      return (await client.query(text, params)).rows as T[]
    },
    async one<T>(text: string, params: unknown[] = []) {
      return (await client.query(text, params)).rows[0] as T | undefined
    },
    async run(text: string, params: unknown[] = []) {
      await client.query(text, params)
    },
    async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
      if (client !== pool) return fn(over(client))
      const c = await pool.connect()
      try {
        await c.query('BEGIN')
        const value = await fn(over(c))
        await c.query('COMMIT')
        return value
      } catch (error) {
        await c.query('ROLLBACK').catch(() => {})
        throw error
      } finally {
        c.release()
      }
    },
    async close() {
      await pool.end()
    },
  })
  return over(pool)
}
