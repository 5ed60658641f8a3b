import { test } from '@japa/runner'
import type { Assert } from '@japa/assert'
import {
  RpcBudgetExhaustedError,
  RpcHttpError,
  RpcPool,
  RpcUnavailableError,
  type RpcBudget,
  type RpcPoolOptions,
} from '#chains/rpc_pool'
import { TransferLookupError } from '#chains/chain_family'
import { LimitedEndpoint } from '#tests/helpers/limited_endpoint'

const started: LimitedEndpoint[] = []

/** Neither marked failing nor cooling down. */
function healthy(url: string) {
  const health = RpcPool.health(url)
  return health === null || (health.failures === 0 && health.coolUntil <= Date.now())
}

async function endpoint(perSecond = 1000, burst = 1000) {
  const server = await new LimitedEndpoint(perSecond, burst).start()
  started.push(server)
  return server
}

function pool(urls: string[], budget: RpcBudget | null, options: Partial<RpcPoolOptions> = {}) {
  return new RpcPool(urls, {
    cooldownMs: 60_000,
    timeoutMs: 2000,
    backoffBaseMs: 20,
    budgetFor: () => budget,
    ...options,
  })
}

/**
 * The requests `server` received arrived on a pace of one per `slotMs`
 * from `startedAt` on: the n-th (from 0) no sooner than n slots after.
 * Deterministic: a busy machine delays requests, it never sends one
 * before its slot.
 */
function assertPaced(assert: Assert, server: LimitedEndpoint, startedAt: number, slotMs: number) {
  const arrivals = server.log.map((entry) => entry.at).sort((a, b) => a - b)
  arrivals.forEach((at, index) => {
    assert.isAtLeast(
      at - startedAt,
      index * slotMs,
      `request ${index + 1} of ${arrivals.length} came before its slot`
    )
  })
}

/** One pooled JSON-RPC request per call, the way the families send them. */
async function ask(rpc: RpcPool, options: { eligible?: (url: string) => boolean } = {}) {
  return rpc.call(async (url) => {
    const response = await rpc.fetch(url, {
      method: 'POST',
      body: '{"jsonrpc":"2.0","id":1,"method":"x"}',
    })
    return { url, body: (await response.json()) as { result: string } }
  }, options)
}

