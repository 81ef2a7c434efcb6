// A provider behind a bearer token and an edge header: the kit passes when given both (token from the environment,
// header from -edge-header), names the refusal at discovery when either is missing or wrong, and never prints a
// token or header value in a line, an error or the report.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { main } from '../src/index.js'
import { freshTarget, kitArgv, restKitArgv, SECRET } from './support/kit-harness.js'

const TOKEN = 'tok_providercheck_bearer_5f1e2d3c'
const EDGE_VALUE = 'edge_shared_value_9a8b7c6d'
const ADMISSION = { bearerToken: TOKEN, edgeHeaders: { 'X-Edge-Key': EDGE_VALUE } }

async function cli(args: string[], env: Record<string, string>) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(
    args,
    { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: SECRET, ...env },
    {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    },
  )
  return { code, out, err, all: [...out, ...err].join('\n') }
}

function assertNoSecrets(text: string): void {
  for (const secret of [TOKEN, EDGE_VALUE, SECRET]) assert.ok(!text.includes(secret), 'a secret value was printed')
}

test('given the bearer token and the edge header, every check passes and the sealed report names them', async () => {
  const target = await freshTarget(undefined, 'json', ADMISSION)
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-cred-'))
  try {
    const report = join(dir, 'report.json')
    const r = await cli(kitArgv(target.url, '-edge-header', `X-Edge-Key: ${EDGE_VALUE}`, '-json', report), {
      PROVIDERCHECK_BEARER_TOKEN: TOKEN,
    })
    assert.equal(r.code, 0, r.all)
    assert.equal(
      r.out[0],
      `providercheck 0.1.0: transport mcp, sandbox, ${target.url}, bearer token, edge headers X-Edge-Key`,
    )
    assert.match(r.all, /summary: 20 pass, 0 fail, 1 skip of 21 checks/)
    const text = readFileSync(report, 'utf8')
    assert.deepEqual(JSON.parse(text).credentials, { bearer_token: true, edge_headers: ['X-Edge-Key'] })
    assertNoSecrets(r.all + text)
    const verified = await cli(['verify', report], {})
    assert.equal(verified.code, 0, verified.all)
    assert.match(verified.all, /^seal verified: .* outcome pass \(20 pass, 0 fail, 1 skip\)/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await target.close()
  }
})

test('without the bearer token discovery fails credentials_rejected, saying no token was sent, and the rest is skipped', async () => {
  const target = await freshTarget(undefined, 'json', ADMISSION)
  try {
    const r = await cli(kitArgv(target.url, '--edge-header', `X-Edge-Key: ${EDGE_VALUE}`), {})
    assert.equal(r.code, 1)
    assert.match(
      r.out[1] as string,
      /^discovery +fail {2}credentials_rejected +discover answered HTTP 401: the provider refused the request \(sent: the signature, no bearer token \(PROVIDERCHECK_BEARER_TOKEN is not set\), edge headers X-Edge-Key;/,
    )
    assert.equal(r.out.filter((l) => / skip {2}dependency_failed /.test(l)).length, 19)
    assertNoSecrets(r.all)
  } finally {
    await target.close()
  }
})

test('a wrong bearer token or a missing edge header fails discovery with credentials_rejected', async () => {
  const target = await freshTarget(undefined, 'json', ADMISSION)
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-cred-'))
  try {
    const wrongToken = 'tok_wrong_value_0000'
    const report = join(dir, 'report.json')
    const wrong = await cli(kitArgv(target.url, '-edge-header', `X-Edge-Key: ${EDGE_VALUE}`, '-json', report), {
      PROVIDERCHECK_BEARER_TOKEN: wrongToken,
    })
    assert.equal(wrong.code, 1)
    assert.match(
      wrong.out[1] as string,
      /^discovery +fail {2}credentials_rejected +.*sent: the signature, a bearer token,/,
    )
    const text = readFileSync(report, 'utf8')
    assert.equal(JSON.parse(text).checks[0].code, 'credentials_rejected')
    assertNoSecrets(wrong.all + text)
    assert.ok(!(wrong.all + text).includes(wrongToken))

    const noEdge = await cli(kitArgv(target.url), { PROVIDERCHECK_BEARER_TOKEN: TOKEN })
    assert.equal(noEdge.code, 1)
    assert.match(
      noEdge.out[1] as string,
      /^discovery +fail {2}credentials_rejected +.*a bearer token, no edge headers;/,
    )
    assertNoSecrets(noEdge.all)
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await target.close()
  }
})

test('over REST the same token and edge header admit every check, and without the token discovery is refused', async () => {
  const target = await freshTarget(undefined, 'json', ADMISSION, 'rest')
  try {
    const ok = await cli(restKitArgv(target.url, '-edge-header', `X-Edge-Key: ${EDGE_VALUE}`), {
      PROVIDERCHECK_BEARER_TOKEN: TOKEN,
    })
    assert.equal(ok.code, 0, ok.all)
    assert.match(ok.all, /summary: 20 pass, 0 fail, 1 skip of 21 checks .*\(rest\): PASS/)
    const refused = await cli(restKitArgv(target.url, '-edge-header', `X-Edge-Key: ${EDGE_VALUE}`), {})
    assert.equal(refused.code, 1)
    assert.match(refused.all, /^discovery +fail {2}credentials_rejected +.*no bearer token/m)
    assertNoSecrets(ok.all + refused.all)
  } finally {
    await target.close()
  }
})
