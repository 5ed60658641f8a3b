import { test } from '@japa/runner'
import { StatementBatcher } from '#support/database/statement_batcher'

/** A statement the test answers by hand. */
type Sent = { jobs: string[]; answer: (results: string[]) => void; fail: (error: unknown) => void }

/** A batcher whose `one` and `many` record what they were sent and wait for the test's answer. */
function harness(
  options: {
    maxInFlight?: number
    maxBatch?: number
    retryAlone?: (error: unknown) => boolean
  } = {}
) {
  const sent: Sent[] = []
  const record = (jobs: string[]) =>
    new Promise<string[]>((resolve, reject) => sent.push({ jobs, answer: resolve, fail: reject }))
  const batcher = new StatementBatcher<string, string>({
    maxInFlight: options.maxInFlight ?? 2,
    maxBatch: options.maxBatch ?? 32,
    one: async (job) => (await record([job]))[0],
    many: (jobs) => record(jobs),
    retryAlone: options.retryAlone ?? (() => true),
  })
  return { batcher, sent }
}

/** Lets promise callbacks run (the batcher sends from them). */
const settle = () => new Promise((resolve) => setImmediate(resolve))

function outcome(promise: Promise<string>) {
  const seen: { value?: string; error?: unknown; done: boolean } = { done: false }
  promise.then(
    (value) => Object.assign(seen, { value, done: true }),
    (error) => Object.assign(seen, { error, done: true })
  )
  return seen
}

test.group('StatementBatcher', () => {
  test('a job that finds a free slot is sent at once, alone', async ({ assert }) => {
    const { batcher, sent } = harness()
    const first = batcher.run('a')
    assert.deepEqual(
      sent.map((statement) => statement.jobs),
      [['a']]
    )
    sent[0].answer(['A'])
    assert.equal(await first, 'A')
    await settle()
    assert.equal(batcher.inFlight, 0)
  })

  test('jobs arriving while every slot is out go together when one frees, answered in order', async ({
    assert,
  }) => {
    const { batcher, sent } = harness({ maxInFlight: 2 })
    const results = ['a', 'b', 'c', 'd', 'e'].map((job) => batcher.run(job))
    assert.deepEqual(
      sent.map((statement) => statement.jobs),
      [['a'], ['b']]
    )
    assert.equal(batcher.queued, 3)
    assert.equal(batcher.inFlight, 2)

    sent[1].answer(['B'])
    await settle()
    assert.deepEqual(sent[2].jobs, ['c', 'd', 'e'])
    assert.equal(batcher.queued, 0)
    sent[2].answer(['C', 'D', 'E'])
    sent[0].answer(['A'])
    assert.deepEqual(await Promise.all(results), ['A', 'B', 'C', 'D', 'E'])
  })

  test('a batch holds at most maxBatch jobs; the rest wait for the next slot', async ({
    assert,
  }) => {
    const { batcher, sent } = harness({ maxInFlight: 1, maxBatch: 3 })
    const results = ['a', 'b', 'c', 'd', 'e', 'f'].map((job) => batcher.run(job))
    sent[0].answer(['A'])
    await settle()
    assert.deepEqual(sent[1].jobs, ['b', 'c', 'd'])
    assert.equal(batcher.queued, 2)
    sent[1].answer(['B', 'C', 'D'])
    await settle()
    assert.deepEqual(sent[2].jobs, ['e', 'f'])
    sent[2].answer(['E', 'F'])
    assert.deepEqual(await Promise.all(results), ['A', 'B', 'C', 'D', 'E', 'F'])
  })

  test('a failed batch that retryAlone accepts: each job is sent again alone and gets its own answer or error', async ({
    assert,
  }) => {
    const refused = Object.assign(new Error('duplicate key'), { code: '23505' })
    const { batcher, sent } = harness({ maxInFlight: 1, retryAlone: (error) => error === refused })
    const first = batcher.run('a')
    const results = ['b', 'c', 'd'].map((job) => outcome(batcher.run(job)))
    sent[0].answer(['A'])
    await first
    await settle()
    sent[1].fail(refused)
    await settle()
    // Alone, in turn: b first; c is sent only once b is answered.
    assert.deepEqual(
      sent.slice(2).map((statement) => statement.jobs),
      [['b']]
    )
    sent[2].answer(['B'])
    await settle()
    assert.deepEqual(sent[3].jobs, ['c'])
    sent[3].fail(refused)
    await settle()
    assert.deepEqual(sent[4].jobs, ['d'])
    sent[4].answer(['D'])
    await settle()
    assert.deepEqual(
      results.map((result) => result.value ?? (result.error as Error).message),
      ['B', 'duplicate key', 'D']
    )
    assert.equal(batcher.inFlight, 0)
  })

  test('a failed batch that retryAlone refuses: every job gets the batch error at once, nothing is sent again', async ({
    assert,
  }) => {
    const unreachable = Object.assign(new Error('Connection terminated unexpectedly'), {
      code: '57P01',
    })
    const { batcher, sent } = harness({ maxInFlight: 1, retryAlone: () => false })
    const first = batcher.run('a')
    const results = ['b', 'c'].map((job) => outcome(batcher.run(job)))
    sent[0].answer(['A'])
    await first
    await settle()
    sent[1].fail(unreachable)
    await settle()
    assert.isTrue(results.every((result) => result.done && result.error === unreachable))
    assert.lengthOf(sent, 2)
    // The slot is free again: the next job goes out alone at once.
    const next = batcher.run('z')
    assert.deepEqual(sent[2].jobs, ['z'])
    sent[2].answer(['Z'])
    assert.equal(await next, 'Z')
  })

  test('a lone job that fails gets its error, and frees its slot', async ({ assert }) => {
    const { batcher, sent } = harness({ maxInFlight: 1 })
    const failed = outcome(batcher.run('a'))
    const queued = batcher.run('b')
    sent[0].fail(new Error('boom'))
    await settle()
    assert.equal((failed.error as Error).message, 'boom')
    assert.deepEqual(sent[1].jobs, ['b'])
    sent[1].answer(['B'])
    assert.equal(await queued, 'B')
  })
})
