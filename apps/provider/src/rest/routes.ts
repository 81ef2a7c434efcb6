// The seed's REST table: each profile tool's method and path, and how a request's path parameters, body and
// Idempotency-Key header become that tool's arguments (so both bindings run the same input check and handler).
import FindMyWay from 'find-my-way'
import type { ToolEntry } from '../mcp/tool-table.js'

export type RestMethod = 'GET' | 'POST'

/** What a route hands to the tool: its path parameters, the parsed body (POST) and the key header (if any). */
export interface RouteInput {
  params: Record<string, string>
  body: unknown
  key: string | undefined
}

export interface RestRoute {
  tool: string
  method: RestMethod
  /** find-my-way pattern (`:name` = one path segment, decoded once). */
  pattern: string
  /** true: a real call carries the key in Idempotency-Key; a dry run carries none. */
  keyed: boolean
  args: (input: RouteInput) => Record<string, unknown>
}

const withKey = (key: string | undefined) => (key === undefined ? {} : { idempotency_key: key })
const bodyArgs = ({ body }: RouteInput) => body as Record<string, unknown>

export const REST_ROUTES: readonly RestRoute[] = [
  { tool: 'sr_describe', method: 'GET', pattern: '/v1/describe', keyed: false, args: () => ({}) },
  { tool: 'sr_find_customers', method: 'POST', pattern: '/v1/customers/search', keyed: false, args: bodyArgs },
  {
    tool: 'sr_get_customer',
    method: 'GET',
    pattern: '/v1/customers/:customer_ref',
    keyed: false,
    args: ({ params }) => ({ customer_ref: params.customer_ref }),
  },
  {
    tool: 'sr_list_transactions',
    method: 'GET',
    pattern: '/v1/customers/:customer_ref/transactions',
    keyed: false,
    args: ({ params }) => ({ customer_ref: params.customer_ref }),
  },
  {
    tool: 'sr_get_transaction',
    method: 'GET',
    pattern: '/v1/transactions/:transaction_ref',
    keyed: false,
    args: ({ params }) => ({ transaction_ref: params.transaction_ref }),
  },
  {
    tool: 'sr_get_subscription',
    method: 'GET',
    pattern: '/v1/subscriptions/:subscription_ref',
    keyed: false,
    args: ({ params }) => ({ subscription_ref: params.subscription_ref }),
  },
  {
    tool: 'sr_refund',
    method: 'POST',
    pattern: '/v1/refunds',
    keyed: true,
    args: ({ body, key }) => ({ ...withKey(key), request: body }),
  },
  {
    tool: 'sr_cancel_subscription',
    method: 'POST',
    pattern: '/v1/subscriptions/:subscription_ref/cancel',
    keyed: true,
    args: ({ params, body, key }) => ({ ...withKey(key), subscription_ref: params.subscription_ref, request: body }),
  },
  {
    tool: 'sr_get_operation',
    method: 'GET',
    pattern: '/v1/operations/:idempotency_key',
    keyed: false,
    args: ({ params }) => ({ idempotency_key: params.idempotency_key }),
  },
  {
    tool: 'sr_list_payment_attempts',
    method: 'POST',
    pattern: '/v1/payment-attempts/list',
    keyed: false,
    args: bodyArgs,
  },
]

export interface RouteStore {
  route: RestRoute
  entry: ToolEntry
}

export type RouteMatch =
  | { kind: 'found'; route: RestRoute; entry: ToolEntry; params: Record<string, string> }
  /** A path no listed tool serves (also a route of an undeclared capability). */
  | { kind: 'not_found' }
  /** A known path with another method: the methods it has. */
  | { kind: 'method_not_allowed'; allow: RestMethod[] }
  /** Percent-encoding that does not decode. */
  | { kind: 'bad_path' }

const METHODS: readonly RestMethod[] = ['GET', 'POST']
const BAD_PATH = Symbol('bad path')

/**
 * A router over the listed tools only, so a capability the provider does not declare has no route (404). Path
 * parameters are decoded once; keys and refs may be up to 255 characters, percent-encoded up to three times as long.
 */
export function createRestRouter(tools: readonly ToolEntry[]): (method: string, path: string) => RouteMatch {
  const router = FindMyWay({
    maxParamLength: 2048,
    onBadUrl: () => {},
  })
  const byName = new Map(tools.map((t) => [t.tool.name, t]))
  for (const route of REST_ROUTES) {
    const entry = byName.get(route.tool)
    if (entry === undefined) continue
    const store: RouteStore = { route, entry }
    router.on(route.method, route.pattern, () => {}, store)
  }
  const find = (method: string, path: string) => {
    const found = router.find(method as 'GET', path)
    if (found === null) return undefined
    return found.store === null ? BAD_PATH : (found as unknown as { store: RouteStore; params: Record<string, string> })
  }
  return (method, path) => {
    const hit = find(method, path)
    if (hit === BAD_PATH) return { kind: 'bad_path' }
    if (hit !== undefined) return { kind: 'found', route: hit.store.route, entry: hit.store.entry, params: hit.params }
    const others = METHODS.filter((m) => m !== method).map((m) => [m, find(m, path)] as const)
    if (others.some(([, h]) => h === BAD_PATH)) return { kind: 'bad_path' }
    const allow = others.filter(([, h]) => h !== undefined).map(([m]) => m)
    return allow.length > 0 ? { kind: 'method_not_allowed', allow } : { kind: 'not_found' }
  }
}
