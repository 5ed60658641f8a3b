import { test } from '@japa/runner'
import { HttpRequestError, RpcRequestError } from 'viem'
import { RpcBudgetExhaustedError, RpcHttpError } from '#chains/rpc_pool'
import {
  classifyEvmError,
  LogRangeRefusedError,
  MissingBlockError,
  suggestedWidth,
  UnsupportedMethodError,
} from '#plugins/evm/evm_errors'

/** An HTTP error answer as it reaches the EVM client: viem's HttpRequestError around the pool's RpcHttpError. */
function httpAnswer(
  status: number,
  error: { code: number; message: string },
  retryAfterMs: number | null = null
) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, error })
  const cause = new RpcHttpError(`HTTP ${status}: ${body}`, status, retryAfterMs, { body })
  return new HttpRequestError({ url: 'http://node', body: {}, cause } as any)
}

/** A JSON-RPC error inside HTTP 200, as viem reports it. */
function okAnswer(code: number, message: string) {
  return new RpcRequestError({ body: {}, error: { code, message }, url: 'http://node' } as any)
}

test.group('EVM errors: what the endpoints meant', () => {
  test('range refusals of every provider style, with their suggested width', ({ assert }) => {
    const cases: [unknown, number | null][] = [
      // Alchemy (free tier), HTTP 400
      [
        httpAnswer(400, {
          code: -32600,
          message:
            'You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x1b4, 0x3a7]',
        }),
        500,
      ],
      // Alchemy, result size, HTTP 200
      [
        okAnswer(
          -32602,
          'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters and the response size limit, this block range should work: [0x0, 0x3e7]'
        ),
        1000,
      ],
      // QuickNode, HTTP 413
      [
        httpAnswer(413, { code: -32614, message: 'eth_getLogs is limited to a 10,000 range' }),
        10_000,
      ],
      // Infura / geth result cap, HTTP 200
      [
        okAnswer(
          -32005,
          'query returned more than 10000 results. Try with this block range [0x10, 0x1f].'
        ),
        16,
      ],
      // BSC and other geth forks
      [okAnswer(-32000, 'exceed maximum block range: 5000'), 5000],
      // Ankr / Polygon
      [okAnswer(-32062, 'block range is too wide'), null],
      // the old fake
      [okAnswer(-32005, 'query exceeds max block range'), null],
    ]
    for (const [error, width] of cases) {
      const classified = classifyEvmError(error)
      assert.instanceOf(classified, LogRangeRefusedError, String((error as Error).message))
      assert.equal(
        (classified as LogRangeRefusedError).width,
        width,
        String((error as Error).message)
      )
    }
  })

  test('rate limits inside HTTP 200 are rate limits (an HTTP 429 for the pool), not range refusals nor outages', ({
    assert,
  }) => {
    for (const error of [
      okAnswer(-32005, 'limit exceeded'),
      okAnswer(-32016, 'over rate limit'),
      okAnswer(-32005, 'project ID request rate exceeded'),
      okAnswer(-32000, 'Too Many Requests'),
      httpAnswer(400, {
        code: -32005,
        message: 'daily request count exceeded, request rate limited',
      }),
    ]) {
      const classified = classifyEvmError(error)
      assert.instanceOf(classified, RpcHttpError, String((error as Error).message))
      assert.equal((classified as RpcHttpError).status, 429)
    }
    // A real 429 keeps its Retry-After.
    const limited = classifyEvmError(
      httpAnswer(429, { code: -32005, message: 'Too Many Requests' }, 30_000)
    )
    assert.equal((limited as RpcHttpError).retryAfterMs, 30_000)
  })

  test("HTTP 402 (Infura's spent credits) and 5xx reach the pool as they are; a spent budget too", ({
    assert,
  }) => {
    assert.equal(
      (
        classifyEvmError(
          httpAnswer(402, { code: -32005, message: 'daily request count exceeded' })
        ) as RpcHttpError
      ).status,
      402
    )
    assert.equal(
      (classifyEvmError(httpAnswer(503, { code: -32603, message: 'upstream' })) as RpcHttpError)
        .status,
      503
    )
    const spent = new RpcBudgetExhaustedError('spent')
    assert.strictEqual(
      classifyEvmError(new HttpRequestError({ url: 'x', cause: spent } as any)),
      spent
    )
  })

  test('a block the node lacks, a method it lacks; anything else unchanged', ({ assert }) => {
    assert.instanceOf(classifyEvmError(okAnswer(-32000, 'unknown block')), MissingBlockError)
    assert.instanceOf(classifyEvmError(okAnswer(-32000, 'header not found')), MissingBlockError)
    assert.instanceOf(classifyEvmError(okAnswer(-32001, 'Resource not found')), MissingBlockError)
    assert.instanceOf(
      classifyEvmError(
        okAnswer(-32601, 'the method debug_traceBlockByHash does not exist/is not available')
      ),
      UnsupportedMethodError
    )
    assert.instanceOf(
      classifyEvmError(okAnswer(-32000, 'method not whitelisted')),
      UnsupportedMethodError
    )
    const other = new Error('socket hang up')
    assert.strictEqual(classifyEvmError(other), other)
    assert.instanceOf(classifyEvmError(okAnswer(-32000, 'execution reverted')), RpcRequestError)
  })

  test('suggested widths: pairs of block numbers and named limits', ({ assert }) => {
    assert.equal(suggestedWidth('this block range should work: [0x64, 0xc7]'), 100)
    assert.equal(suggestedWidth('Try with this block range [100, 149].'), 50)
    assert.equal(suggestedWidth('up to a 2K block range'), 2000)
    assert.equal(suggestedWidth('limited to a 10,000 range'), 10_000)
    assert.equal(suggestedWidth('exceed maximum block range: 5000'), 5000)
    assert.equal(suggestedWidth('ranges over 10000 blocks are not supported on freetier'), 10_000)
    assert.isNull(suggestedWidth('block range is too wide'))
    // A "range" backwards or absurd is no suggestion.
    assert.isNull(suggestedWidth('[0x10, 0x1]'))
  })
})
