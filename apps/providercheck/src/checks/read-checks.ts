import { PROFILE_TOOLS } from '@tollgate/contract'
import {
  MalformedBody,
  PlatformClientError,
  TOOL_LIST_MAX_DEPTH,
  type ToolListing,
  UnexpectedHttpStatus,
} from '@tollgate/platform-client'
import { formatAmount } from '../amounts.js'
import type { CheckDefinition, KitContext } from '../check-types.js'
import { BEARER_TOKEN_ENV } from '../credential-env.js'
import { CheckFailure, NotApplicable, UnsuitableFixture } from '../errors.js'
import { judgeProfile } from '../profile/judge-profile.js'
import { SCHEMA_LIMITS } from '../profile/schema-limits.js'
import { callOk, expect, fixture, isObj, type Obj } from './call-helpers.js'

export const discovery: CheckDefinition = {
  id: 'discovery',
  needs: [],
  async run(ctx) {
    let era: Awaited<ReturnType<typeof ctx.client.discover>> | undefined
    try {
      // REST has no handshake: the binding is reached when a signed GET /v1/describe is answered.
      if (ctx.transport === 'rest') await callOk(ctx, 'sr_describe', {})
      else era = await ctx.client.discover()
    } catch (error) {
      // An MCP endpoint given as a REST base URL puts the routes under /mcp/v1/…: say so instead of a bare 404.
      const notFound =
        (error instanceof CheckFailure && / \(404\)/.test(error.message)) ||
        (error instanceof UnexpectedHttpStatus && error.status === 404)
      if (ctx.transport === 'rest' && notFound) {
        throw new CheckFailure(
          'unexpected_status',
          `${(error as Error).message}: is -base-url the REST base URL (the one /v1/… hangs from, e.g. without /mcp)?`,
        )
      }
      // A refused handshake is almost always configuration: say what the kit sent (names only) and where it comes from.
      if (error instanceof UnexpectedHttpStatus && (error.status === 401 || error.status === 403)) {
        throw new CheckFailure(
          'credentials_rejected',
          `${error.message}: the provider refused the request (${sent(ctx)})`,
        )
      }
      throw error
    }
    if (era === undefined) return 'REST binding: a signed GET /v1/describe is answered 200'
    ctx.state.era = era
    return era === 'legacy'
      ? 'legacy server: initialize + notifications/initialized'
      : '2026-07-28 server: server/discover'
  },
}

function sent(ctx: KitContext): string {
  const { bearerToken, edgeHeaderNames } = ctx.credentials
  const token = bearerToken ? 'a bearer token' : `no bearer token (${BEARER_TOKEN_ENV} is not set)`
  const edge = edgeHeaderNames.length === 0 ? 'no edge headers' : `edge headers ${edgeHeaderNames.join(', ')}`
  return `sent: the signature, ${token}, ${edge}; check the signing secret, the token and -edge-header`
}

export const describe: CheckDefinition = {
  id: 'describe',
  needs: ['discovery'],
  tools: ['sr_describe'],
  async run(ctx) {
    const value = await callOk(ctx, 'sr_describe', {})
    const capabilities = value.capabilities as Record<string, boolean>
    ctx.state.describe = { capabilities, currencies: value.currencies as string[] }
    const declared = Object.keys(capabilities).filter((k) => capabilities[k] === true)
    return `contract ${String(value.contract_version)}; capabilities: ${declared.join(', ') || 'none'}`
  },
}

