import { globSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { parseShard, shardSuites, splitFiles } from '#tests/sharding'

/**
 * tests/sharding.ts: CI runs the suite in shares (TEST_SHARD=k/n); the
 * shares together must run every spec file exactly once, whatever the
 * weights say, and a malformed TEST_SHARD must stop the run.
 */
test.group('Test shares', () => {
  test('TEST_SHARD is k/n with 1 ≤ k ≤ n; unset means the whole suite; anything else stops', ({
    assert,
  }) => {
    assert.isUndefined(parseShard(undefined))
    assert.isUndefined(parseShard(''))
    assert.deepEqual(parseShard('1/2'), { index: 1, count: 2 })
    assert.deepEqual(parseShard(' 3 / 3 '), { index: 3, count: 3 })
    for (const bad of ['0/3', '4/3', '1/0', 'x', '1', '1/2/3', '-1/2', '1.5/2']) {
      assert.throws(() => parseShard(bad), /TEST_SHARD must be k\/n/, bad)
    }
  })

  test('every file goes to exactly one share, the shares within the heaviest file of each other', ({
    assert,
  }) => {
    const weights: Record<string, number> = {}
    const files = Array.from({ length: 60 }, (_, index) => `tests/f${index}.spec.ts`)
    files.forEach((file, index) => (weights[file] = ((index * 37) % 50) + 1))
    const unknown = 'tests/new.spec.ts'
    for (const count of [1, 2, 3, 7]) {
      const assigned = splitFiles([...files, unknown], count, weights)
      assert.equal(assigned.size, files.length + 1)
      const loads = Array.from({ length: count }, () => 0)
      for (const [file, share] of assigned) {
        assert.isAtLeast(share, 1)
        assert.isAtMost(share, count)
        loads[share - 1] += weights[file] ?? 10
      }
      assert.isAtMost(Math.max(...loads) - Math.min(...loads), 50, `${count} shares: ${loads}`)
      // The same split whatever order the files come in: every share computes it alone.
      assert.deepEqual(
        [...splitFiles([unknown, ...files].reverse(), count, weights)].sort(),
        [...assigned].sort()
      )
    }
  })

  test("this suite's shares together hold each of its spec files once", ({ assert }) => {
    const root = fileURLToPath(app.appRoot)
    const suites = app.rcFile.tests.suites
    const all = suites
      .flatMap((suite) => (Array.isArray(suite.files) ? suite.files : [suite.files as string]))
      .flatMap((pattern) => globSync(pattern, { cwd: root }))
      .sort()
    assert.isAbove(all.length, 100)
    for (const count of [2, 3]) {
      const seen: string[] = []
      for (let index = 1; index <= count; index++) {
        for (const suite of shardSuites(suites, root, { index, count })) {
          const urls = suite.files()
          seen.push(...urls.map((url) => fileURLToPath(url).slice(root.length)))
        }
      }
      assert.deepEqual(seen.sort(), all)
    }
  })
})
