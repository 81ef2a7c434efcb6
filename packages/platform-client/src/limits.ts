/** How much the strict reader accepts in one answer: 1 MiB, nesting 64. */
export const STRICT_LIMITS = { maxBytes: 1024 * 1024, maxDepth: 64 } as const
/**
 * tools/list pages carry published schemas, whose depth the conformance kit measures itself (limit 32); the
 * reader allows far more so an over-deep schema is reported as such, not as unreadable JSON. The reader is
 * iterative and the page is bounded by maxBodyBytes, so this costs no stack.
 */
export const TOOL_LIST_MAX_DEPTH = 256
