// The handle startProvider returns: where it listens, what it runs on, its stop, and the live reloads (TLS, secrets).
import { replaceTlsCredentials } from '@tollgate/mcp-endpoint'
import type { RunningAdminServer, ShutdownReport } from '@tollgate/operability'
import type { SignatureVerifier, SigningEnvironment } from '@tollgate/signing'
import type { Logger } from 'pino'
import type { ProviderMetrics } from '../metrics.js'
import { checkSecretList } from '../secrets.js'
import type { Store } from '../store/store.js'
import type { BillingAndRules } from './billing-and-rules.js'
import type { Door } from './door.js'
import type { PublicListener } from './listeners.js'
import { errorFacts } from './log-facts.js'
import type { RunningProvider } from './options.js'

export interface Started extends BillingAndRules {
  path: string
  environment: SigningEnvironment
  verifier: SignatureVerifier
  front: PublicListener
  admin: RunningAdminServer | undefined
  store: Store
  door: Door
  metrics: ProviderMetrics | undefined
  logger: Logger | undefined
  /** The one stop: a second call returns the first one's promise. */
  stop(how: { deadlineMs?: number; delayMs?: number }): Promise<ShutdownReport>
}

export function runningProvider(started: Started): RunningProvider {
  const { front, admin, metrics, door, logger, stop } = started
  return {
    url: `${front.origin}${started.path}`,
    baseUrl: front.origin,
    restUrl: `${front.origin}/v1/`,
    port: front.port,
    store: started.store,
    billing: started.billing,
    rules: started.rules,
    health: front.health,
    ...(admin !== undefined && { adminUrl: admin.url }),
    ...(metrics !== undefined && { metrics }),
    diagnostics: {
      get fastPathAnswered() {
        return door.endpoint.fastPathAnswered
      },
      get legacyFastPathAnswered() {
        return door.legacy.fastPathAnswered
      },
    },
    shutdown: (how = {}) => stop(how),
    close: () => stop({ deadlineMs: 0, delayMs: 0 }).then(() => {}),
    setTls: (credentials) => {
      try {
        replaceTlsCredentials(front.server, credentials)
      } catch (error) {
        // Which part failed (cert, key, pair), never a byte of either.
        logger?.warn(
          { ...errorFacts(error), which: (error as { which?: unknown }).which },
          'TLS pair refused: the old one is kept',
        )
        throw error
      }
      logger?.info('TLS certificate replaced: new connections get it')
    },
    setSecrets: (next) => {
      try {
        checkSecretList(next, started.environment)
        started.verifier.setSecrets(next)
      } catch (error) {
        logger?.warn(errorFacts(error), 'signing secrets refused: the old ones are kept')
        throw error
      }
      logger?.info({ secrets: next.length }, 'signing secrets replaced')
    },
  }
}
