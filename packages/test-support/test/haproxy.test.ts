// startHaproxy: a configuration haproxy refuses, or a port it never binds, is an error in haproxy's own words (and no
// process is left); a good one listens, and stop() ends it and removes the folder it made.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import { dirname } from 'node:path'
import { test } from 'node:test'
import { freeLoopbackPort, startHaproxy } from '../src/index.js'

const skip =
  spawnSync('haproxy', ['-v']).status === 0 || process.env.TOLLGATE_REQUIRE_SERVICES === '1'
    ? false
    : 'haproxy is not installed (sudo apt-get update && sudo apt-get install -y haproxy)'

const config = (port: number) =>
  [
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 5s',
    '  timeout server 5s',
    'frontend f',
    `  bind 127.0.0.1:${port}`,
    '  http-request return status 204',
    '',
  ].join('\n')

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })

test('startHaproxy: listening when it resolves; stop() ends it and removes its folder', { skip }, async () => {
  const port = await freeLoopbackPort()
  const haproxy = await startHaproxy({ config: config(port), ports: [port] })
  const res = await fetch(`http://127.0.0.1:${port}/`)
  assert.equal(res.status, 204)
  const file = (haproxy.child.spawnargs.at(-1) as string) ?? ''
  assert.ok(existsSync(file), file)
  await haproxy.stop()
  assert.notEqual(haproxy.child.exitCode ?? haproxy.child.signalCode, null)
  assert.equal(existsSync(dirname(file)), false)
  assert.equal(await accepts(port), false)
})

test('startHaproxy: a configuration haproxy refuses, or a port it never binds, throws in its words', {
  skip,
}, async () => {
  const port = await freeLoopbackPort()
  await assert.rejects(
    startHaproxy({ config: `${config(port)}  no-such-keyword\n`, ports: [port] }),
    /haproxy refused the configuration: .*no-such-keyword/s,
  )
  const other = await freeLoopbackPort()
  await assert.rejects(
    startHaproxy({ config: config(port), ports: [port, other] }),
    new RegExp(`haproxy did not listen on ${port}, ${other}`),
  )
  assert.equal(await accepts(port), false, 'the haproxy that never got ready was stopped')
})
