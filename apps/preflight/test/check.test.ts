import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { check } from '@tollgate/preflight'
import { BASE_TEXT, type Doc, docBytes, rawBytes, receipt } from './helpers.js'

const enc = (s: string) => new TextEncoder().encode(s)
function expectResult(bytes: Uint8Array, outcome: string, diagnostic: string, exit_code: number): void {
  assert.deepEqual(check(bytes), { diagnostic, exit_code, outcome, version: '0.1.0' })
}
const invalidInput = (bytes: Uint8Array, diagnostic: string) => expectResult(bytes, 'invalid_input', diagnostic, 2)
const invalidEnvelope = (bytes: Uint8Array, diagnostic: string) =>
  expectResult(bytes, 'invalid_envelope', diagnostic, 2)
const invalidReceipt = (bytes: Uint8Array, diagnostic: string) => expectResult(bytes, 'invalid_receipt', diagnostic, 2)
const consistent = (bytes: Uint8Array) => expectResult(bytes, 'consistent_sample', 'educational_expected_match', 0)

test('the seed example is a consistent sample', () => consistent(enc(BASE_TEXT)))

describe('contract row: input', () => {
  test('must be an object', () => {
    for (const t of ['[]', '"x"', 'null', '1', 'true']) invalidInput(enc(t), 'input_not_object')
  })
  test('must have exactly protocol_version, expected, response', () => {
    invalidInput(
      docBytes((d) => void delete d.response),
      'input_fields_invalid',
    )
    invalidInput(
      docBytes((d) => {
        d.extra = 1
      }),
      'input_fields_invalid',
    )
    invalidInput(
      docBytes((d) => void delete d.protocol_version),
      'input_fields_invalid',
    )
  })
})

describe('contract row: expected', () => {
  test('must be an object with exactly rpc_id, order_id, amount_minor, currency', () => {
    invalidInput(
      docBytes((d) => {
        d.expected = []
      }),
      'expected_not_object',
    )
    invalidInput(
      docBytes((d) => {
        d.expected = null
      }),
      'expected_not_object',
    )
    invalidInput(
      docBytes((d) => void delete d.expected.currency),
      'expected_fields_invalid',
    )
    invalidInput(
      docBytes((d) => {
        d.expected.refund_id = 'example-refund-1'
      }),
      'expected_fields_invalid',
    )
  })
  test('order_id is example- plus an ASCII suffix starting with a letter or digit', () => {
    for (const bad of [
      'example-',
      'example-_a',
      'example-.a',
      'example--a',
      'example- a',
      ' example-a',
      'example-a ',
      'Example-a',
      'EXAMPLE-A',
      'order-1',
      'example-é',
      'example-a/b',
      'example-a\n',
      '',
      42,
    ]) {
      invalidInput(
        docBytes((d) => {
          d.expected.order_id = bad
          receipt(d).order_id = bad
        }),
        'expected_order_id_invalid',
      )
    }
    for (const good of ['example-a', 'example-1', 'example-A.b_c-9', 'example-order-1']) {
      consistent(
        docBytes((d) => {
          d.expected.order_id = good
          receipt(d).order_id = good
        }),
      )
    }
  })
  test('amount_minor is an integer from 1 to 9007199254740991; bool, float and numeric strings are refused', () => {
    for (const raw of ['0', '-1', '9007199254740992', '1500.0', '15e2', '"1500"', 'true', 'null', '1.5']) {
      invalidInput(
        rawBytes((d) => {
          d.expected.amount_minor = '@RAW@'
        }, raw),
        'expected_amount_minor_invalid',
      )
    }
    for (const raw of ['1', '9007199254740991']) {
      consistent(
        rawBytes((d) => {
          d.expected.amount_minor = '@RAW@'
          receipt(d).amount_minor = '@RAW@'
        }, raw),
      )
    }
  })
  test('currency is exactly RUB, USD or EUR', () => {
    for (const bad of ['rub', 'RUB ', 'GBP', '', 'RUR', 643]) {
      invalidInput(
        docBytes((d) => {
          d.expected.currency = bad
          receipt(d).currency = bad
        }),
        'expected_currency_invalid',
      )
    }
    for (const good of ['RUB', 'USD', 'EUR']) {
      consistent(
        docBytes((d) => {
          d.expected.currency = good
          receipt(d).currency = good
        }),
      )
    }
  })
  test('rpc_id must be an exact integer or a string: true, 1.0, null, objects are refused', () => {
    for (const raw of ['true', '1.0', 'null', '1e0', '[]', '{}']) {
      invalidInput(
        rawBytes((d) => {
          d.expected.rpc_id = '@RAW@'
        }, raw),
        'expected_rpc_id_invalid',
      )
    }
  })
})

