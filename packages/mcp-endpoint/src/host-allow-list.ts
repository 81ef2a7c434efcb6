// DNS-rebinding guard shared by every server behind the endpoint: a foreign Host is 421, a foreign Origin 403.
import { EndpointConfigError } from './errors.js'

/** Verdict of the DNS-rebinding guard. */
export type HostVerdict = { ok: true } | { ok: false; status: 421 | 403; body: string }

/** Explicit allow-lists; nothing is allowed unless listed. */
export interface HostAllowList {
  /** Patterns `host`, `host:port` or `host:*` (any port). Matching is case-insensitive. */
  hosts: readonly string[]
  /** Patterns `scheme://host`, `scheme://host:port` or `scheme://host:*`. A request without Origin passes. */
  origins: readonly string[]
}

/** The loopback allow-list: 127.0.0.1, localhost and [::1], bare or with any port, and their http origins. */
export function loopbackAllowList(): HostAllowList {
  const hosts = ['127.0.0.1', '127.0.0.1:*', 'localhost', 'localhost:*', '[::1]', '[::1]:*']
  return { hosts, origins: hosts.map((h) => `http://${h}`) }
}

/**
 * The allow-list for one bind host: `[host, host:*]` and their http origins. An IPv6 literal is bracketed, because
 * that is how it arrives in a Host header (`[::1]:8931`); unbracketed it would match nothing.
 */
export function allowListFor(host: string): HostAllowList {
  const name = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  const hosts = [name, `${name}:*`]
  return { hosts, origins: hosts.map((h) => `http://${h}`) }
}

/**
 * The default allow-list of a server: loopback (see {@link loopbackAllowList}) plus each configured public host
 * (a bare name such as `mcp.example.com`, or a URL whose host is taken), bare or with any port, with http and https
 * origins. Extra `hosts` are added the same way (e.g. a bind address).
 */
export function defaultAllowList(publicHosts: readonly string[] = []): HostAllowList {
  const base = loopbackAllowList()
  const hosts = [...base.hosts]
  const origins = [...base.origins]
  for (const given of publicHosts) {
    let name = given.trim().toLowerCase()
    if (name.includes('://')) name = new URL(name).host
    if (name === '') throw new EndpointConfigError('an allowed host is empty')
    if (name.includes(':') && !name.startsWith('[') && name.split(':').length > 2) name = `[${name}]`
    const bare = name.startsWith('[') ? name.slice(0, name.indexOf(']') + 1) : name.split(':')[0]!
    for (const h of [bare, `${bare}:*`]) {
      if (!hosts.includes(h)) hosts.push(h)
      for (const scheme of ['http', 'https'])
        if (!origins.includes(`${scheme}://${h}`)) origins.push(`${scheme}://${h}`)
    }
  }
  return { hosts, origins }
}

/**
 * Builds the guard against DNS rebinding. A foreign or missing Host gets 421 (Misdirected Request: this server
 * does not answer for that name); a present Origin outside the list gets 403. Nothing from the request is echoed.
 */
export function hostGuard(
  allow: HostAllowList,
): (headers: { host?: string | undefined; origin?: string | undefined }) => HostVerdict {
  if (allow.hosts.length === 0)
    throw new EndpointConfigError('the host allow-list is empty; name the hosts this server answers for')
  const hostMatchers = allow.hosts.map(compile)
  const originMatchers = allow.origins.map(compile)
  return (headers) => {
    const host = headers.host
    if (host === undefined || !hostMatchers.some((m) => m(host.toLowerCase()))) {
      return { ok: false, status: 421, body: 'Invalid Host header' }
    }
    const origin = headers.origin
    if (origin !== undefined && !originMatchers.some((m) => m(origin.toLowerCase()))) {
      return { ok: false, status: 403, body: 'Invalid Origin header' }
    }
    return { ok: true }
  }
}

function compile(pattern: string): (value: string) => boolean {
  const p = pattern.toLowerCase()
  if (p.endsWith(':*')) {
    const base = p.slice(0, -2)
    return (v) => v.startsWith(`${base}:`) && /^\d{1,5}$/.test(v.slice(base.length + 1))
  }
  return (v) => v === p
}
