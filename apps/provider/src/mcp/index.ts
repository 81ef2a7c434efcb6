// The MCP binding: the tool table and the server that answers it.
export { correlationOf, SERVER_INFO } from './create-server.js'
export { listedTools, toolTable } from './tool-table.js'