describe('contract row: protocol_version', () => {
  test('missing or not a string is invalid_input', () => {
    for (const raw of ['20260728', 'null', 'true', '["2026-07-28"]']) {
      invalidInput(
        rawBytes((d) => {
          d.protocol_version = '@RAW@'
        }, raw),
        'protocol_version_invalid',
      )
    }
  })
  test('an unknown version string is out_of_scope (exit 3)', () => {
    for (const v of ['2026-07-29', '2024-11-05', '', '2026-07-28 ']) {
      expectResult(
        docBytes((d) => {
          d.protocol_version = v
        }),
        'out_of_scope',
        'protocol_version_unsupported',
        3,
      )
    }
  })
  test('expected is checked before the version', () => {
    invalidInput(
      docBytes((d) => {
        d.protocol_version = '2099-01-01'
        d.expected.currency = 'GBP'
      }),
      'expected_currency_invalid',
    )
  })
  test('the version is checked before the envelope', () => {
    expectResult(
      docBytes((d) => {
        d.protocol_version = '2099-01-01'
        d.response = 'not an envelope'
      }),
      'out_of_scope',
      'protocol_version_unsupported',
      3,
    )
  })
})

describe('contract row: response envelope', () => {
  test('must be an object', () => {
    for (const v of [null, [], 'x', 1])
      invalidEnvelope(
        docBytes((d) => {
          d.response = v
        }),
        'response_not_object',
      )
  })
  test('result and error together are always invalid_envelope, even with a perfect receipt', () => {
    invalidEnvelope(
      docBytes((d) => {
        d.response.error = { code: -32000, message: 'x' }
      }),
      'response_channel_ambiguous',
    )
  })
  test('neither result nor error is invalid_envelope', () => {
    invalidEnvelope(
      docBytes((d) => void delete d.response.result),
      'response_channel_missing',
    )
  })
  test('only jsonrpc, id and one channel: extra or missing members are refused', () => {
    invalidEnvelope(
      docBytes((d) => {
        d.response.extra = true
      }),
      'response_fields_invalid',
    )
    invalidEnvelope(
      docBytes((d) => void delete d.response.jsonrpc),
      'response_fields_invalid',
    )
    invalidEnvelope(
      docBytes((d) => void delete d.response.id),
      'response_fields_invalid',
    )
  })
  test('jsonrpc must be the string "2.0"', () => {
    for (const raw of ['"1.0"', '2.0', '"2.0 "', 'null']) {
      invalidEnvelope(
        rawBytes((d) => {
          d.response.jsonrpc = '@RAW@'
        }, raw),
        'jsonrpc_version_invalid',
      )
    }
  })
})

describe('contract row: rpc_id/id typed match', () => {
  const ids = (expectedRaw: string, responseRaw: string): Uint8Array => {
    const d = JSON.stringify(
      (() => {
        const x = JSON.parse(BASE_TEXT) as Doc
        x.expected.rpc_id = '@E@'
        x.response.id = '@R@'
        return x
      })(),
    )
    return enc(d.replace('"@E@"', expectedRaw).replace('"@R@"', responseRaw))
  }
  test('the same type and value match', () => {
    for (const [e, r] of [
      ['1', '1'],
      ['"1"', '"1"'],
      ['""', '""'],
      ['-5', '-5'],
      ['0', '-0'],
      ['123456789012345678901234567890', '123456789012345678901234567890'],
    ]) {
      consistent(ids(e!, r!))
    }
  })
  test('1 vs "1" (either way), other values and big integers one apart are invalid_envelope', () => {
    for (const [e, r] of [
      ['1', '"1"'],
      ['"1"', '1'],
      ['1', '2'],
      ['"a"', '"A"'],
      ['""', '" "'],
      ['"x"', '""'],
      ['123456789012345678901234567890', '123456789012345678901234567891'],
      ['9007199254740993', '9007199254740992'],
    ]) {
      invalidEnvelope(ids(e!, r!), 'rpc_id_mismatch')
    }
  })
  test('a response id of true, 1.0, null or an object is invalid_envelope', () => {
    for (const r of ['true', '1.0', 'null', '{}', '[1]', '1e0']) invalidEnvelope(ids('1', r), 'rpc_id_invalid')
  })
  test('the id is checked before the error channel', () => {
    invalidEnvelope(
      docBytes((d) => {
        d.response.id = 'example-rpc-2'
        delete d.response.result
        d.response.error = { code: -32603, message: 'Internal error' }
      }),
      'rpc_id_mismatch',
    )
  })
})

