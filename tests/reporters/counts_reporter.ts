import { writeFileSync } from 'node:fs'
import { relative } from 'node:path'
import { BaseReporter } from '@japa/runner/core'
import type { GroupStartNode, TestStartNode } from '@japa/runner/types'

/**
 * Prints the plain closing line CI looks for: "N passed, N failed".
 *
 * With TEST_TIMINGS_FILE set, it also writes how long each spec file took
 * (seconds of wall time, from its first group or test to the next file's,
 * so its group hooks count), as JSON keyed by the file's path from the
 * application root: what tests/shard_weights.json is made from (see
 * tests/sharding.ts).
 */
export class CountsReporter extends BaseReporter {
  #timings: Record<string, number> = {}
  #file: string | undefined
  #fileStarted = 0

  protected onGroupStart(payload: GroupStartNode) {
    this.#enter(payload.meta.fileName)
  }

  protected onTestStart(payload: TestStartNode) {
    this.#enter(payload.meta.fileName)
  }

  #enter(fileName: string | undefined) {
    if (!fileName || fileName === this.#file) return
    this.#leave()
    this.#file = fileName
    this.#fileStarted = performance.now()
  }

  #leave() {
    if (!this.#file) return
    const name = relative(process.cwd(), this.#file)
    const seconds = (performance.now() - this.#fileStarted) / 1000
    this.#timings[name] = Math.round(((this.#timings[name] ?? 0) + seconds) * 10) / 10
    this.#file = undefined
  }

  protected async end() {
    this.#leave()
    const target = process.env.TEST_TIMINGS_FILE
    if (target) writeFileSync(target, JSON.stringify(this.#timings, null, 2) + '\n')
    const summary = this.runner!.getSummary()
    const failed = summary.aggregates.failed + summary.aggregates.regression
    process.stdout.write(`\n${summary.aggregates.passed} passed, ${failed} failed\n`)
  }
}

export const counts = () => ({
  name: 'counts',
  handler: (...args: Parameters<CountsReporter['boot']>) => new CountsReporter().boot(...args),
})
