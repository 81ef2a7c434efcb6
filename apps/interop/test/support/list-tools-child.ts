// An official MCP client in a process of its own (so NODE_EXTRA_CA_CERTS, read at start, makes it trust a test CA):
//   SIGNING_SECRET=… list-tools-child.ts v1|v2 URL
// connects with HMAC-signed requests, lists the tools twice, closes, and prints
// {"tools":[…names],"replicas":[…which replicas answered]} on stdout.
import { connectClient } from './clients.js'

const [era, url] = process.argv.slice(2)
if ((era !== 'v1' && era !== 'v2') || url === undefined) throw new Error('usage: list-tools-child.ts v1|v2 URL')
const client = await connectClient(era, url, { kind: 'hmac', secret: process.env.SIGNING_SECRET ?? '' })
let tools: string[]
try {
  tools = (await client.listTools()).map((t) => t.name)
  await client.listTools()
} finally {
  await client.close()
}
// A GET (the optional server-to-client stream) may be answered 405: the spec lets a server offer none.
const failed = client.requests.filter((r) => r.status >= 400 && !(r.method === 'GET' && r.status === 405))
if (failed.length > 0) throw new Error(`refused requests: ${JSON.stringify(failed)}`)
const replicas = [...new Set(client.requests.map((r) => r.replica).filter((r) => r !== null))]
process.stdout.write(`${JSON.stringify({ tools: tools.sort(), replicas })}\n`)
