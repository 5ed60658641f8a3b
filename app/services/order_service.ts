import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import Order, { OrderStatus, type PaymentType } from '#models/order'
import type ApiKey from '#models/api_key'
import settings from '#settings/settings_service'
import assetCatalog from '#services/asset_catalog'
import amountAllocator, {
  reservationGraceMs,
  type AllocationRequest,
} from '#services/amount_allocator'
import orderExpiry from '#services/order_expiry'
import rateService from '#rates/rate_service'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import {
  type Decimal,
  ceilToPrecision,
  stepOf,
  storableDecimal,
  toDecimalString,
} from '#support/text/money'
import { metrics } from '#support/runtime/metrics'
import { isUniqueViolation } from '#support/database/database_errors'
import { newTradeId } from '#support/text/trade_id'
import { refuseInexactAmount } from '#services/exact_amount'

export type NewOrder = {
  apiKey: ApiKey
  orderId: string
  /** Upper-case fiat code. */
  currency: string
  /** Fiat amount, canonical decimal string. */
  amount: string
  /** Upper-case symbol; with `network`, or both absent for a placeholder. */
  token?: string
  /** Lower-case network name. */
  network?: string
  notifyUrl: string
  redirectUrl?: string
  name?: string
  paymentType: PaymentType
  flavourType?: string
}

export type OnChainPrice = {
  network: string
  token: string
  addresses: string[]
  precision: number
  wanted: Decimal
  maxSteps: number
  /** How long an ended order's amount stays reserved on this chain (read before any transaction). */
  graceMs: number
  /** What priced it (stored on the order): the rate charged, its source, the markup. */
  pricing: { rate: string; source: string; markup: string }
}

/** What the allocator is asked to reserve for an order priced at `price`, living until `expiresAt`. */
function reservationOf(price: OnChainPrice, expiresAt: number): Omit<AllocationRequest, 'orderId'> {
  return {
    network: price.network,
    token: price.token,
    addresses: price.addresses,
    baseAmount: price.wanted,
    precision: price.precision,
    maxSteps: price.maxSteps,
    graceMs: price.graceMs,
    expiresAt,
  }
}

/**
 * What the create answers with (the spec's create response, a plugin
 * format's own answer): the columns written, plus the target the allocator chose.
 * Built from the row without a Lucid model (a model costs the create path
 * more than presenting it).
 */
export type CreatedOrder = Pick<
  Order,
  | 'tradeId'
  | 'orderId'
  | 'amount'
  | 'currency'
  | 'actualAmount'
  | 'receiveAddress'
  | 'token'
  | 'network'
  | 'status'
  | 'expirationTime'
>

const ORDER_EXISTS = () =>
  new BusinessError(
    ErrorCode.ORDER_EXISTS,
    'Payment transaction already exists; do not create repeatedly'
  )

/**
 * Creation and closure of orders. Each operation is one transaction: an
 * order is either fully created (row, lock) or not at all.
 */
export class OrderService {
  async create(input: NewOrder): Promise<CreatedOrder> {
    if (Boolean(input.token) !== Boolean(input.network)) {
      throw BusinessError.parameter('token and network must be given together, or both omitted')
    }
    // No read of an existing order first: the unique index on (pid,
    // order_id) of parent orders decides, and its violation is 10002.

    const lifetimeMs = (await settings.get('order.expiration_minutes')) * 60_000
    const now = Date.now()
    const columns = {
      trade_id: newTradeId(),
      order_id: input.orderId,
      api_key_id: input.apiKey.id,
      pid: input.apiKey.pid,
      payment_type: input.paymentType,
      flavour_type: input.flavourType ?? '',
      name: input.name ?? '',
      currency: input.currency,
      amount: storableDecimal(input.amount),
      notify_url: input.notifyUrl,
      redirect_url: input.redirectUrl ?? '',
      expiration_time: now + lifetimeMs,
      created_at: now,
      updated_at: now,
    }

    if (!input.token || !input.network) {
      const order = await this.#duplicateAs10002(() =>
        Order.create({
          tradeId: columns.trade_id,
          orderId: columns.order_id,
          parentId: null,
          apiKeyId: columns.api_key_id,
          pid: columns.pid,
          paymentType: input.paymentType,
          flavourType: columns.flavour_type,
          name: columns.name,
          currency: columns.currency,
          amount: input.amount,
          notifyUrl: columns.notify_url,
          redirectUrl: columns.redirect_url,
          expirationTime: columns.expiration_time,
          createdAt: now,
          updatedAt: now,
          status: OrderStatus.SELECTING,
          token: '',
          network: '',
          receiveAddress: '',
          actualAmount: '0',
        })
      )
      metrics.ordersCreated.inc({ network: '', token: '' })
      return order
    }

