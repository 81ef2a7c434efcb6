import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { isLoopbackAddress, isPublicAddress } from './address.js'
import { BaseUrlRejected, PrivateAddressRejected } from './errors.js'

/** The network rules of a base URL. */
export interface BaseUrlRules {
  /** Allow private and loopback addresses, any port, and plain http when every address is loopback. Default false. */
  allowPrivate?: boolean
}

/**
 * Checks a provider base URL against the platform's network rules: https on port 443, no credentials or
 * fragment, and every resolved address public — unless allowPrivate. Resolves the host once; the HTTP layer
 * checks again at connect time. Throws BaseUrlRejected or PrivateAddressRejected.
 */
export async function checkBaseUrl(baseUrl: string, rules: BaseUrlRules = {}): Promise<URL> {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new BaseUrlRejected('not an absolute URL')
  }
  if (url.username !== '' || url.password !== '') throw new BaseUrlRejected('credentials in the URL')
  if (url.hash !== '') throw new BaseUrlRejected('a fragment in the URL')
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new BaseUrlRejected('the scheme must be https')
  const allowPrivate = rules.allowPrivate === true
  if (!allowPrivate) {
    if (url.protocol !== 'https:') throw new BaseUrlRejected('the scheme must be https')
    if (url.port !== '') throw new BaseUrlRejected('the port must be 443')
  }
  const addresses = await resolveAll(url.hostname)
  if (!allowPrivate && addresses.some((a) => !isPublicAddress(a))) throw new PrivateAddressRejected()
  if (url.protocol === 'http:' && !addresses.every(isLoopbackAddress)) {
    throw new BaseUrlRejected('plain http is allowed on loopback only')
  }
  return url
}

/** The URL's host name without IPv6 brackets. */
export function bareHostname(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
}

async function resolveAll(hostname: string): Promise<string[]> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname
  if (isIP(bare) !== 0) return [bare]
  try {
    const found = await lookup(bare, { all: true, verbatim: true })
    if (found.length === 0) throw new BaseUrlRejected('the host does not resolve')
    return found.map((a) => a.address)
  } catch (error) {
    if (error instanceof BaseUrlRejected) throw error
    throw new BaseUrlRejected('the host does not resolve')
  }
}
