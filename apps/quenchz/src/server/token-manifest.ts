import { chmodSync, writeFileSync } from 'node:fs'
import type { InProcessIssuer } from '@tollgate/gate'
import { SOURCE_ATTRIBUTION } from '../rates/index.js'
import { BUDGET, CALLERS, ELSEWHERE } from './constants.js'

/** The interop token manifest (digest §9). It deliberately carries no expected admission counts. */
export interface TokenManifest {
  url: string
  callers: { greedy: string; quiet: string }
  budget: { capacity: number; reserveFraction: number; callerCount: number; clock: 'frozen' | 'monotonic' | 'wall' }
  tokens: {
    greedyForThisResource: string
    quietForThisResource: string
    forAnotherResource: string
    forTwoResources: string
    withNoAudience: string
    withoutTheRatesScope: string
  }
  source: string
}

/** Mints the six tokens, each living `lifetimeSeconds`, and assembles the manifest for a server at `url`. */
export async function buildTokenManifest(
  issuer: InProcessIssuer,
  url: string,
  clock: 'frozen' | 'monotonic' | 'wall',
  options: { resource: string; lifetimeSeconds: number },
): Promise<TokenManifest> {
  const rates = ['rates:read']
  const { resource, lifetimeSeconds } = options
  const mint = (o: Parameters<InProcessIssuer['mint']>[0]) => issuer.mint({ ...o, lifetimeSeconds })
  return {
    url,
    callers: { greedy: CALLERS.greedy, quiet: CALLERS.quiet },
    budget: { capacity: BUDGET.capacity, reserveFraction: BUDGET.reserveFraction, callerCount: 2, clock },
    tokens: {
      greedyForThisResource: await mint({ subject: CALLERS.greedy, scopes: rates, audience: resource }),
      quietForThisResource: await mint({ subject: CALLERS.quiet, scopes: rates, audience: resource }),
      forAnotherResource: await mint({ subject: CALLERS.greedy, scopes: rates, audience: ELSEWHERE }),
      forTwoResources: await mint({ subject: CALLERS.greedy, scopes: rates, audience: [resource, ELSEWHERE] }),
      withNoAudience: await mint({ subject: CALLERS.greedy, scopes: rates, audience: null }),
      withoutTheRatesScope: await mint({
        subject: CALLERS.greedy,
        scopes: ['something:else'],
        audience: resource,
      }),
    },
    source: SOURCE_ATTRIBUTION,
  }
}

/** Writes the manifest as 2-space JSON with a trailing newline, readable by the owner only (it holds bearer tokens). */
export function writeTokenManifest(path: string, manifest: TokenManifest): void {
  writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 })
  // `mode` applies only when the file is created; an existing file is narrowed too.
  chmodSync(path, 0o600)
}