export const mcpProfile: CheckDefinition = {
  id: 'mcp_profile',
  needs: ['describe'],
  // The REST binding publishes no tool list (seed 002 "Araç Şemalarını Yayımlama" is the MCP page's).
  transports: ['mcp'],
  async run(ctx) {
    const started = ctx.now()
    // The client bounds its requests on the system clock; the whole check is judged on ctx.now() below.
    const deadline = Date.now() + ctx.profileBudgetMs
    let listing: Awaited<ReturnType<typeof ctx.client.listTools>>
    try {
      listing = await ctx.client.listTools({ maxPages: SCHEMA_LIMITS.maxPages, deadline })
    } catch (error) {
      if (error instanceof PlatformClientError && error.code === 'ERR_PLATFORM_TIMEOUT') {
        throw new CheckFailure(
          'mcp_profile_timeout',
          `tools/list did not finish within the ${ctx.profileBudgetMs / 1000} s profile budget`,
        )
      }
      // Only schemas nest that deep in a tool list: name the rule, not the JSON reader.
      if (error instanceof MalformedBody && error.reason === 'too_deep') {
        throw new CheckFailure(
          'mcp_schema_too_complex',
          `tools/list nests deeper than ${TOOL_LIST_MAX_DEPTH} levels (a schema may have ${SCHEMA_LIMITS.maxDepth})`,
        )
      }
      throw error
    }
    ctx.state.missingTools = missingTools(listing, ctx.state.describe?.capabilities ?? {})
    const reason = judgeProfile(listing, ctx.state.describe?.capabilities ?? {})
    if (ctx.now() - started > ctx.profileBudgetMs) {
      throw new CheckFailure(
        'mcp_profile_timeout',
        `the profile check took longer than ${ctx.profileBudgetMs / 1000} s`,
      )
    }
    return reason
  },
}

// Profile tools the provider must list (required ones and those of declared capabilities) that it does not list.
function missingTools(listing: ToolListing, capabilities: Record<string, boolean>): string[] {
  const listed = new Set(listing.pages.flatMap((p) => p.tools).map((t) => (isObj(t) ? t.name : undefined)))
  return PROFILE_TOOLS.filter((t) => t.capability === undefined || capabilities[t.capability] === true)
    .map((t) => t.name)
    .filter((name) => !listed.has(name))
}

export const findCustomers: CheckDefinition = {
  id: 'find_customers',
  needs: ['discovery'],
  tools: ['sr_find_customers'],
  async run(ctx) {
    const customer = fixture(ctx, 'customer')
    const { transaction } = ctx.fixtures
    const queries: [string, string][] = [['customer_ref', customer]]
    if (transaction !== undefined) queries.push(['transaction_ref', transaction])
    // The other identifiers come from the fixtures' own records; a record that cannot be read only narrows
    // the search (its own check reports it).
    const known = await lookAround(ctx)
    const email = (known.customer?.emails as string[] | undefined)?.[0]
    if (email) queries.push(['email', email])
    const phone = (known.customer?.phones as string[] | undefined)?.[0]
    if (phone) queries.push(['phone', phone])
    const order = known.transaction?.order_ref
    if (typeof order === 'string') queries.push(['order_ref', order])
    const last4 = known.transaction?.card_last4
    if (typeof last4 === 'string') queries.push(['card_last4', last4])
    for (const [field, value] of queries) {
      const found = await callOk(ctx, 'sr_find_customers', { [field]: value })
      const refs = (found.candidates as Obj[]).map((c) => c.customer_ref)
      expect(refs.includes(customer), `searching by ${field} did not find ${customer}`)
    }
    return `found ${customer} by ${queries.map(([f]) => f).join(', ')}`
  },
}

async function lookAround(ctx: Parameters<CheckDefinition['run']>[0]): Promise<{ customer?: Obj; transaction?: Obj }> {
  const out: { customer?: Obj; transaction?: Obj } = {}
  try {
    const c = await ctx.client.callTool('sr_get_customer', { customer_ref: ctx.fixtures.customer }, ctx.call)
    if (c.kind === 'result' && isObj(c.value)) out.customer = c.value
  } catch {
    // reported by get_customer
  }
  if (ctx.fixtures.transaction === undefined) return out
  try {
    const t = await ctx.client.callTool('sr_get_transaction', { transaction_ref: ctx.fixtures.transaction }, ctx.call)
    if (t.kind === 'result' && isObj(t.value)) out.transaction = t.value
  } catch {
    // reported by get_transaction
  }
  return out
}