    const price = await this.priceOnChain(
      input.amount,
      input.currency,
      input.network,
      input.token,
      columns.api_key_id
    )
    const target = await this.#duplicateAs10002(() =>
      amountAllocator.createOrder(
        {
          ...columns,
          status: OrderStatus.WAITING,
          token: price.token,
          network: price.network,
          rate: price.pricing.rate,
          rate_source: price.pricing.source,
          rate_markup: price.pricing.markup,
        },
        reservationOf(price, columns.expiration_time)
      )
    )
    metrics.ordersCreated.inc({ network: price.network, token: price.token })
    return {
      tradeId: columns.trade_id,
      orderId: columns.order_id,
      amount: columns.amount,
      currency: columns.currency,
      actualAmount: target.amount,
      receiveAddress: target.address,
      token: price.token,
      network: price.network,
      status: OrderStatus.WAITING,
      expirationTime: columns.expiration_time,
    }
  }

  /**
   * What paying `amount` `currency` in `token` on `network` costs, or the
   * spec's refusal: 10014 / 10016 / 10003 (asset), 10006 (rate), 10004
   * (below one unit of the token, or too many digits to keep exactly).
   * `apiKeyId` is the merchant's key (its own markup wins over the pair's).
   */
  async priceOnChain(
    amount: string,
    currency: string,
    network: string,
    token: string,
    apiKeyId: number | null
  ): Promise<OnChainPrice> {
    const asset = await assetCatalog.payable(network, token)
    const precision = asset.token.amountPrecision
    const pricing = await rateService.quote(amount, currency, token, apiKeyId)
    const exact = pricing.amount
    if (exact.lt(stepOf(precision))) {
      throw new BusinessError(
        ErrorCode.INVALID_AMOUNT,
        `Invalid payment amount: ${amount} ${currency} is ${toDecimalString(exact)} ${token}, below the minimum unit ${toDecimalString(stepOf(precision))}`
      )
    }
    const wanted = ceilToPrecision(exact, precision)
    refuseInexactAmount(wanted, { amount, currency, token })
    return {
      network,
      token,
      addresses: asset.addresses,
      precision,
      wanted,
      maxSteps: await settings.get('order.amount_max_steps'),
      graceMs: await reservationGraceMs(asset.chain),
      pricing: { rate: pricing.rate, source: pricing.source, markup: pricing.markup },
    }
  }

  /**
   * Reserves a unique (address, amount) for `order` and writes them on it
   * (the caller saves): the on-chain target of a new order, a completed
   * placeholder or a child.
   */
  async assignTarget(trx: TransactionClientContract, order: Order, price: OnChainPrice) {
    const allocation = await amountAllocator.allocate(trx, {
      orderId: order.id,
      ...reservationOf(price, order.expirationTime),
    })
    // A step above the wanted amount may need a digit more (1000000000 → 1000000000.000001).
    refuseInexactAmount(allocation.amount, {
      amount: order.amount,
      currency: order.currency,
      token: price.token,
    })
    order.merge({
      token: price.token,
      network: price.network,
      receiveAddress: allocation.address,
      actualAmount: allocation.amount,
      rate: price.pricing.rate,
      rateSource: price.pricing.source,
      rateMarkup: price.pricing.markup,
    })
  }

  /**
   * Backend closure (`node ace orders:close`): a waiting (1) or selecting (4)
   * order, and its waiting child, become expired (3) with their life ending
   * now (expiration_time = now). Their amounts stay reserved for the chain's
   * late-payment grace. Returns false when the order was not open.
   */
  async close(order: Order): Promise<boolean> {
    return db.transaction((trx) => this.closeIn(trx, order))
  }

  /** The same inside the caller's transaction (the operators' close audits it there). */
  async closeIn(trx: TransactionClientContract, order: Order, now = Date.now()): Promise<boolean> {
    if ((await orderExpiry.closeOrders(trx, [order.id], now)) === 0) return false
    const child = await Order.query({ client: trx }).where('parent_id', order.id).first()
    if (child) await orderExpiry.closeOrders(trx, [child.id], now)
    return true
  }

  async #duplicateAs10002<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      if (isUniqueViolation(error)) throw ORDER_EXISTS()
      throw error
    }
  }
}

const orderService = new OrderService()
export default orderService
