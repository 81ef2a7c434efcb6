import type { CheckDefinition } from '../check-types.js'
import { cancelAgain, cancelAtPeriodEnd, cancelDryRun } from './cancel-checks.js'
import {
  describe,
  discovery,
  findCustomers,
  getCustomer,
  getOperationUnknown,
  getSubscription,
  getTransaction,
  listTransactions,
  mcpProfile,
} from './read-checks.js'
import { getOperation, refund, refundConflict, refundDryRun, refundExceeds, refundReplay } from './refund-checks.js'
import { signatureIdempotencyKey, signatureStale, signatureToolCall } from './signature-checks.js'

/** Every check in run order (the order of CHECK_IDS). */
export const CHECKS: readonly CheckDefinition[] = [
  discovery,
  describe,
  mcpProfile,
  findCustomers,
  getCustomer,
  listTransactions,
  getTransaction,
  getSubscription,
  refundDryRun,
  refund,
  refundReplay,
  refundConflict,
  refundExceeds,
  getOperation,
  getOperationUnknown,
  cancelDryRun,
  cancelAtPeriodEnd,
  cancelAgain,
  signatureToolCall,
  signatureStale,
  signatureIdempotencyKey,
]
