// The REST binding: its routes and the headers it reads.
export { CORRELATION_HEADERS, IDEMPOTENCY_KEY_HEADER } from './handler.js'
export { REST_ROUTES, type RestMethod, type RestRoute } from './routes.js'