describe('contract row: JSON-RPC error', () => {
  const withError = (error: unknown) =>
    docBytes((d) => {
      delete d.response.result
      d.response.error = error
    })
  test('a valid error is rpc_error (exit 1), never positive, whatever data says', () => {
    expectResult(withError({ code: -32603, message: 'Internal error' }), 'rpc_error', 'rpc_error_response', 1)
    expectResult(
      withError({ code: 1, message: '', data: { status: 'succeeded' } }),
      'rpc_error',
      'rpc_error_response',
      1,
    )
  })
  test('code must be an integer (bool is not), message a string, only data may be added', () => {
    for (const e of [
      { code: true, message: 'x' },
      { code: '1', message: 'x' },
      { message: 'x' },
      { code: 1 },
      { code: 1, message: 2 },
      { code: 1, message: 'x', extra: 1 },
      null,
      'error',
      [],
    ]) {
      invalidEnvelope(withError(e), 'rpc_error_invalid')
    }
    invalidEnvelope(
      rawBytes((d) => {
        delete d.response.result
        d.response.error = { code: '@RAW@', message: 'x' }
      }, '-32603.0'),
      'rpc_error_invalid',
    )
  })
})

describe('contract row: result and resultType', () => {
  test('result must be an object', () => {
    for (const v of [null, [], 'complete'])
      invalidEnvelope(
        docBytes((d) => {
          d.response.result = v
        }),
        'result_not_object',
      )
  })
  test('2026-07-28 requires resultType: its absence is invalid_envelope', () => {
    invalidEnvelope(
      docBytes((d) => void delete d.response.result.resultType),
      'result_type_missing',
    )
  })
  test('2025-11-25 (explicitly chosen) treats an absent resultType as complete', () => {
    consistent(
      docBytes((d) => {
        d.protocol_version = '2025-11-25'
        delete d.response.result.resultType
      }),
    )
    consistent(
      docBytes((d) => {
        d.protocol_version = '2025-11-25'
      }),
    )
  })
  test('a present resultType must be a non-empty string', () => {
    for (const v of ['', null, 1, true, ['complete']]) {
      invalidEnvelope(
        docBytes((d) => {
          d.response.result.resultType = v
        }),
        'result_type_invalid',
      )
      invalidEnvelope(
        docBytes((d) => {
          d.protocol_version = '2025-11-25'
          d.response.result.resultType = v
        }),
        'result_type_invalid',
      )
    }
  })
  test('any resultType other than "complete" is out_of_scope, before the receipt is looked at', () => {
    for (const v of ['task', 'Complete', 'incomplete', 'complete ']) {
      expectResult(
        docBytes((d) => {
          d.response.result.resultType = v
        }),
        'out_of_scope',
        'result_type_unsupported',
        3,
      )
    }
    expectResult(
      docBytes((d) => {
        d.response.result.resultType = 'task'
        d.response.result.structuredContent = 'broken'
        d.response.result.isError = true
      }),
      'out_of_scope',
      'result_type_unsupported',
      3,
    )
    expectResult(
      docBytes((d) => {
        d.protocol_version = '2025-11-25'
        d.response.result.resultType = 'task'
      }),
      'out_of_scope',
      'result_type_unsupported',
      3,
    )
  })
  test('content, _meta and other extra result fields are not validated', () => {
    consistent(
      docBytes((d) => {
        d.response.result.content = 5
        d.response.result._meta = 'anything'
        d.response.result.somethingElse = { nested: [null] }
      }),
    )
    consistent(docBytes((d) => void delete d.response.result.content))
  })
})

