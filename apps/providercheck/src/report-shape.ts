// What `providercheck report` accepts: JSON shaped like a providercheck report, checked with a JSON Schema
// (ajv, draft 2020-12) before anything is rendered. A report file is input like any other: it may be hand-made.
import { Ajv2020 } from 'ajv/dist/2020.js'
import { ReportShapeError } from './errors.js'
import type { Report } from './report.js'

const text = { type: 'string', maxLength: 100_000 }
const textOrNull = { type: ['string', 'null'], maxLength: 100_000 }
const count = { type: 'integer', minimum: 0 }

const REPORT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: [
    'format',
    'kit',
    'target',
    'fixtures',
    'credentials',
    'started_at',
    'finished_at',
    'outcome',
    'summary',
    'checks',
  ],
  properties: {
    format: { const: 'providercheck-report/1' },
    kit: { type: 'object', required: ['name', 'version'], properties: { name: text, version: text } },
    target: {
      type: 'object',
      required: ['base_url', 'transport', 'environment', 'tenant', 'era'],
      properties: {
        base_url: text,
        transport: { enum: ['mcp', 'rest'] },
        environment: text,
        tenant: text,
        era: { type: ['string', 'null'], maxLength: 100 },
      },
    },
    fixtures: {
      type: 'object',
      required: ['customer', 'transaction', 'subscription'],
      // null: a live run given no such fixture.
      properties: { customer: textOrNull, transaction: textOrNull, subscription: textOrNull },
    },
    credentials: {
      type: 'object',
      required: ['bearer_token', 'edge_headers'],
      properties: { bearer_token: { type: 'boolean' }, edge_headers: { type: 'array', items: text, maxItems: 100 } },
    },
    started_at: text,
    finished_at: text,
    outcome: { enum: ['pass', 'fail', 'interrupted'] },
    summary: {
      type: 'object',
      required: ['pass', 'fail', 'skip'],
      properties: { pass: count, fail: count, skip: count },
    },
    checks: {
      type: 'array',
      maxItems: 1000,
      items: {
        type: 'object',
        required: ['id', 'verdict', 'code', 'reason', 'duration_ms'],
        properties: {
          id: text,
          verdict: { enum: ['pass', 'fail', 'skip'] },
          code: { type: ['string', 'null'], maxLength: 1000 },
          reason: text,
          duration_ms: { type: 'number', minimum: 0 },
          exchanges: {
            type: 'array',
            maxItems: 100,
            items: { type: 'object', required: ['sent', 'received'], properties: { sent: text, received: text } },
          },
        },
      },
    },
    not_run: { type: 'array', items: text, maxItems: 1000 },
  },
} as const

const validate = new Ajv2020({ allErrors: false, strict: true }).compile(REPORT_SCHEMA)

/** The value as a Report (a report written before `not_run` existed gets an empty one); throws ReportShapeError. */
export function asReport(value: unknown): Report {
  if (!validate(value)) {
    const first = validate.errors?.[0]
    const where = first?.instancePath === '' || first === undefined ? 'the top level' : first.instancePath
    throw new ReportShapeError(`not a providercheck report: ${where} ${first?.message ?? 'is invalid'}`)
  }
  const report = value as Report & { not_run?: string[] }
  return { ...report, not_run: report.not_run ?? [] }
}
