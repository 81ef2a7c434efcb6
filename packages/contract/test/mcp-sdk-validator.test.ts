import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Client } from '@modelcontextprotocol/client'
import { AjvJsonSchemaValidator as ClientAjvValidator } from '@modelcontextprotocol/client/validators/ajv'
import { fromJsonSchema, InMemoryTransport, McpServer } from '@modelcontextprotocol/server'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv'
import {
  contractJsonSchemaValidator,
  createContractAjv,
  listExamples,
  PROFILE_TOOLS,
  publishedSchema,
} from '@tollgate/contract'

// The seed's advice, checked against the official SDK v2: load the contract into the SDK's validator by $id
// (new AjvJsonSchemaValidator(createContractAjv()), an Ajv2020) and the {"type":"object","$ref"} form just works.

const example = (schema: string, name: string) => {
  const ex = listExamples().find((e) => e.valid && e.schema === schema && e.name === name)!
  return JSON.parse(ex.bytes.toString('utf8'))
}
const refundArgs = example('tool-inputs.json#/$defs/refund', 'seed')
const refundResult = example('refund-result.json', 'seed-succeeded')
const refusal = example('error.json', 'amount-exceeds-refundable')

test('AjvJsonSchemaValidator over createContractAjv validates every published schema against the examples', () => {
  const validator = new AjvJsonSchemaValidator(createContractAjv())
  for (const tool of PROFILE_TOOLS) {
    for (const ref of [tool.inputRef, tool.outputRef]) {
      const check = validator.getValidator(publishedSchema(ref))
      const examples = listExamples().filter((e) => e.schema === ref)
      assert.ok(examples.length > 0, ref)
      for (const ex of examples) {
        assert.equal(check(JSON.parse(ex.bytes.toString('utf8'))).valid, ex.valid, `${ref} ${ex.name}`)
      }
    }
  }
})

async function connect(options: {
  contractOnClient: boolean | 'cached'
  output: () => { isError?: boolean; body: unknown }
}) {
  const validator = new AjvJsonSchemaValidator(createContractAjv())
  const server = new McpServer({ name: 'contract-test', version: '0.0.0' }, { jsonSchemaValidator: validator })
  const tool = PROFILE_TOOLS.find((t) => t.name === 'sr_refund')!
  server.registerTool(
    tool.name,
    {
      inputSchema: fromJsonSchema(publishedSchema(tool.inputRef), validator),
      outputSchema: fromJsonSchema(publishedSchema(tool.outputRef), validator),
    },
    async () => {
      const { isError, body } = options.output()
      return {
        ...(isError ? { isError } : {}),
        structuredContent: body as Record<string, unknown>,
        content: [{ type: 'text' as const, text: JSON.stringify(body) }],
      }
    },
  )
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client(
    { name: 'contract-test-client', version: '0.0.0' },
    options.contractOnClient === 'cached'
      ? { jsonSchemaValidator: contractJsonSchemaValidator() }
      : options.contractOnClient
        ? { jsonSchemaValidator: new ClientAjvValidator(createContractAjv()) }
        : {},
  )
  await client.connect(clientSide)
  return {
    client,
    close: async () => {
      await client.close()
      await server.close()
    },
  }
}

test('an SDK server publishes the $ref form unchanged and a client holding the contract validates the result', async (t) => {
  const { client, close } = await connect({ contractOnClient: true, output: () => ({ body: refundResult }) })
  t.after(close)
  const { tools } = await client.listTools()
  assert.deepEqual(tools[0]?.inputSchema, publishedSchema('tool-inputs.json#/$defs/refund'))
  assert.deepEqual(tools[0]?.outputSchema, publishedSchema('refund-result.json'))
  const result = await client.callTool({ name: 'sr_refund', arguments: refundArgs })
  assert.deepEqual(result.structuredContent, refundResult)
  assert.notEqual(result.isError, true)
})

test('an error envelope with isError true passes; output validation applies to results only', async (t) => {
  const { client, close } = await connect({ contractOnClient: true, output: () => ({ isError: true, body: refusal }) })
  t.after(close)
  const result = await client.callTool({ name: 'sr_refund', arguments: refundArgs })
  assert.equal(result.isError, true)
  assert.deepEqual(result.structuredContent, refusal)
})

test('a client without the contract refuses the tool: the $ref cannot be resolved (the pitfall the seed warns of)', async (t) => {
  const { client, close } = await connect({ contractOnClient: false, output: () => ({ body: refundResult }) })
  t.after(close)
  await client.listTools()
  await assert.rejects(client.callTool({ name: 'sr_refund', arguments: refundArgs }), /can't resolve reference/)
})

test('SDK input validation answers isError with text only, not the invalid_request envelope the platform reads', async (t) => {
  // Pinned because apps/provider must validate arguments itself (contractValidator) to answer the envelope.
  const { client, close } = await connect({ contractOnClient: true, output: () => ({ body: refundResult }) })
  t.after(close)
  const bad = structuredClone(refundArgs)
  bad.request.amount.amount_minor = 2000.5
  const result = await client.callTool({ name: 'sr_refund', arguments: bad })
  assert.equal(result.isError, true)
  assert.equal(result.structuredContent, undefined)
})

test('contractJsonSchemaValidator works as the SDK client`s validator', async (t) => {
  const { client, close } = await connect({ contractOnClient: 'cached', output: () => ({ body: refundResult }) })
  t.after(close)
  const result = await client.callTool({ name: 'sr_refund', arguments: refundArgs })
  assert.deepEqual(result.structuredContent, refundResult)
})

test('contractJsonSchemaValidator compiles each distinct schema once, whatever object it arrives in', () => {
  const validator = contractJsonSchemaValidator()
  const first = validator.getValidator(publishedSchema('refund-result.json'))
  const again = validator.getValidator(JSON.parse(JSON.stringify(publishedSchema('refund-result.json'))))
  assert.equal(again, first)
  assert.notEqual(validator.getValidator(publishedSchema('cancel-result.json')), first)
  assert.deepEqual(first(refundResult), { valid: true, data: refundResult, errorMessage: undefined })
  const bad = { ...refundResult, refund_ref: 12345678 }
  const outcome = first(bad)
  assert.equal(outcome.valid, false)
  assert.ok(outcome.errorMessage?.includes('/refund_ref') && !outcome.errorMessage.includes('12345678'))
})

test('contractJsonSchemaValidator keeps working past its cache bound (schemas compiled, used, dropped)', () => {
  const validator = contractJsonSchemaValidator()
  for (let i = 0; i < 600; i++) {
    const check = validator.getValidator<unknown>({ type: 'object', maxProperties: i + 1 })
    assert.equal(check({}).valid, true)
  }
  const late = validator.getValidator({ type: 'object', maxProperties: 0 })
  assert.equal(late({ a: 1 }).valid, false)
})