describe('contract row: isError', () => {
  test('optional boolean: absent and false continue', () => {
    consistent(docBytes((d) => void delete d.response.result.isError))
    consistent(
      docBytes((d) => {
        d.response.result.isError = false
      }),
    )
  })
  test('a non-boolean isError is invalid_envelope', () => {
    for (const v of ['true', 1, null, 0, {}])
      invalidEnvelope(
        docBytes((d) => {
          d.response.result.isError = v
        }),
        'is_error_invalid',
      )
  })
  test('true is tool_error even next to a matching structured success, and before receipt checks', () => {
    expectResult(
      docBytes((d) => {
        d.response.result.isError = true
      }),
      'tool_error',
      'tool_error_flagged',
      1,
    )
    expectResult(
      docBytes((d) => {
        d.response.result.isError = true
        d.response.result.structuredContent = null
      }),
      'tool_error',
      'tool_error_flagged',
      1,
    )
    expectResult(
      docBytes((d) => {
        d.response.result.isError = true
        delete d.response.result.structuredContent
      }),
      'tool_error',
      'tool_error_flagged',
      1,
    )
  })
})

describe('contract row: structuredContent', () => {
  test('absent (text only) is missing_receipt', () => {
    expectResult(
      docBytes((d) => {
        delete d.response.result.structuredContent
        d.response.result.content = [{ type: 'text', text: 'Refund succeeded.' }]
      }),
      'missing_receipt',
      'structured_content_missing',
      1,
    )
  })
  test('array, string or null is invalid_receipt', () => {
    for (const v of [null, [], 'succeeded', 1, true]) {
      invalidReceipt(
        docBytes((d) => {
          d.response.result.structuredContent = v
        }),
        'receipt_not_object',
      )
    }
  })
  test('exactly refund_id, order_id, amount_minor, currency, status', () => {
    for (const k of ['refund_id', 'order_id', 'amount_minor', 'currency', 'status']) {
      invalidReceipt(
        docBytes((d) => void delete receipt(d)[k]),
        'receipt_fields_invalid',
      )
    }
    invalidReceipt(
      docBytes((d) => {
        receipt(d).note = 'x'
      }),
      'receipt_fields_invalid',
    )
  })
  test('field types and formats', () => {
    invalidReceipt(
      docBytes((d) => {
        receipt(d).refund_id = 'refund-1'
      }),
      'receipt_refund_id_invalid',
    )
    invalidReceipt(
      docBytes((d) => {
        receipt(d).refund_id = 'example-'
      }),
      'receipt_refund_id_invalid',
    )
    invalidReceipt(
      docBytes((d) => {
        receipt(d).order_id = 'example-order 1'
      }),
      'receipt_order_id_invalid',
    )
    for (const raw of ['1500.0', '15e2', '"1500"', 'true', '0', '9007199254740992']) {
      invalidReceipt(
        rawBytes((d) => {
          receipt(d).amount_minor = '@RAW@'
        }, raw),
        'receipt_amount_minor_invalid',
      )
    }
    invalidReceipt(
      docBytes((d) => {
        receipt(d).currency = 'rub'
      }),
      'receipt_currency_invalid',
    )
  })
  test('status is exactly succeeded, pending or failed; anything else never becomes success', () => {
    for (const v of ['SUCCEEDED', 'success', 'refunded', '', null, true]) {
      invalidReceipt(
        docBytes((d) => {
          receipt(d).status = v
        }),
        'receipt_status_invalid',
      )
    }
  })
  test('an invalid status is reported before a mismatch', () => {
    invalidReceipt(
      docBytes((d) => {
        receipt(d).status = 'done'
        receipt(d).amount_minor = 1
      }),
      'receipt_status_invalid',
    )
  })
})

