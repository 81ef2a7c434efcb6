// The requirements manifest: every check id, the seed section it enforces and the behaviour it proves.
// Seed: ../shared/seeds/002_e61001a191572b93.txt ("MCP Bağlantısı"); section names are the seed's headings. The
// REST binding's details the seed leaves open are in ../shared/spec/rest-binding.md (cited as "REST §n").

/** The stable check ids, in the order the kit runs them (CI users grep them). */
export const CHECK_IDS = [
  'discovery',
  'describe',
  'mcp_profile',
  'find_customers',
  'get_customer',
  'list_transactions',
  'get_transaction',
  'get_subscription',
  'refund_dry_run',
  'refund',
  'refund_replay',
  'refund_conflict',
  'refund_exceeds',
  'get_operation',
  'get_operation_unknown',
  'cancel_dry_run',
  'cancel_at_period_end',
  'cancel_again',
  'signature_tool_call',
  'signature_stale',
  'signature_idempotency_key',
] as const

export type CheckId = (typeof CHECK_IDS)[number]

export interface Requirement {
  /** Where the seed states it. */
  section: string
  /** What passing the check proves, in one sentence. */
  behaviour: string
}

export const REQUIREMENTS: Readonly<Record<CheckId, Requirement>> = {
  discovery: {
    section: 'Aktarım ve Oturumlar — Keşif (discovery); REST: Araçlar (GET /v1/describe)',
    behaviour:
      'The endpoint answers server/discover (2026-07-28) or initialize + notifications/initialized (older) to a signed, capability-less client; over REST a signed GET /v1/describe is answered.',
  },
  describe: {
    section: 'Araçlar — sr_describe',
    behaviour: 'sr_describe answers a describe object that the contract accepts, read strictly from the sent bytes.',
  },
  mcp_profile: {
    section: 'Araç Şemalarını Yayımlama; Test Etme 3 (mcp_profile error codes); MCP only',
    behaviour:
      'tools/list fits in 5 pages, lists every required and declared-capability tool once, and publishes schemas within the limits that accept what the platform sends and the contract examples.',
  },
  find_customers: {
    section: 'Araçlar — sr_find_customers',
    behaviour:
      'Searching by each identifier the fixtures expose (customer_ref, transaction_ref, email, phone, order_ref, card_last4) finds the fixture customer.',
  },
  get_customer: {
    section: 'Araçlar — sr_get_customer',
    behaviour: 'sr_get_customer answers the fixture customer as a contract customer object.',
  },
  list_transactions: {
    section: 'Araçlar — sr_list_transactions',
    behaviour: "sr_list_transactions answers the customer's transactions and subscriptions, including the fixtures.",
  },
  get_transaction: {
    section: 'Araçlar — sr_get_transaction',
    behaviour: 'sr_get_transaction answers the fixture charge as a contract transaction object with integer amounts.',
  },
  get_subscription: {
    section: 'Araçlar — sr_get_subscription (cancel_subscription yeteneği)',
    behaviour: 'sr_get_subscription answers the fixture subscription when describe declares cancel_subscription.',
  },
  refund_dry_run: {
    section: 'Araçlar — sr_refund (deneme çalıştırması); bağlantı sayfasının kuralları',
    behaviour:
      'A refund dry run without idempotency_key answers would_succeed and leaves the transaction unchanged; over REST a dry run carrying Idempotency-Key is refused 400.',
  },
  refund: {
    section: 'Araçlar — sr_refund; Sonuçlar',
    behaviour:
      'A partial refund with a key succeeds (or is pending) for the asked amount and is recorded on the transaction under that key.',
  },
  refund_replay: {
    section: 'Eksiksiz Bir Sunucu — idempotency (replay)',
    behaviour:
      'The same key with the same arguments replays the identical first result; over REST the same status and byte-identical body.',
  },
  refund_conflict: {
    section: 'Eksiksiz Bir Sunucu — idempotency (conflict); Sonuçlar (409)',
    behaviour: 'The same key with another amount is refused with idempotency_conflict (409).',
  },
  refund_exceeds: {
    section: 'Eksiksiz Bir Sunucu — kalan tutarı aşan iadeler; Sonuçlar (422, the code → status table)',
    behaviour:
      'A refund beyond what is left to refund is refused with amount_exceeds_refundable (422; over REST the HTTP status itself must be 422).',
  },
  get_operation: {
    section: 'Araçlar — sr_get_operation; Sonuçlar (doğrulama)',
    behaviour: "sr_get_operation reports the refund's key with the refund's status.",
  },
  get_operation_unknown: {
    section: 'Araçlar — sr_get_operation (bilinmeyen anahtar)',
    behaviour: 'sr_get_operation answers status unknown for a key it never saw.',
  },
  cancel_dry_run: {
    section: 'Araçlar — sr_cancel_subscription (deneme çalıştırması)',
    behaviour: 'A cancel dry run without idempotency_key answers would_succeed and leaves the subscription unchanged.',
  },
  cancel_at_period_end: {
    section: 'Araçlar — sr_cancel_subscription (dönem sonunda iptal)',
    behaviour: 'Canceling at period end with a key succeeds and the subscription then shows cancel_at_period_end.',
  },
  cancel_again: {
    section: 'Eksiksiz Bir Sunucu — already_canceled; Sonuçlar (422)',
    behaviour: 'Canceling at period end again under a new key is refused with already_canceled (422).',
  },
  signature_tool_call: {
    section: 'İmzalama — araç çağrısının kendisini de doğrulayın; Sonuçlar (401)',
    behaviour:
      'With the handshake signed correctly and only the tool call signature broken (over REST: the one request), the server answers 401 with the REST error envelope.',
  },
  signature_idempotency_key: {
    section: 'İmzalama (anahtar alanı; REST §3: the key field carries Idempotency-Key); Sonuçlar (401); REST only',
    behaviour:
      'A real REST refund signed over one key but sent with another, signed with an empty key field while carrying the header, or sent without the signed header is answered 401 with the envelope and changes nothing.',
  },
  signature_stale: {
    section: 'İmzalama (±5 dakika, 3. bölüm); Sonuçlar (401)',
    behaviour: 'A request signed with a timestamp 10 minutes old is answered 401 with the REST error envelope.',
  },
}