export const getCustomer: CheckDefinition = {
  id: 'get_customer',
  needs: ['discovery'],
  tools: ['sr_get_customer'],
  async run(ctx) {
    const customer = fixture(ctx, 'customer')
    const value = await callOk(ctx, 'sr_get_customer', { customer_ref: customer })
    expect(value.customer_ref === customer, 'sr_get_customer answered another customer_ref')
    ctx.state.customer = value
    return `${customer}: account ${String(value.account_status)}`
  },
}

export const listTransactions: CheckDefinition = {
  id: 'list_transactions',
  needs: ['discovery'],
  tools: ['sr_list_transactions'],
  async run(ctx) {
    const value = await callOk(ctx, 'sr_list_transactions', { customer_ref: fixture(ctx, 'customer') })
    const txs = (value.transactions as Obj[]).map((t) => t.transaction_ref)
    const subs = (value.subscriptions as Obj[]).map((s) => s.subscription_ref)
    const { transaction, subscription } = ctx.fixtures
    if (transaction !== undefined && !txs.includes(transaction)) await missingFromList(ctx, 'transaction')
    if (subscription !== undefined && !subs.includes(subscription)) await missingFromList(ctx, 'subscription')
    const given = transaction !== undefined || subscription !== undefined
    return `${txs.length} transaction(s), ${subs.length} subscription(s)${given ? ' including the fixtures' : ''}`
  },
}

// A fixture missing from the customer's list is the provider's fault only if it belongs to that customer: one that
// belongs to another customer is an unsuitable fixture (the caller paired them wrongly), and the reason says so.
async function missingFromList(ctx: KitContext, kind: 'transaction' | 'subscription'): Promise<never> {
  const ref = ctx.fixtures[kind]
  let owner: unknown
  try {
    const value = await callOk(ctx, `sr_get_${kind}`, { [`${kind}_ref`]: ref })
    owner = value.customer_ref
  } catch {
    owner = undefined // the provider's own failure to answer is judged by get_transaction / get_subscription
  }
  if (typeof owner === 'string' && owner !== ctx.fixtures.customer) {
    throw new UnsuitableFixture(
      `${ref} belongs to ${owner}, not ${ctx.fixtures.customer}: pass a ${kind} of ${ctx.fixtures.customer} as -${kind}, or -customer ${owner}`,
    )
  }
  throw new CheckFailure('unexpected_result', `the list lacks ${ref}`)
}

export const getTransaction: CheckDefinition = {
  id: 'get_transaction',
  needs: ['discovery'],
  tools: ['sr_get_transaction'],
  async run(ctx) {
    const transaction = fixture(ctx, 'transaction')
    const value = await callOk(ctx, 'sr_get_transaction', { transaction_ref: transaction })
    expect(value.transaction_ref === transaction, 'sr_get_transaction answered another transaction_ref')
    ctx.state.transaction = value
    const amount = value.amount as { amount_minor: number; currency: string }
    return `${transaction}: ${String(value.state)}, ${formatAmount(amount.amount_minor, amount.currency)}`
  },
}

export const getSubscription: CheckDefinition = {
  id: 'get_subscription',
  needs: ['describe'],
  tools: ['sr_get_subscription'],
  async run(ctx) {
    if (ctx.state.describe?.capabilities.cancel_subscription !== true)
      throw new NotApplicable('cancel_subscription is not declared')
    const subscription = fixture(ctx, 'subscription')
    const value = await callOk(ctx, 'sr_get_subscription', { subscription_ref: subscription })
    expect(value.subscription_ref === subscription, 'sr_get_subscription answered another subscription_ref')
    ctx.state.subscription = value
    return `${subscription}: ${String(value.phase)}, cancel_at_period_end ${String(value.cancel_at_period_end)}`
  },
}

export const getOperationUnknown: CheckDefinition = {
  id: 'get_operation_unknown',
  needs: ['discovery'],
  tools: ['sr_get_operation'],
  async run(ctx) {
    const key = ctx.newKey('refund')
    const value = await callOk(ctx, 'sr_get_operation', { idempotency_key: key })
    expect(value.status === 'unknown', `an unseen key answered status ${String(value.status)}, expected unknown`)
    expect(value.idempotency_key === key, 'the answer names another idempotency_key')
    return 'an unseen key answers status unknown'
  },
}
