import { BaseReporter } from '@japa/runner/core'

/**
 * Prints the plain closing line CI looks for: "N passed, N failed".
 */
export class CountsReporter extends BaseReporter {
  protected async end() {
    const summary = this.runner!.getSummary()
    const failed = summary.aggregates.failed + summary.aggregates.regression
    process.stdout.write(`\n${summary.aggregates.passed} passed, ${failed} failed\n`)
  }
}

export const counts = () => ({
  name: 'counts',
  handler: (...args: Parameters<CountsReporter['boot']>) => new CountsReporter().boot(...args),
})
