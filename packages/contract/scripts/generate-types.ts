// Generates src/types.generated.ts — a TypeScript type for every merchant-provider/v1 object — from the JSON Schemas
// in schemas/, with json-schema-to-typescript. Run: npm run generate-types -w packages/contract
// The test test/types-generated.test.ts regenerates in memory and compares byte for byte.
//
// Cross-file $refs are absolute contract $ids (https://schemas.supportroute.dev/merchant-provider/v1/…). The
// generator resolves $refs with @apidevtools/json-schema-ref-parser; its file and http resolvers are switched off
// and one resolver of ours answers every contract $id from the local schemas/ folder, so nothing is ever fetched
// and a $ref outside the contract fails the generation.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { compile, type JSONSchema } from 'json-schema-to-typescript'

const BASE = 'https://schemas.supportroute.dev/merchant-provider/v1/'
const SCHEMA_DIR = new URL('../schemas/', import.meta.url)
export const GENERATED_FILE = new URL('../src/types.generated.ts', import.meta.url)
export const GENERATE_COMMAND = 'npm run generate-types -w packages/contract'

/** Type names of tool-inputs.json's $defs (the file has no titles there: they are only used by fragment). */
const ARGUMENT_TYPES: Readonly<Record<string, string>> = {
  describe: 'DescribeArguments',
  get_customer: 'GetCustomerArguments',
  list_transactions: 'ListTransactionsArguments',
  get_transaction: 'GetTransactionArguments',
  get_subscription: 'GetSubscriptionArguments',
  refund: 'RefundArguments',
  cancel_subscription: 'CancelSubscriptionArguments',
  get_operation: 'GetOperationArguments',
}

/**
 * Names for objects the schemas define inline (a merchant's adapter builds them, so they deserve a name), by file and
 * JSON pointer. Without a title the generator inlines an anonymous type.
 */
const INLINE_TYPES: readonly { file: string; pointer: string; title: string }[] = [
  { file: 'customer-candidates.json', pointer: '/properties/candidates/items', title: 'Customer candidate' },
  { file: 'customer.json', pointer: '/properties/prior_chargebacks/items', title: 'Chargeback' },
  { file: 'describe.json', pointer: '/properties/capabilities', title: 'Capabilities' },
  { file: 'error.json', pointer: '/properties/error', title: 'Wire error' },
  { file: 'operation.json', pointer: '/properties/refusal', title: 'Operation refusal' },
  { file: 'payment-attempt-list.json', pointer: '/properties/payment_attempts/items', title: 'Payment attempt' },
  { file: 'subscription.json', pointer: '/properties/billing_interval', title: 'Billing interval' },
  { file: 'subscription.json', pointer: '/properties/last_charge/anyOf/0', title: 'Last charge' },
]

type Doc = Record<string, unknown>

function at(doc: Doc, file: string, pointer: string): Doc {
  let node: unknown = doc
  for (const token of pointer.slice(1).split('/')) {
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[token] : undefined
  }
  if (node === null || typeof node !== 'object') throw new Error(`${file}: nothing at ${pointer}`)
  return node as Doc
}

function schemaFiles(schemaDir: URL): string[] {
  return readdirSync(schemaDir)
    .filter((f) => f.endsWith('.json'))
    .sort()
}

/**
 * A schema document as the generator sees it: the file itself, plus annotations only the generator reads — type
 * names (`title`) for tool-inputs.json's $defs and inline objects, refund-request's amount as the plain
 * money.json $ref, and `tsType` for the argument-less describe call. Validation never
 * sees these (Ajv loads the files as they are).
 */
