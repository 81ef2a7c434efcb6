// @tollgate/provider/testing — checks a merchant runs against its own BillingPort. Everything here is public API.
export { testBillingPort } from './node-test.js'
export {
  type BillingPortSubject,
  checkBillingPort,
  PORT_CHECKS,
  type PortCheck,
  type PortCheckId,
  type PortCheckResult,
  platformKey,
  runPortCheck,
} from './port-checks.js'
