import db from '@adonisjs/lucid/services/db'
import Order, { OrderStatus } from '#models/order'
import orderService from '#services/order_service'
import { orderByTradeId } from '#services/order_lookup'
import { assertOpen } from '#services/order_rules'
import providerCheckout, { isProviderTarget, providerAddress } from '#payments/provider_checkout'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { isUniqueViolation } from '#support/database/database_errors'
import { lockRow } from '#support/database/row_lock'
import { newTradeId } from '#support/text/trade_id'

/** Target of a switch: an on-chain (network, token) or a payment provider (by name) with a token. */
type Target = { network: string; token: string }

function isSameTarget(order: Order, target: Target) {
  if (isProviderTarget(target.network))
    return order.payProvider === target.network && order.token === target.token
  return (
    order.payProvider === '' && order.network === target.network && order.token === target.token
  )
}

const CHILD_LIMIT = () =>
  new BusinessError(
    ErrorCode.CHILD_LIMIT,
    'Child order count limit exceeded: this order already has another payment target'
  )

/**
 * POST /pay/switch-network: the payer picks or changes the payment target.
 *
 * - a placeholder (4) is completed in place, on chain or as a provider order;
 * - the same target returns the order (and marks a completed placeholder
 *   selected);
 * - another target creates the parent's single child (or returns it, when
 *   it is that target).
 * Every state change re-checks the order under its row lock, so concurrent
 * switches cannot complete a placeholder twice or create two children (the
 * unique index on parent_id is the last line).
 */
export class SwitchService {
  async switch(tradeId: string, target: Target): Promise<Order> {
    for (let round = 0; round < 3; round++) {
      const order = await orderByTradeId(tradeId)
      if (order.parentId !== null) throw new BusinessError(ErrorCode.CHILD_SWITCH)
      assertOpen(order, 'switch')

      if (order.status === OrderStatus.SELECTING) {
        const completed = isProviderTarget(target.network)
          ? await this.#completeWithProvider(order, target)
          : await this.#completeOnChain(order, target)
        if (completed) return completed
        continue // someone else completed it meanwhile: decide again
      }

      if (isSameTarget(order, target)) return this.#select(order)

      const child = await Order.findBy('parent_id', order.id)
      if (child) {
        if (isSameTarget(child, target)) return child
        throw CHILD_LIMIT()
      }
      return isProviderTarget(target.network)
        ? this.#createProviderChild(order, target)
        : this.#createOnChainChild(order, target)
    }
    throw new BusinessError(ErrorCode.STATUS_CHANGED)
  }

  async #completeOnChain(order: Order, target: Target): Promise<Order | null> {
    const price = await orderService.priceOnChain(
      order.amount,
      order.currency,
      target.network,
      target.token,
      order.apiKeyId
    )
    return db.transaction(async (trx) => {
      await lockRow(trx, 'orders', order.id)
      const fresh = await Order.query({ client: trx }).where('id', order.id).firstOrFail()
      if (fresh.status !== OrderStatus.SELECTING) return null
      await orderService.assignTarget(trx, fresh, price)
      fresh.merge({ status: OrderStatus.WAITING, wasPlaceholder: true, isSelected: false })
      await fresh.save()
      return fresh
    })
  }

  async #completeWithProvider(order: Order, target: Target): Promise<Order | null> {
    const { network: name, token } = target
    await providerCheckout.provider(name).ensureUsable(token)
    const opened = await providerCheckout.open(name, order.tradeId, order, token)
    const completed = await db.transaction(async (trx) => {
      await lockRow(trx, 'orders', order.id)
      const fresh = await Order.query({ client: trx }).where('id', order.id).firstOrFail()
      if (fresh.status !== OrderStatus.SELECTING) return null
      fresh.merge({
        status: OrderStatus.WAITING,
        token,
        network: name,
        receiveAddress: providerAddress(name),
        payProvider: name,
        actualAmount: opened.amount,
        paymentUrl: opened.payUrl,
        wasPlaceholder: true,
        isSelected: false,
      })
      await fresh.save()
      await providerCheckout.attach(trx, fresh.tradeId, fresh.id)
      return fresh
    })
    if (!completed)
      await providerCheckout.abandon(order.tradeId, 'the order was completed by another request')
    return completed
  }

  /** Same target again: after a completed placeholder, this is the selection. */
  async #select(order: Order): Promise<Order> {
    if (order.wasPlaceholder && !order.isSelected) {
      await db
        .from('orders')
        .where('id', order.id)
        .where('status', OrderStatus.WAITING)
        .update({ is_selected: true, updated_at: Date.now() })
      await order.refresh()
    }
    return order
  }

  #childOf(parent: Order, tradeId: string) {
    return {
      tradeId,
      orderId: parent.orderId,
      parentId: parent.id,
      apiKeyId: parent.apiKeyId,
      pid: parent.pid,
      paymentType: parent.paymentType,
      flavourType: parent.flavourType,
      name: parent.name,
      currency: parent.currency,
      amount: parent.amount,
      notifyUrl: parent.notifyUrl,
      redirectUrl: parent.redirectUrl,
      // The merchant's order lives as long as it lives, whichever target pays.
      expirationTime: parent.expirationTime,
      status: OrderStatus.WAITING,
    }
  }

  async #createOnChainChild(parent: Order, target: Target): Promise<Order> {
    const price = await orderService.priceOnChain(
      parent.amount,
      parent.currency,
      target.network,
      target.token,
      parent.apiKeyId
    )
    try {
      return await db.transaction(async (trx) => {
        await this.#lockWaitingParent(trx, parent.id)
        const child = await Order.create(
          {
            ...this.#childOf(parent, newTradeId()),
            token: target.token,
            network: target.network,
            receiveAddress: '',
            actualAmount: '0',
          },
          { client: trx }
        )
        await orderService.assignTarget(trx, child, price)
        await child.save()
        return child
      })
    } catch (error) {
      if (isUniqueViolation(error)) throw CHILD_LIMIT()
      throw error
    }
  }

  async #createProviderChild(parent: Order, target: Target): Promise<Order> {
    const { network: name, token } = target
    await providerCheckout.provider(name).ensureUsable(token)
    const tradeId = newTradeId()
    const opened = await providerCheckout.open(name, tradeId, parent, token)
    try {
      return await db.transaction(async (trx) => {
        await this.#lockWaitingParent(trx, parent.id)
        const child = await Order.create(
          {
            ...this.#childOf(parent, tradeId),
            token,
            network: name,
            receiveAddress: providerAddress(name),
            payProvider: name,
            actualAmount: opened.amount,
            paymentUrl: opened.payUrl,
          },
          { client: trx }
        )
        await providerCheckout.attach(trx, tradeId, child.id)
        return child
      })
    } catch (error) {
      await providerCheckout.abandon(tradeId, (error as Error).message)
      if (isUniqueViolation(error)) throw CHILD_LIMIT()
      throw error
    }
  }

  /** The parent must still be waiting when its child is created. */
  async #lockWaitingParent(trx: Parameters<typeof lockRow>[0], parentId: number) {
    await lockRow(trx, 'orders', parentId)
    const parent = await Order.query({ client: trx }).where('id', parentId).firstOrFail()
    if (parent.status !== OrderStatus.WAITING) throw new BusinessError(ErrorCode.STATUS_CHANGED)
  }
}

const switchService = new SwitchService()
export default switchService
