// The provider's logger and what its lines may say about an error.
import type { Logger } from 'pino'
import { StoreError } from '../errors.js'

export async function defaultLogger(): Promise<Logger> {
  const { pino } = await import('pino')
  // Asynchronous: lines written while a write is in flight go out together (one syscall, not one per call), and
  // pino flushes what is left on exit. A SIGKILL can lose the last lines; outcomes live in the store, not the log.
  return pino({ level: 'info', base: { service: 'tollgate-provider' } }, pino.destination({ dest: 2, sync: false }))
}

/** An error's class and code, for a log line (never its message, which can quote a value). */
export function errorFacts(error: unknown): { type: string; code?: string } {
  const type = error instanceof Error ? error.constructor.name : typeof error
  const outage = error instanceof StoreError ? error.outage : undefined
  const code = outage?.code ?? (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? { type, code } : { type }
}