describe('match and status', () => {
  test('order, amount and currency differences are mismatch (exit 1)', () => {
    expectResult(
      docBytes((d) => {
        receipt(d).order_id = 'example-order-2'
      }),
      'mismatch',
      'expected_order_id_mismatch',
      1,
    )
    expectResult(
      docBytes((d) => {
        receipt(d).amount_minor = 1501
      }),
      'mismatch',
      'expected_amount_mismatch',
      1,
    )
    expectResult(
      docBytes((d) => {
        receipt(d).currency = 'USD'
      }),
      'mismatch',
      'expected_currency_mismatch',
      1,
    )
  })
  test('amounts compare exactly at the top of the range', () => {
    const both = (e: string, r: string) =>
      enc(
        JSON.stringify(
          (() => {
            const x = JSON.parse(BASE_TEXT) as Doc
            x.expected.amount_minor = '@E@'
            receipt(x).amount_minor = '@R@'
            return x
          })(),
        )
          .replace('"@E@"', e)
          .replace('"@R@"', r),
      )
    consistent(both('9007199254740991', '9007199254740991'))
    expectResult(both('9007199254740991', '9007199254740990'), 'mismatch', 'expected_amount_mismatch', 1)
    consistent(both('1', '1'))
  })
  test('a mismatch beats pending and failed', () => {
    for (const status of ['pending', 'failed']) {
      expectResult(
        docBytes((d) => {
          receipt(d).status = status
          receipt(d).amount_minor = 1
        }),
        'mismatch',
        'expected_amount_mismatch',
        1,
      )
    }
  })
  test('matching pending is pending, matching failed is failed (exit 1)', () => {
    expectResult(
      docBytes((d) => {
        receipt(d).status = 'pending'
      }),
      'pending',
      'refund_status_pending',
      1,
    )
    expectResult(
      docBytes((d) => {
        receipt(d).status = 'failed'
      }),
      'failed',
      'refund_status_failed',
      1,
    )
  })
  test('refund_id is only format-checked (no expected refund_id exists)', () => {
    consistent(
      docBytes((d) => {
        receipt(d).refund_id = 'example-anything-else'
      }),
    )
  })
})

describe('parse failures of any kind are invalid_input', () => {
  const cases: [string, Uint8Array, string][] = [
    ['duplicate key at top level', enc(BASE_TEXT.replace('{', '{"expected":1,')), 'input_duplicate_key'],
    [
      'escaped duplicate in the receipt',
      enc(BASE_TEXT.replace('"status": "succeeded"', '"status": "pending", "st\\u0061tus": "succeeded"')),
      'input_duplicate_key',
    ],
    [
      'duplicate inside content (not validated, still refused)',
      enc(BASE_TEXT.replace('"type": "text"', '"type": "text", "type": "text"')),
      'input_duplicate_key',
    ],
    ['BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(BASE_TEXT)]), 'input_bom'],
    [
      'broken UTF-8',
      Buffer.concat([Buffer.from(BASE_TEXT.slice(0, 50)), Buffer.from([0xff]), Buffer.from(BASE_TEXT.slice(50))]),
      'input_invalid_utf8',
    ],
    ['NaN', enc(BASE_TEXT.replace('1500', 'NaN')), 'input_non_finite_number'],
    ['Infinity', enc(BASE_TEXT.replace('1500', 'Infinity')), 'input_non_finite_number'],
    ['1e400', enc(BASE_TEXT.replace('1500', '1e400')), 'input_number_overflow'],
    ['lone surrogate', enc(BASE_TEXT.replace('Educational', '\\udc00')), 'input_lone_surrogate'],
    ['trailing content', enc(`${BASE_TEXT} x`), 'input_trailing_content'],
    ['malformed', enc(BASE_TEXT.slice(0, -3)), 'input_malformed_json'],
    ['empty', enc(''), 'input_malformed_json'],
    [
      'deep nesting',
      enc(BASE_TEXT.replace('"content": [', `"content": ${'['.repeat(200_000)}${']'.repeat(200_000)}, "x": [`)),
      'input_too_deep',
    ],
  ]
  for (const [name, bytes, diagnostic] of cases) test(name, () => invalidInput(bytes, diagnostic))
})

test('exactly 1 MiB (whitespace counts) is accepted; one byte more is invalid_input', () => {
  const pad = (n: number) =>
    Buffer.concat([Buffer.from(BASE_TEXT), Buffer.alloc(n - Buffer.byteLength(BASE_TEXT), 0x20)])
  consistent(pad(1_048_576))
  invalidInput(pad(1_048_577), 'input_too_large')
})

test('the result never contains input values', () => {
  const d = docBytes((x) => {
    x.expected.order_id = 'example-SECRETVALUE'
    receipt(x).order_id = 'example-OTHERSECRET'
  })
  const r = JSON.stringify(check(d))
  assert.ok(!r.includes('SECRET'), r)
})
