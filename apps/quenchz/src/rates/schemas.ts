// Input and output JSON Schemas of the four tools (draft 2020-12 compatible, plain objects).

const date = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } as const
const nullableDate = { type: ['string', 'null'] } as const
const count = { type: 'integer', minimum: 0 } as const
const source = { type: 'string', const: 'ECB statistics.' } as const

export const CERTIFICATE_SCHEMA = {
  type: 'object',
  required: [
    'requested_from',
    'requested_to',
    'requested_calendar_days',
    'expected_observations',
    'delivered_observations',
    'delivered_from',
    'delivered_to',
    'absent',
    'window_still_open',
    'body_completed_at',
    'source',
  ],
  additionalProperties: false,
  properties: {
    requested_from: date,
    requested_to: date,
    requested_calendar_days: count,
    expected_observations: count,
    delivered_observations: count,
    delivered_from: nullableDate,
    delivered_to: nullableDate,
    absent: {
      type: 'object',
      required: ['target_closed', 'not_yet_published', 'no_such_observation', 'before_the_series'],
      additionalProperties: false,
      properties: {
        target_closed: count,
        not_yet_published: count,
        no_such_observation: count,
        before_the_series: count,
        after_the_series: count,
      },
    },
    window_still_open: { type: 'boolean' },
    body_completed_at: { type: 'string' },
    source,
  },
} as const

export const WINDOW_INPUT = {
  type: 'object',
  properties: {
    currency: { type: 'string', description: 'ISO 4217 code of the currency quoted per euro, e.g. USD' },
    start: { type: 'string', description: 'first day of the window, YYYY-MM-DD, inclusive' },
    end: { type: 'string', description: 'last day of the window, YYYY-MM-DD, inclusive' },
    cassette: { type: 'string', description: 'recordings source only: replay this named recording' },
  },
  required: ['start', 'end'],
} as const

export const WINDOW_OUTPUT = {
  type: 'object',
  required: ['observations', 'coverage', 'source'],
  additionalProperties: false,
  properties: {
    observations: {
      type: 'array',
      items: { type: 'array', prefixItems: [date, { type: 'number' }], minItems: 2, maxItems: 2 },
    },
    coverage: CERTIFICATE_SCHEMA,
    source,
  },
} as const

export const WHY_INPUT = {
  type: 'object',
  properties: { day: { type: 'string', description: 'YYYY-MM-DD' } },
  required: ['day'],
} as const

export const WHY_OUTPUT = {
  type: 'object',
  required: ['date', 'closed_because', 'source'],
  additionalProperties: false,
  properties: { date: { type: 'string' }, closed_because: { type: ['string', 'null'] }, source },
} as const

export const CATALOGUE_INPUT = { type: 'object', properties: {} } as const

export const CATALOGUE_OUTPUT = {
  type: 'object',
  required: ['series', 'note', 'source'],
  additionalProperties: false,
  properties: { series: { type: 'array', items: { type: 'string' } }, note: { type: 'string' }, source },
} as const

export const CONVERT_INPUT = {
  type: 'object',
  properties: {
    amount_minor: { type: 'integer', description: 'amount in minor units of `from` (cents for USD)' },
    from: { type: 'string', description: 'ISO 4217 code, EUR allowed' },
    to: { type: 'string', description: 'ISO 4217 code, EUR allowed' },
    date: { type: 'string', description: 'YYYY-MM-DD; the reference rates of that day are used' },
  },
  required: ['amount_minor', 'from', 'to', 'date'],
} as const

const leg = {
  type: 'object',
  required: ['currency', 'minor_unit_exponent', 'rate_per_euro'],
  additionalProperties: false,
  properties: {
    currency: { type: 'string' },
    minor_unit_exponent: count,
    rate_per_euro: { type: 'string' },
    amount_minor: { type: 'integer' },
  },
} as const

export const CONVERT_OUTPUT = {
  type: 'object',
  required: ['amount_minor', 'currency', 'date', 'from', 'to', 'rounding', 'coverage', 'source'],
  additionalProperties: false,
  properties: {
    amount_minor: { type: 'integer' },
    currency: { type: 'string' },
    date,
    from: leg,
    to: leg,
    rounding: { type: 'string' },
    coverage: {
      type: 'object',
      required: ['from', 'to'],
      additionalProperties: false,
      properties: {
        from: { anyOf: [CERTIFICATE_SCHEMA, { type: 'null' }] },
        to: { anyOf: [CERTIFICATE_SCHEMA, { type: 'null' }] },
      },
    },
    source,
  },
} as const
