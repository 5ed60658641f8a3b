import rateAdmin from '#services/operators/rate_admin'
import type { ApiClient } from '@japa/api-client'
import Order from '#models/order'
import { createOrder, orderParams } from '#tests/helpers/merchant'
import { FAKE_NETWORK, installFakeChain } from '#tests/helpers/fake_chain'

/** The fake chain, a 7.25 CNY/USDT rate and callbacks allowed to 127.0.0.1. */
export async function prepareLifecycle() {
  await installFakeChain()
  await rateAdmin.set('USDT', 'CNY', '7.25')
  const { default: settings } = await import('#settings/settings_service')
  await settings.set('callbacks.allow_private_targets', 'true')
  await settings.set('rate_limit.create_per_minute', '0')
  await settings.set('rate_limit.cashier_per_minute', '0')
}

/** Creates an order over HTTP and returns its model. */
export async function newOrder(
  client: ApiClient,
  overrides: Record<string, unknown> = {}
): Promise<Order> {
  const response = await createOrder(
    client,
    orderParams({ network: FAKE_NETWORK, token: 'usdt', ...overrides })
  )
  if (response.status() !== 200)
    throw new Error(`create failed: ${JSON.stringify(response.body())}`)
  return Order.findByOrFail('trade_id', response.body().data.trade_id)
}

/** Creates a placeholder (status 4) order. */
export function newPlaceholder(client: ApiClient, overrides: Record<string, unknown> = {}) {
  return newOrder(client, { token: undefined, network: undefined, ...overrides })
}

export function switchTo(client: ApiClient, tradeId: string, network: string, token = 'usdt') {
  return client
    .post('/pay/switch-network')
    .json({ trade_id: tradeId, network, token })
    .accept('json')
}

/** The fields of the cashier init (and switch) response, sorted. */
export const CASHIER_FIELDS = [
  'actual_amount',
  'amount',
  'created_at',
  'currency',
  'expiration_time',
  'is_selected',
  'network',
  'payment_type',
  'payment_url',
  'receive_address',
  'redirect_url',
  'server_time',
  'status',
  'token',
  'trade_id',
]
