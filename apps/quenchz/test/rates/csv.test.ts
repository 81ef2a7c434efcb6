// The RFC 4180 reader the history file and the SDMX CSV answers go through, tested directly.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseCsv } from '../../src/rates/csv.ts'

describe('parseCsv', () => {
  test('plain fields, LF and CRLF line ends alike', () => {
    assert.deepEqual(parseCsv('a,b\n1,2\n'), [
      ['a', 'b'],
      ['1', '2'],
    ])
    assert.deepEqual(parseCsv('a,b\r\n1,2\r\n'), parseCsv('a,b\n1,2\n'))
  })

  test('the final line end is optional, and an empty trailing line is not a row', () => {
    assert.deepEqual(parseCsv('a,b\n1,2'), [
      ['a', 'b'],
      ['1', '2'],
    ])
    assert.deepEqual(parseCsv(''), [])
    assert.deepEqual(parseCsv('a\n'), [['a']])
  })

  test('a quoted field keeps commas, line ends and doubled quotes (TITLE_COMPL holds commas)', () => {
    assert.deepEqual(parseCsv('x,"ECB reference rate, 14:15 CET",y\n'), [['x', 'ECB reference rate, 14:15 CET', 'y']])
    assert.deepEqual(parseCsv('"say ""hi""",2\n'), [['say "hi"', '2']])
    assert.deepEqual(parseCsv('"two\r\nlines",3\n'), [['two\r\nlines', '3']])
  })

  test('empty fields are kept, including a trailing one (the history file ends each row with a comma)', () => {
    assert.deepEqual(parseCsv('Date,USD,\n2026-04-10,1.1711,\n'), [
      ['Date', 'USD', ''],
      ['2026-04-10', '1.1711', ''],
    ])
    assert.deepEqual(parseCsv(',,\n'), [['', '', '']])
  })

  test('a quote inside an unquoted field is literal; only a quote opening a field starts quoting', () => {
    assert.deepEqual(parseCsv('a"b,c\n'), [['a"b', 'c']])
  })

  test('an unterminated quote runs to the end of the text rather than dropping it', () => {
    assert.deepEqual(parseCsv('"open,1\n2'), [['open,1\n2']])
  })
})
