// @tollgate/operability — everything exported here is public API.
// What an operator runs a server with: health and readiness, metrics on an admin listener, graceful shutdown.
export {}
