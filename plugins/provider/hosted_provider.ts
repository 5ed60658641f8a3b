import env from '#start/env'
import { providerSettings } from '#plugins/provider/provider_settings'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import {
  NotificationRejectedError,
  ProviderRequestError,
  type PaymentProvider,
  type ProviderNotice,
  type ProviderPayment,
  type ProviderPaymentRequest,
  type ProviderStatus,
} from '#payments/payment_provider'
import {
  notificationSignatureValid,
  providerRequestSign,
} from '#plugins/provider/provider_signature'
import { SecretPurpose, revealSecret } from '#support/crypto/secret_box'

/** shopToken as stored (encrypted): revealed only to sign or check a signature. */
type ProviderConfig = { shopId: string; shopToken: string; apiUrl: string }

function shopToken(config: ProviderConfig): string {
  return revealSecret(config.shopToken, SecretPurpose.setting('provider.shop_token'))
}

/** Its switch `network`, `pay_provider` and route prefix: the spec's `provider`. */
export const HOSTED_PROVIDER_NAME = 'provider'

/**
 * The hosted, shop-token based payment-link provider
 * (shared/reference/provider-protocol.md).
 */
export class HostedProvider implements PaymentProvider {
  readonly name = HOSTED_PROVIDER_NAME

  /** Offered while `provider.enabled`, in `provider.allow_tokens` (the public config's `provider`). */
  async offer() {
    return {
      enabled: await providerSettings.get('provider.enabled'),
      tokens: await providerSettings.get('provider.allow_tokens'),
    }
  }

  async ensureUsable(token: string): Promise<void> {
    await this.#config()
    const allowed = await providerSettings.get('provider.allow_tokens')
    if (!allowed.includes(token.toUpperCase())) {
      throw new BusinessError(
        ErrorCode.PROVIDER_UNSUPPORTED,
        `Payment provider does not support ${token.toUpperCase()} (allowed: ${allowed.join(', ') || 'none'})`
      )
    }
  }

  async createPayment(request: ProviderPaymentRequest): Promise<ProviderPayment> {
    const config = await this.#config()
    const fields: Record<string, string> = {
      unique_id: request.tradeId,
      name: request.tradeId,
      amount: request.amount,
      coin: request.coin.toUpperCase(),
      callback_url: await this.#callbackUrl(),
      return_url:
        request.returnUrl ||
        (await providerSettings.get('provider.return_url')) ||
        request.cashierUrl,
      id: config.shopId,
    }
    const { body, raw } = await this.#post(config, 'payLink', fields)
    const providerOrderId = body?.data?.order_id
    const payUrl = body?.data?.pay_url
    if (typeof providerOrderId !== 'string' && typeof providerOrderId !== 'number') {
      throw new ProviderRequestError(
        `the provider created no payment (${String(body?.msg ?? 'no order_id')})`
      )
    }
    if (String(providerOrderId) === '' || typeof payUrl !== 'string' || payUrl === '') {
      throw new ProviderRequestError(
        `the provider created no payment (${String(body?.msg ?? 'no pay_url')})`
      )
    }
    return { providerOrderId: String(providerOrderId), payUrl, raw }
  }

