// The seed's REST table (seed 002 "Araçlar", ../shared/spec/rest-binding.md §1): each profile tool's route, and
// how its MCP-shaped arguments travel over REST (path parameters, JSON body, Idempotency-Key header).

/** One REST request built from a tool's arguments, before signing. */
export interface RestRequest {
  method: 'GET' | 'POST'
  /** The route under the base URL's path, parameters percent-encoded (e.g. `/v1/transactions/ch_1001`). */
  route: string
  /** The JSON body (POST), or undefined (GET: an empty body). */
  body: unknown
  /** The Idempotency-Key header's value, when the arguments carry an idempotency_key. */
  idempotencyKey: string | undefined
}

type Args = Record<string, unknown>

interface Route {
  method: 'GET' | 'POST'
  /** Path with `{name}` placeholders, filled from the argument of that name. */
  path: string
  /** Which part of the arguments is the JSON body: all of them (a query object) or `request`. */
  body?: 'arguments' | 'request'
}

const ROUTES: Readonly<Record<string, Route>> = {
  sr_describe: { method: 'GET', path: '/v1/describe' },
  sr_find_customers: { method: 'POST', path: '/v1/customers/search', body: 'arguments' },
  sr_get_customer: { method: 'GET', path: '/v1/customers/{customer_ref}' },
  sr_list_transactions: { method: 'GET', path: '/v1/customers/{customer_ref}/transactions' },
  sr_get_transaction: { method: 'GET', path: '/v1/transactions/{transaction_ref}' },
  sr_get_subscription: { method: 'GET', path: '/v1/subscriptions/{subscription_ref}' },
  sr_refund: { method: 'POST', path: '/v1/refunds', body: 'request' },
  sr_cancel_subscription: {
    method: 'POST',
    path: '/v1/subscriptions/{subscription_ref}/cancel',
    body: 'request',
  },
  sr_get_operation: { method: 'GET', path: '/v1/operations/{idempotency_key}' },
  sr_list_payment_attempts: { method: 'POST', path: '/v1/payment-attempts/list', body: 'arguments' },
}

/**
 * Builds the REST request of a profile tool call. Path parameters are percent-encoded as encodeURIComponent
 * does (our choice, rest-binding.md §1); a parameter that is only dots gets its dots encoded too, so no URL
 * layer can read it as `.`/`..` and route elsewhere. The key travels in the header except on the operations
 * route, where it is the path. Throws TypeError when a path parameter is missing or empty (caller misuse).
 */
export function restRequestOf(tool: string, args: Args): RestRequest {
  const route = ROUTES[tool]
  if (route === undefined) throw new TypeError('not a profile tool')
  const path = route.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => encodeParameter(name, args[name]))
  const key = tool === 'sr_get_operation' ? undefined : args.idempotency_key
  // rest-binding.md §2: 1–255 printable ASCII characters (anything else could not travel as the header anyway).
  if (key !== undefined && (typeof key !== 'string' || !/^[\x20-\x7e]{1,255}$/.test(key)))
    throw new TypeError('idempotency_key must be 1 to 255 printable ASCII characters')
  let body: unknown
  if (route.body === 'arguments') body = args
  else if (route.body === 'request') body = args.request
  if (route.method === 'POST' && (body === null || typeof body !== 'object' || Array.isArray(body)))
    throw new TypeError(`${tool} needs ${route.body === 'request' ? 'a request object' : 'an arguments object'}`)
  return { method: route.method, route: path, body, idempotencyKey: key }
}

function encodeParameter(name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new TypeError(`${name} must be a non-empty string`)
  const encoded = encodeURIComponent(value)
  return /^\.+$/.test(encoded) ? encoded.replaceAll('.', '%2E') : encoded
}

/** The base URL's path as a prefix without a trailing slash ('' for `/`). */
export function pathPrefix(url: URL): string {
  return url.pathname.replace(/\/+$/, '')
}
