// The port checks as node:test tests: one test per check, each failing with the check's reason.
import { after, before, describe, it } from 'node:test'
import { type BillingPortSubject, PORT_CHECKS, runPortCheck } from './port-checks.js'

/**
 * Registers the port checks under `describe(name)`. `subject` is called once, before the first check; `after`
 * (if given) runs when they are done, to close what the subject opened.
 */
export function testBillingPort(
  name: string,
  subject: () => BillingPortSubject | Promise<BillingPortSubject>,
  options: { after?: () => unknown } = {},
): void {
  describe(name, () => {
    let made: BillingPortSubject | undefined
    before(async () => {
      made = await subject()
    })
    for (const check of PORT_CHECKS) {
      it(check.title, async (t) => {
        if (made === undefined) throw new Error('the subject was not made')
        const result = await runPortCheck(check.id, made)
        if (result.verdict === 'skip') t.skip(result.reason)
        else if (result.verdict === 'fail') throw new Error(`${check.id}: ${result.reason}`)
      })
    }
    const close = options.after
    if (close !== undefined) after(async () => void (await close()))
  })
}
