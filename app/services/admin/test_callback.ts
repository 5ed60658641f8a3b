import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import Order, { OrderStatus } from '#models/order'
import type ApiKey from '#models/api_key'
import settings from '#settings/settings_service'
import callbackFormats from '#callbacks/callback_format'
import { isAcknowledged } from '#callbacks/retry_policy'
import { ForbiddenTargetError, safeRequest } from '#callbacks/safe_http'
import auditLog from '#services/audit/audit_log'
import apiKeyAdmin from '#services/operators/api_key_admin'
import { OperatorError } from '#support/cli/operator_error'
import { redactUrl } from '#support/http/redaction'

/** Every test callback's trade_id (and order_id, transaction id) starts with it. */
export const TEST_PREFIX = 'TEST-'
/** Header of every test callback, besides the prefix. */
export const TEST_HEADER = 'x-gateway-test-callback'

const EXCERPT_LENGTH = 500
const MAX_URL_LENGTH = 2048

/**
 * The merchant's answer to a test callback:
 * - acknowledged: HTTP 200 with "ok" or "success", as a real callback needs;
 * - not_acknowledged: an answer, but not that one (it would be retried);
 * - refused: not sent, the address is not allowed (SSRF guard);
 * - failed: no answer (connection refused, timeout, TLS ...).
 */
export type TestCallbackOutcome = 'acknowledged' | 'not_acknowledged' | 'refused' | 'failed'

export type TestCallbackResult = {
  outcome: TestCallbackOutcome
  format: string
  method: 'GET' | 'POST'
  /** The URL called (a GET callback carries its fields in the query). */
  url: string
  /** The body sent (null for a GET). */
  body: string | null
  tradeId: string
  httpStatus: number | null
  durationMs: number
  /** The start of the merchant's answer. */
  excerpt: string
  /** Why it is not acknowledged, in words (empty when it is). */
  error: string
}

/**
 * "Send test callback": a payment callback for a made-up paid order, signed
 * with the key's secret by the very format that signs real callbacks, sent
 * through the same SSRF-guarded client with the same settings (timeout,
 * private targets). It is marked as a test twice: every identifier starts
 * with TEST- and the request carries the X-Gateway-Test-Callback header.
 * Nothing is stored but the audit row saying who sent it where.
 */
export class TestCallbackSender {
  constructor(
    protected apiKeys = apiKeyAdmin,
    protected audit = auditLog
  ) {}

  /**
   * The callback formats a key's orders can use: each loaded one that does
   * not refuse the key (CallbackFormat.refusesKey, e.g. one that needs a
   * numeric pid), native first.
   */
  formatsFor(apiKey: Pick<ApiKey, 'pid'>): string[] {
    return callbackFormats.names().filter((name) => !callbackFormats.get(name).refusesKey?.(apiKey))
  }

  async send(pid: string, url: string, format = 'native'): Promise<TestCallbackResult> {
    const apiKey = await this.apiKeys.find(pid)
    const target = checkCallbackUrl(url)
    if (!this.formatsFor(apiKey).includes(format)) {
      const refusal = callbackFormats.has(format)
        ? callbackFormats.get(format).refusesKey?.(apiKey)
        : null
      throw refusal
        ? new OperatorError(`${format} callbacks: ${refusal}`, {
            key: 'callback_format_refused',
            args: { format, reason: refusal },
          })
        : new OperatorError(`Unknown callback format "${format}"`, {
            key: 'unknown_callback_format',
            args: { format },
          })
    }

    const order = testOrder(target, format)
    const request = callbackFormats.get(format).build(order, apiKey)
    request.headers = { ...request.headers, [TEST_HEADER]: '1' }

    const started = performance.now()
    let httpStatus: number | null = null
    let excerpt = ''
    let error = ''
    let outcome: TestCallbackOutcome
    try {
      const response = await safeRequest(request, {
        timeoutMs: (await settings.get('callbacks.timeout_seconds')) * 1000,
        allowPrivateTargets: await settings.get('callbacks.allow_private_targets'),
        maxBodyBytes: 4096,
      })
      httpStatus = response.status
      excerpt = response.body.slice(0, EXCERPT_LENGTH)
      if (isAcknowledged(response.status, response.body)) outcome = 'acknowledged'
      else {
        outcome = 'not_acknowledged'
        error = `HTTP ${response.status}: a callback is acknowledged by HTTP 200 with the body "ok" or "success"; the gateway would retry this one`
      }
    } catch (caught) {
      if (caught instanceof ForbiddenTargetError) {
        outcome = 'refused'
        error = `Not sent: ${caught.message}. Callbacks go to public addresses only (setting callbacks.allow_private_targets).`
      } else {
        outcome = 'failed'
        error = `No answer: ${(caught as Error).message || String(caught)}`
      }
    }
    const durationMs = Math.round(performance.now() - started)

    await this.audit.record({
      action: 'api_key.test_callback',
      subjectType: 'api_key',
      subjectId: apiKey.pid,
      after: { url: redactUrl(target), format, tradeId: order.tradeId, outcome, httpStatus },
    })
    return {
      outcome,
      format,
      method: request.method,
      url: request.url,
      body: request.body,
      tradeId: order.tradeId,
      httpStatus,
      durationMs,
      excerpt,
      error,
    }
  }
}

/** The URL as it will be called (trimmed), or a refusal: http(s), at most 2048 characters. */
export function checkCallbackUrl(text: string): string {
  const url = text.trim()
  if (url === '')
    throw new OperatorError('Give the URL to send the test callback to', {
      key: 'test_url_required',
    })
  if (url.length > MAX_URL_LENGTH)
    throw new OperatorError(`The URL must be at most ${MAX_URL_LENGTH} characters`, {
      key: 'test_url_too_long',
      args: { max: MAX_URL_LENGTH },
    })
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new OperatorError(
      `"${url.slice(0, 100)}" is not a URL (example: https://shop.example/payment/notify)`,
      { key: 'test_url_invalid', args: { url: url.slice(0, 100) } }
    )
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new OperatorError('The URL must start with http:// or https://', {
      key: 'test_url_scheme',
    })
  }
  return url
}

/** A paid order that exists nowhere: what the callback describes. */
function testOrder(notifyUrl: string, format: string): Order {
  const mark = `${TEST_PREFIX}${randomBytes(8).toString('hex').toUpperCase()}`
  const order = new Order()
  order.tradeId = mark
  order.orderId = mark
  order.paymentType = callbackFormats.get(format).paymentType
  order.flavourType = ''
  order.name = 'Test callback'
  order.currency = 'CNY'
  order.amount = '10'
  order.actualAmount = '1.37931034'
  order.token = 'USDT'
  // A sample: no callback format sends the network, and no chain is asked.
  order.network = 'test'
  order.receiveAddress = 'TEST-ADDRESS'
  order.blockTransactionId = `${TEST_PREFIX}TX-${randomBytes(8).toString('hex')}`
  order.status = OrderStatus.PAID
  order.notifyUrl = notifyUrl
  order.redirectUrl = ''
  return order
}

const testCallbackSender = new TestCallbackSender()
export default testCallbackSender