  /**
   * Asks the provider about one payment (`POST {api_url}/checkDeposit`
   * with `unique_id`, signed like a link request). Its answer carries
   * `data.status` 0 (unpaid) or 1 (paid), `order_id`, `unique_id` and
   * `amount`; it has no `coin`, so the coin is the one the link was made
   * for. A paid answer is checked by the core exactly like a notification
   * (provider order id, amount, the one payment path). An error answer is
   * thrown: the payment is asked about again later.
   */
  async retrieveStatus(payment: {
    tradeId: string
    providerOrderId: string
    coin: string
  }): Promise<ProviderStatus> {
    const config = await this.#config()
    const { body, raw } = await this.#post(config, 'checkDeposit', {
      unique_id: payment.tradeId,
      id: config.shopId,
    })
    if (body?.status !== 'success' || typeof body?.data !== 'object' || body.data === null) {
      throw new ProviderRequestError(
        `the provider did not give the payment's status (${String(body?.msg ?? 'no data')})`
      )
    }
    const data = body.data as Record<string, unknown>
    const text = (value: unknown) =>
      typeof value === 'string' || typeof value === 'number' ? String(value) : ''
    if (text(data.unique_id) !== '' && text(data.unique_id) !== payment.tradeId) {
      throw new ProviderRequestError(
        `the provider answered about ${text(data.unique_id)}, not ${payment.tradeId}`
      )
    }
    const state = text(data.status)
    if (state === '0') return { state: 'pending' }
    if (state !== '1')
      throw new ProviderRequestError(`the provider gave an unknown payment status "${state}"`)
    return {
      state: 'paid',
      raw,
      notice: {
        uniqueId: payment.tradeId,
        providerOrderId: text(data.order_id) || payment.providerOrderId,
        amount: text(data.amount),
        coin: text(data.coin) || payment.coin,
      },
    }
  }

  async readNotification(fields: Record<string, string>): Promise<ProviderNotice> {
    let config: ProviderConfig
    try {
      config = await this.#config()
    } catch {
      throw new NotificationRejectedError('the provider channel is disabled or not configured')
    }
    if (!notificationSignatureValid(fields, shopToken(config))) {
      throw new NotificationRejectedError('bad signature')
    }
    if (fields.id !== config.shopId)
      throw new NotificationRejectedError(`unknown shop id ${fields.id}`)
    if (fields.status !== 'success')
      throw new NotificationRejectedError(`status is ${fields.status}`)
    if (fields['data[type]'] !== 'deposit')
      throw new NotificationRejectedError(`type is ${fields['data[type]']}`)
    if (fields['data[status]'] !== '1')
      throw new NotificationRejectedError(`payment status is ${fields['data[status]']}`)
    for (const name of ['data[unique_id]', 'data[order_id]', 'data[amount]', 'data[coin]']) {
      if (!fields[name]) throw new NotificationRejectedError(`${name} is missing`)
    }
    return {
      uniqueId: fields['data[unique_id]'],
      providerOrderId: fields['data[order_id]'],
      amount: fields['data[amount]'],
      coin: fields['data[coin]'],
    }
  }

  /** A signed form POST to the shop API; the JSON answer and its text. */
  async #post(config: ProviderConfig, endpoint: string, fields: Record<string, string>) {
    const signed = { ...fields, sign: providerRequestSign(fields, shopToken(config)) }
    const timeoutMs = (await providerSettings.get('provider.timeout_seconds')) * 1000
    const url = `${config.apiUrl.replace(/\/+$/, '')}/${endpoint}`
    let response: Response
    let raw: string
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'accept': 'application/json',
        },
        body: new URLSearchParams(signed).toString(),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      })
      raw = await response.text()
    } catch (error) {
      throw new ProviderRequestError(`the provider is unreachable (${(error as Error).message})`)
    }
    if (!response.ok)
      throw new ProviderRequestError(`the provider answered HTTP ${response.status}`)
    try {
      return { body: JSON.parse(raw) as any, raw }
    } catch {
      throw new ProviderRequestError('the provider did not answer JSON')
    }
  }

  async #config(): Promise<ProviderConfig> {
    if (!(await providerSettings.get('provider.enabled'))) {
      throw new BusinessError(ErrorCode.PROVIDER_DISABLED)
    }
    const config = {
      shopId: await providerSettings.get('provider.shop_id'),
      shopToken: await providerSettings.get('provider.shop_token'),
      apiUrl: await providerSettings.get('provider.api_url'),
    }
    const missing = Object.entries({
      'provider.shop_id': config.shopId,
      'provider.shop_token': config.shopToken,
      'provider.api_url': config.apiUrl,
    })
      .filter(([, value]) => value === '')
      .map(([key]) => key)
    if (missing.length > 0) {
      throw new BusinessError(
        ErrorCode.PROVIDER_INCOMPLETE,
        `Payment provider configuration is incomplete: set ${missing.join(', ')}`
      )
    }
    return config
  }

  async #callbackUrl() {
    const configured = await providerSettings.get('provider.callback_url')
    if (configured !== '') return configured
    return `${String(env.get('APP_URL')).replace(/\/+$/, '')}/payments/provider/v1/notify`
  }
}
