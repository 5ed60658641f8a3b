import { globSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * Runs a share of the suite: `TEST_SHARD=2/3 npm test` runs the second of
 * three shares of the spec files, so that CI can run the shares side by
 * side (each with its own port and database) and the whole suite in the
 * time of the longest share.
 *
 * Every share computes the same split: the spec files of every suite,
 * weighed by tests/shard_weights.json (seconds of wall time each took, as
 * `CI_TIMINGS_OUT=... bash .ci/run` writes them from the `wall` figures of
 * TEST_TIMINGS_FILE; a file missing there weighs
 * DEFAULT_WEIGHT), taken heaviest first and each given to the lightest share
 * so far. Each file belongs to exactly one share, so the shares together
 * run every test once.
 */

export type Shard = { index: number; count: number }

/** What a new spec file weighs until the weights are measured again. */
const DEFAULT_WEIGHT = 10

/** `k/n` with 1 ≤ k ≤ n, or undefined when unset; anything else throws (a typo must not run a partial suite silently). */
export function parseShard(value: string | undefined): Shard | undefined {
  if (value === undefined || value.trim() === '') return undefined
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value)
  const index = match ? Number(match[1]) : Number.NaN
  const count = match ? Number(match[2]) : Number.NaN
  if (!match || count < 1 || index < 1 || index > count) {
    throw new Error(`TEST_SHARD must be k/n with 1 ≤ k ≤ n (e.g. 1/2), not "${value}"`)
  }
  return { index, count }
}

/** Which share each file goes to (index 1..count), for the files given (paths from the root). */
export function splitFiles(
  files: string[],
  count: number,
  weights: Record<string, number>
): Map<string, number> {
  const weighed = files
    .map((file) => ({ file, weight: weights[file] ?? DEFAULT_WEIGHT }))
    .sort((a, b) => b.weight - a.weight || a.file.localeCompare(b.file))
  const loads = Array.from({ length: count }, () => 0)
  const assigned = new Map<string, number>()
  for (const { file, weight } of weighed) {
    let lightest = 0
    for (let share = 1; share < count; share++) if (loads[share] < loads[lightest]) lightest = share
    loads[lightest] += weight
    assigned.set(file, lightest + 1)
  }
  return assigned
}

type SuiteConfig = { name: string; files: string | string[] | (() => URL[] | Promise<URL[]>) }

/** The suites with their files cut down to the share's (a suite with none of them keeps an empty list). */
export function shardSuites<T extends SuiteConfig>(
  suites: T[],
  root: string,
  shard: Shard
): (Omit<T, 'files'> & { files: () => URL[] })[] {
  const patterns = (suite: T) => {
    if (typeof suite.files === 'function') {
      throw new Error(`suite "${suite.name}": TEST_SHARD needs glob patterns for its files`)
    }
    return Array.isArray(suite.files) ? suite.files : [suite.files]
  }
  const filesOf = new Map(
    suites.map((suite) => [
      suite.name,
      [...new Set(patterns(suite).flatMap((pattern) => globSync(pattern, { cwd: root })))].sort(),
    ])
  )
  const weights = JSON.parse(
    readFileSync(join(root, 'tests', 'shard_weights.json'), 'utf8')
  ) as Record<string, number>
  const assigned = splitFiles([...filesOf.values()].flat(), shard.count, weights)
  return suites.map((suite) => {
    const mine = filesOf.get(suite.name)!.filter((file) => assigned.get(file) === shard.index)
    return { ...suite, files: () => mine.map((file) => pathToFileURL(join(root, file))) }
  })
}
