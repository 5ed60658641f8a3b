/**
 * A hosted payment provider (a plugin's `providers`): the payer pays on the
 * provider's page; the provider notifies us. The core decides which order
 * is paid; the plugin speaks the provider's protocol.
 */
export type ProviderPaymentRequest = {
  /** Our trade_id (the provider's unique_id). */
  tradeId: string
  /** Upper-case token symbol. */
  coin: string
  /** Crypto amount, fixed to the token precision ("12.35"). */
  amount: string
  /**
   * Where the payer goes back first: the gateway's return page of the
   * order (/pay/return/{trade_id}) when the order has a return address;
   * null when it has none.
   */
  returnUrl: string | null
  /** Our cashier page of the order: the return page of last resort. */
  cashierUrl: string
}

export type ProviderPayment = {
  providerOrderId: string
  payUrl: string
  /** The provider's answer as received, kept for audit. */
  raw: string
}

/** A notification whose signature and envelope checked out. */
export type ProviderNotice = {
  uniqueId: string
  providerOrderId: string
  amount: string
  coin: string
}

/** What the provider says of a payment when asked (reconciliation). */
export type ProviderStatus =
  | { state: 'pending' }
  | { state: 'failed'; reason: string }
  /** Paid: the notice is checked by the core like a notification's. */
  | { state: 'paid'; notice: ProviderNotice; raw?: string }

/** The provider refused or failed to create a payment link. */
export class ProviderRequestError extends Error {}

/** A notification that must be answered "fail" (with the reason logged). */
export class NotificationRejectedError extends Error {}

export interface PaymentProvider {
  /**
   * The value of `pay_provider`, of the order's `network` and of the
   * switch's `network` (the bundled one: `provider`); `receive_address` is
   * it in capitals. Unique among the installed providers and networks.
   */
  readonly name: string

  /**
   * What the cashier and the public config offer: whether the payer may
   * choose it and in which tokens. Optional: without it, the provider is
   * not offered (it can still pay orders switched to it by name).
   */
  offer?(): Promise<{ enabled: boolean; tokens: string[] }>

  /** Throws BusinessError 10017 (disabled), 10018 (incomplete) or 10019 (token). */
  ensureUsable(token: string): Promise<void>

  createPayment(request: ProviderPaymentRequest): Promise<ProviderPayment>

  /** Checks signature and envelope fields; throws NotificationRejectedError. */
  readNotification(fields: Record<string, string>): Promise<ProviderNotice>

  /**
   * Asks the provider about one payment (the reconciliation job, for
   * payments whose notification never came). Optional: a provider whose
   * protocol has no status query leaves it out and is never asked.
   */
  retrieveStatus?(payment: {
    tradeId: string
    providerOrderId: string
    coin: string
  }): Promise<ProviderStatus>
}

export class ProviderRegistry {
  #providers = new Map<string, PaymentProvider>()

  register(provider: PaymentProvider) {
    this.#providers.set(provider.name, provider)
  }

  has(name: string) {
    return this.#providers.has(name)
  }

  /** Every installed provider, in the order their plugins registered them. */
  all(): PaymentProvider[] {
    return [...this.#providers.values()]
  }

  unregister(name: string) {
    this.#providers.delete(name)
  }

  get(name: string): PaymentProvider {
    const provider = this.#providers.get(name)
    if (!provider) throw new Error(`No payment provider "${name}" is registered`)
    return provider
  }
}

const providers = new ProviderRegistry()
export default providers

/**
 * The spec's special `network` value of the switch: the hosted provider.
 * Every installed payment provider is a target under its own name (the
 * bundled one is named `provider`, as the spec has it); this name alone is
 * refused with 10017 while no provider by that name is installed.
 */
export const SPEC_PROVIDER_NETWORK = 'provider'

/** Whether a switch's `network` names a payment provider (or the spec's `provider`). */
export function isProviderTarget(network: string) {
  return network === SPEC_PROVIDER_NETWORK || providers.has(network)
}
