// Requirements the proof checks, each tied to its source: the digest (quenchz.md), the MCP digest, or issue 5.
// Every check cites one id; a test fails on an id no check cites.

export const REQUIREMENTS = {
  'AUD-ADMIT': 'quenchz.md §3.3, §9.2 check 1: a token minted for this resource is admitted (HTTP 200).',
  'AUD-OTHER':
    'quenchz.md §3.2 rule 5, §9.2 checks 2-3: a token for another resource is refused with 401 and a Bearer challenge.',
  'AUD-LIST':
    'quenchz.md §3.2 rule 5 stage 2, §9.2 checks 4-5: a list aud is refused even when it names this resource.',
  'AUD-NONE':
    'quenchz.md §3.2 rule 2, §9.2 checks 6-7: a token with no aud is refused with 401 and a Bearer challenge.',
  'REACH-LIST': 'quenchz.md §4.1, §9.2 check 8: an ungranted tool is not listed.',
  'REACH-SAME':
    'quenchz.md §4.1, §10, §9.2 checks 9-12: ungranted and nonexistent answer identical bytes, the constant, echoing nothing.',
  'MODERN-AUD': 'issue 5 §5 and mcp-2026-07-28.md §1.3-1.4: the 2026-07-28 path is behind the same audience gate.',
  'MODERN-ERA': 'mcp-2026-07-28.md §4: the v2 client negotiates the modern era against quenchz.',
  'MODERN-REACH': 'issue 5 §5: listing and concealment hold on the 2026-07-28 path too.',
  'MODERN-SERVE':
    'quenchz.md §4.3, §10: a granted call is served (good-friday), as structuredContent with a text copy.',
  'BUDGET-FROZEN':
    'quenchz.md §9.2 check 13: the manifest says the budget clock is frozen, so the arithmetic is exact.',
  'BUDGET-GREEDY':
    'quenchz.md §8.3, §9.2 check 14: greedy is admitted reserve + spare minus the calls already charged.',
  'BUDGET-CHARGED': 'quenchz.md §4.1, §9.2 check 15: refusals are charged like served calls.',
  'BUDGET-QUIET': 'quenchz.md §8.3, §9.2 check 16: the quiet caller still gets exactly its reserve.',
} as const

export type RequirementId = keyof typeof REQUIREMENTS