function annotated(schemaDir: URL, file: string): Doc {
  const doc = JSON.parse(readFileSync(new URL(file, schemaDir), 'utf8')) as Doc
  if (doc.$id !== BASE + file) throw new Error(`${file}: $id is not ${BASE + file}`)
  for (const inline of INLINE_TYPES) if (inline.file === file) at(doc, file, inline.pointer).title = inline.title
  // refund-request.json's amount is money.json with amount_minor ≥ 1: the same TypeScript type (a range is not a
  // type), so the generator sees the bare $ref and names it Money: any sibling keyword, even a description, makes it
  // declare a copy (Money1).
  if (file === 'refund-request.json') {
    const amount = at(doc, file, '/properties/amount')
    ;(doc.properties as Doc).amount = { $ref: amount.$ref }
  }
  if (file === 'tool-inputs.json') {
    const defs = doc.$defs as Record<string, Doc>
    for (const [name, def] of Object.entries(defs)) {
      const title = ARGUMENT_TYPES[name]
      if (title === undefined) throw new Error(`tool-inputs.json: no type name for $defs/${name} in ARGUMENT_TYPES`)
      def.title = title
    }
    // "takes no arguments": an empty object, not TypeScript's {} (which accepts any non-null value).
    ;(defs.describe as Doc).tsType = 'Record<string, never>'
  }
  return doc
}

/** The $refs of every object the contract defines: each file, and each tool-inputs.json $def. */
function contractRefs(files: readonly string[]): { name: string; ref: string }[] {
  return files
    .flatMap((file) =>
      file === 'tool-inputs.json' ? Object.keys(ARGUMENT_TYPES).map((def) => `${file}#/$defs/${def}`) : [file],
    )
    .map((name) => ({ name, ref: BASE + name }))
}

const BANNER = `// GENERATED by packages/contract/scripts/generate-types.ts from packages/contract/schemas — do not edit by hand.
// After changing a schema, run: ${GENERATE_COMMAND}
// (test/types-generated.test.ts fails while this file and the schemas disagree).
//
// Types are not proof: conditional rules (if/then/else), patterns, lengths and ranges are enforced only by the
// runtime validators (contractValidator). ContractTypes maps each contract ref to its type.`

/** The generated TypeScript source, as the committed file must read (schemaDir: another folder, for tests). */
export async function generateContractTypes(schemaDir: URL = SCHEMA_DIR): Promise<string> {
  const files = schemaFiles(schemaDir)
  const refs = contractRefs(files)
  // One root whose properties are every contract object, keyed by its ref: the generator then declares each
  // referenced schema once, named by its title, and ContractTypes['transaction.json'] is Transaction.
  const root = {
    title: 'Contract types',
    description: 'Every merchant-provider/v1 object type, by its ref (relative to the contract base).',
    type: 'object',
    additionalProperties: false,
    required: refs.map((r) => r.name),
    properties: Object.fromEntries(refs.map((r) => [r.name, { $ref: r.ref }])),
  }
  const source = await compile(root as JSONSchema, 'ContractTypes', {
    bannerComment: BANNER,
    additionalProperties: false,
    strictIndexSignatures: true,
    unknownAny: true,
    cwd: fileURLToPath(schemaDir),
    // The repository's formatting (biome: single quotes, no semicolons, 120 columns), so lint leaves it alone.
    style: { singleQuote: true, semi: false, printWidth: 120, trailingComma: 'all', bracketSpacing: true },
    $refOptions: {
      resolve: {
        external: true,
        file: false,
        http: false,
        contract: {
          order: 1,
          canRead: (file: { url: string }) => file.url.startsWith(BASE),
          read: (file: { url: string }) => {
            const name = file.url.slice(BASE.length).split('#', 1)[0] as string
            if (!files.includes(name)) throw new Error(`$ref to ${file.url}: no such contract schema`)
            return JSON.stringify(annotated(schemaDir, name))
          },
        },
      },
    } as never,
  })
  return `${source.trimEnd()}\n`
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const source = await generateContractTypes()
  writeFileSync(GENERATED_FILE, source)
  console.log(`wrote ${fileURLToPath(GENERATED_FILE)} (${Buffer.byteLength(source)} bytes)`)
}
