import { DateTime } from 'luxon'
import Order, { OrderStatus } from '#models/order'
import { epayMoney, epayType } from '#plugins/compat/compat_callback_format'

/**
 * The orders a merchant asks api.php about: only its own (by pid), and
 * always the order it knows, the parent. A child (the payer switched to
 * another target) stands for its parent, which is marked paid when the
 * child is paid.
 */
export class CompatOrderQuery {
  /** By our trade_no (a child's gives its parent), else the shop's out_trade_no; null when not this pid's. */
  async find(pid: string, by: { trade_no?: string; out_trade_no?: string }): Promise<Order | null> {
    if (by.trade_no !== undefined) {
      const order = await Order.query().where('trade_id', by.trade_no).where('pid', pid).first()
      if (!order || order.parentId === null) return order
      return Order.query().where('id', order.parentId).where('pid', pid).first()
    }
    return Order.query()
      .where('pid', pid)
      .where('order_id', by.out_trade_no!)
      .whereNull('parent_id')
      .first()
  }

  /** The pid's orders, newest first, `limit` per page (EPay's act=orders). */
  async page(pid: string, page: number, limit: number): Promise<Order[]> {
    return Order.query()
      .where('pid', pid)
      .whereNull('parent_id')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset((page - 1) * limit)
      .limit(limit)
  }
}

/** EPay's times: "2016-08-06 22:55:52", in the server's time zone as EPay's PHP prints them. */
export function epayTime(epochMs: number): string {
  return DateTime.fromMillis(epochMs).toFormat('yyyy-MM-dd HH:mm:ss')
}

/** A pid as EPay answers it: a number when it is one (callbacks send it so too). */
function epayPid(pid: string): number | string {
  return /^\d{1,15}$/.test(pid) ? Number(pid) : pid
}

/**
 * An order as EPay's order query answers it: `status` 1 once paid, else 0
 * (waiting, expired, or the payer still choosing); `endtime` the payment's
 * time, null before; `api_trade_no` the transaction that paid it (on-chain
 * hash or provider order number). `param` and `buyer` are not kept: empty.
 */
export function presentEpayOrder(order: Order) {
  const paid = order.status === OrderStatus.PAID
  return {
    trade_no: order.tradeId,
    out_trade_no: order.orderId,
    api_trade_no: order.blockTransactionId,
    type: epayType(order),
    pid: epayPid(order.pid),
    addtime: epayTime(order.createdAt),
    endtime: paid && order.paidAt !== null ? epayTime(order.paidAt) : null,
    name: order.name,
    money: epayMoney(order.amount),
    param: '',
    buyer: '',
    status: paid ? 1 : 0,
  }
}

const compatOrderQuery = new CompatOrderQuery()
export default compatOrderQuery