test.group('RPC pool: budgets and limits', (group) => {
  group.each.setup(() => RpcPool.reset())
  group.each.teardown(async () => {
    await Promise.all(started.splice(0).map((server) => server.stop()))
  })

  test('pacing keeps a burst of calls under the endpoint limit', async ({ assert }) => {
    // What the endpoint sees is checked against the pace itself: the n-th
    // request arrives no sooner than n slots of 50 ms after the calls were
    // made. A loaded machine only delays requests (and may deliver delayed
    // ones bunched, which a token bucket at the endpoint would count
    // against the pacer); it never sends one early.
    const server = await endpoint()
    const rpc = pool([server.url], { perSecond: 20, perDay: null })
    const startedAt = Date.now()
    const answers = await Promise.all(Array.from({ length: 12 }, () => ask(rpc)))
    assert.lengthOf(answers, 12)
    assert.equal(server.served, 12)
    assertPaced(assert, server, startedAt, 50)
    assert.equal(RpcPool.usedToday(server.url), 12)
  })

  test('without a budget the same burst is refused by the endpoint (the fake limits for real)', async ({
    assert,
  }) => {
    const limited = await endpoint(20, 4)
    const rpc = pool([limited.url], null, { retries: 0 })
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => ask(rpc)))
    assert.isAbove(limited.limited, 0)
    assert.isTrue(outcomes.some((outcome) => outcome.status === 'rejected'))
  })

  test('two pools of one endpoint and key share its pace; another key has its own', async ({
    assert,
  }) => {
    const server = await endpoint()
    const first = pool([server.url], { perSecond: 10, perDay: null }, { apiKey: 'k1' })
    const second = pool([server.url], { perSecond: 10, perDay: null }, { apiKey: 'k1' })
    const startedAt = Date.now()
    await Promise.all([ask(first), ask(second), ask(first), ask(second), ask(first), ask(second)])
    // One pace of 100 ms for the six, not two interleaved paces.
    assertPaced(assert, server, startedAt, 100)
    assert.equal(RpcPool.usedToday(server.url, 'k1'), 6)
    assert.equal(RpcPool.usedToday(server.url, 'k2'), 0)
  })

  test('a 429 with Retry-After is waited out on the same endpoint, with no failover nor cool-down', async ({
    assert,
  }) => {
    const limited = await endpoint()
    const backup = await endpoint()
    limited.script = [{ status: 429, retryAfter: '1' }]
    const rpc = pool([limited.url, backup.url], { perSecond: 1000, perDay: null })
    const startedAt = Date.now()
    const answer = await ask(rpc)
    assert.equal(answer.url, limited.url)
    assert.isAtLeast(Date.now() - startedAt, 1000)
    assert.lengthOf(backup.log, 0)
    assert.isTrue(limited.log[1].at - limited.log[0].at >= 1000)
    assert.equal(RpcPool.health(limited.url)!.failures, 0)
  })

  test('a 429 without Retry-After backs off; the limit persisting moves on without cooling down', async ({
    assert,
  }) => {
    const limited = await endpoint()
    const backup = await endpoint()
    limited.script = [{ status: 429 }, { status: 429 }, { status: 429 }]
    const rpc = pool([limited.url, backup.url], { perSecond: 1000, perDay: null })
    const answer = await ask(rpc)
    assert.equal(answer.url, backup.url)
    assert.lengthOf(limited.log, 3) // first try and two retries
    assert.isTrue(healthy(limited.url))
    // Not cooled down: the next call starts on it again.
    assert.equal((await ask(rpc)).url, limited.url)
  })

  test('a Retry-After longer than the request timeout is not waited for: the next endpoint serves, and the wait is kept', async ({
    assert,
  }) => {
    const limited = await endpoint()
    const backup = await endpoint()
    limited.script = [{ status: 429, retryAfter: '120' }]
    // A pool that waited would wait its whole timeout at least: 10 s, far more than two requests take.
    const rpc = pool(
      [limited.url, backup.url],
      { perSecond: 1000, perDay: null },
      { timeoutMs: 10_000 }
    )
    const startedAt = Date.now()
    assert.equal((await ask(rpc)).url, backup.url)
    assert.isBelow(Date.now() - startedAt, 10_000)
    assert.lengthOf(limited.log, 1)
    // Held for the 120 s it asked for: the next pool (the next run) does not ask it either.
    assert.approximately(rpc.heldUntil(limited.url)! - startedAt, 120_000, 10_000)
    const next = pool(
      [limited.url, backup.url],
      { perSecond: 1000, perDay: null },
      { timeoutMs: 10_000 }
    )
    assert.equal((await ask(next)).url, backup.url)
    assert.lengthOf(limited.log, 1)
    assert.match(next.holdReason(limited.url), /rate limited: it asked for 120 s \(Retry-After\)/)
    // Only it held: the pool says so rather than asking it.
    const alone = pool([limited.url], { perSecond: 1000, perDay: null }, { timeoutMs: 10_000 })
    await assert.rejects(() => ask(alone), /every RPC endpoint is held: .*rate limited/)
    assert.lengthOf(limited.log, 1)
  })

  test('every endpoint limited is RpcUnavailableError naming the 429', async ({ assert }) => {
    const limited = await endpoint()
    limited.script = [{ status: 429 }, { status: 429 }, { status: 429 }]
    const failure = await ask(pool([limited.url], null)).catch((error) => error)
    assert.instanceOf(failure, RpcUnavailableError)
    assert.instanceOf(failure.cause, RpcHttpError)
    assert.equal(failure.cause.status, 429)
    assert.match(failure.message, /HTTP 429.*Too Many Requests/)
  })

  test('a passing 5xx is retried on the same endpoint', async ({ assert }) => {
    const flaky = await endpoint()
    const backup = await endpoint()
    flaky.script = [{ status: 502 }]
    const answer = await ask(pool([flaky.url, backup.url], null))
    assert.equal(answer.url, flaky.url)
    assert.lengthOf(backup.log, 0)
    assert.equal(RpcPool.health(flaky.url)!.failures, 0)
  })

  test('a lasting 5xx is retried, then the endpoint cools down and the next one serves', async ({
    assert,
  }) => {
    const down = await endpoint()
    const backup = await endpoint()
    down.script = [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }]
    const rpc = pool([down.url, backup.url], null)
    assert.equal((await ask(rpc)).url, backup.url)
    assert.lengthOf(down.log, 3)
    assert.equal(RpcPool.health(down.url)!.failures, 1)
    assert.match(RpcPool.health(down.url)!.lastError, /HTTP 503/)
    // Cooling down: the next call goes to the backup first.
    assert.equal((await ask(rpc)).url, backup.url)
    assert.lengthOf(down.log, 3)
  })

  test('a dropped connection or a timeout is an outage: no retry, cool-down, failover', async ({
    assert,
  }) => {
    const dropping = await endpoint()
    const hanging = await endpoint()
    const backup = await endpoint()
    dropping.script = ['drop']
    hanging.script = ['hang']
    // The timeout is the hanging endpoint's; the backup must answer within it too, on a busy machine.
    const rpc = pool([dropping.url, hanging.url, backup.url], null, { timeoutMs: 2000 })
    assert.equal((await ask(rpc)).url, backup.url)
    assert.lengthOf(dropping.log, 1)
    assert.lengthOf(hanging.log, 1)
    assert.equal(RpcPool.health(dropping.url)!.failures, 1)
    assert.equal(RpcPool.health(hanging.url)!.failures, 1)
  })

  test('a spent daily budget moves on without a request nor a cool-down; all spent is RpcUnavailableError', async ({
    assert,
  }) => {
    const capped = await endpoint()
    const backup = await endpoint()
    const budgets: Record<string, RpcBudget> = {
      [capped.url]: { perSecond: 1000, perDay: 3 },
      [backup.url]: { perSecond: 1000, perDay: 1 },
    }
    const rpc = new RpcPool([capped.url, backup.url], {
      cooldownMs: 60_000,
      timeoutMs: 2000,
      budgetFor: (url) => budgets[url],
    })
    for (let i = 0; i < 3; i++) assert.equal((await ask(rpc)).url, capped.url)
    assert.equal((await ask(rpc)).url, backup.url)
    assert.lengthOf(capped.log, 3)
    assert.isTrue(healthy(capped.url))
    await assert.rejects(() => rpc.permit(capped.url), RpcBudgetExhaustedError)
    const failure = await ask(rpc).catch((error) => error)
    assert.instanceOf(failure, RpcUnavailableError)
    assert.instanceOf(failure.cause, RpcBudgetExhaustedError)
    assert.match(failure.message, /daily request budget/)
    assert.lengthOf(capped.log, 3)
    assert.lengthOf(backup.log, 1)
  })

  test('a budget spent inside a call (several requests) moves on to the next endpoint', async ({
    assert,
  }) => {
    const capped = await endpoint()
    const backup = await endpoint()
    const rpc = new RpcPool([capped.url, backup.url], {
      cooldownMs: 60_000,
      timeoutMs: 2000,
      budgetFor: (url) => ({ perSecond: 1000, perDay: url === capped.url ? 1 : null }),
    })
    const served = await rpc.call(async (url) => {
      await rpc.fetch(url)
      await rpc.fetch(url)
      return url
    })
    assert.equal(served, backup.url)
    assert.lengthOf(capped.log, 1)
    assert.isTrue(healthy(capped.url))
  })

  test('only eligible endpoints are asked; none eligible is RpcUnavailableError', async ({
    assert,
  }) => {
    const full = await endpoint()
    const walletOnly = await endpoint()
    const rpc = pool([walletOnly.url, full.url], null)
    const answer = await ask(rpc, { eligible: (url) => url === full.url })
    assert.equal(answer.url, full.url)
    assert.lengthOf(walletOnly.log, 0)
    await assert.rejects(
      () => ask(rpc, { eligible: () => false }),
      /no configured RPC endpoint can serve/
    )
    assert.lengthOf(walletOnly.log, 0)
  })

  test('fetch turns an error answer into RpcHttpError with status, Retry-After and a redacted body', async ({
    assert,
  }) => {
    const limited = await endpoint()
    limited.script = [{ status: 429, retryAfter: '7' }]
    const rpc = pool([limited.url], null, { apiKey: 'secret-key-9876' })
    const failure = await rpc.fetch(limited.url).catch((error) => error)
    assert.instanceOf(failure, RpcHttpError)
    assert.equal(failure.status, 429)
    assert.equal(failure.retryAfterMs, 7000)
    assert.include(failure.message, 'Too Many Requests')
  })

  test('a lookup answer passes through at once, without retry', async ({ assert }) => {
    const rpc = pool(['http://a', 'http://b'], null)
    let calls = 0
    await assert.rejects(
      () =>
        rpc.call(async () => {
          calls++
          throw new TransferLookupError('no such transaction')
        }),
      TransferLookupError
    )
    assert.equal(calls, 1)
  })
})
