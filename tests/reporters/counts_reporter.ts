import { readFileSync, writeFileSync } from 'node:fs'
import { relative } from 'node:path'
import { BaseReporter } from '@japa/runner/core'
import type { GroupStartNode, TestStartNode } from '@japa/runner/types'

/**
 * Prints the plain closing line CI looks for: "N passed, N failed".
 *
 * With TEST_TIMINGS_FILE set, it also writes how long each spec file took,
 * from its first group or test to the next file's (so its group hooks
 * count), as JSON keyed by the file's path from the application root:
 * `wall`, the seconds that passed (what tests/shard_weights.json is made
 * from, see tests/sharding.ts), and `cpu`, the CPU seconds of this process
 * and of the child processes it waited for in that time (servers, ace
 * commands, chains, the browser): what to cut to make the suite cheaper.
 */
export class CountsReporter extends BaseReporter {
  #timings: Record<string, { wall: number; cpu: number }> = {}
  #file: string | undefined
  #fileStarted = 0
  #fileCpu = 0

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
    this.#fileCpu = cpuSeconds()
  }

  #leave() {
    if (!this.#file) return
    const name = relative(process.cwd(), this.#file)
    const round = (value: number) => Math.round(value * 10) / 10
    const before = this.#timings[name] ?? { wall: 0, cpu: 0 }
    this.#timings[name] = {
      wall: round(before.wall + (performance.now() - this.#fileStarted) / 1000),
      cpu: round(before.cpu + cpuSeconds() - this.#fileCpu),
    }
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

/**
 * CPU seconds of this process and of its children that ended and were
 * waited for (/proc/self/stat: utime, stime, cutime, cstime); this process's
 * own alone where /proc is not there.
 */
function cpuSeconds(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    // Fields 14 to 17 of proc_pid_stat(5), counted here from field 3 (after the name).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0)
    // USER_HZ: 100 on Linux.
    return ticks / 100
  } catch {
    const usage = process.cpuUsage()
    return (usage.user + usage.system) / 1e6
  }
}

export const counts = () => ({
  name: 'counts',
  handler: (...args: Parameters<CountsReporter['boot']>) => new CountsReporter().boot(...args),
})
