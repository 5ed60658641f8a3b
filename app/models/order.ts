import { beforeCreate, column } from '@adonisjs/lucid/orm'
import { TimestampedRecord } from '#models/base_record'
import { booleanColumn, decimalColumn, epochColumn, integerColumn } from '#models/columns'

/** Order status values of the spec. */
export const OrderStatus = {
  WAITING: 1,
  PAID: 2,
  EXPIRED: 3,
  SELECTING: 4,
} as const
export type OrderStatusValue = (typeof OrderStatus)[keyof typeof OrderStatus]

/**
 * The callback format's payment type, stored capitalised (`Native`, or a
 * plugin format's own, likewise capitalised); the cashier shows them lower-case.
 */
export type PaymentType = string

export default class Order extends TimestampedRecord {
  static table = 'orders'

  @column({ isPrimary: true, consume: (value: unknown) => Number(value) })
  declare id: number

  @column()
  declare tradeId: string

  /** The merchant's order number (a plugin format may take it from a field of its own name). */
  @column()
  declare orderId: string

  @column({ consume: (value: unknown) => (value === null ? null : Number(value)) })
  declare parentId: number | null

  @integerColumn()
  declare apiKeyId: number | null

  @column()
  declare pid: string

  @column()
  declare paymentType: PaymentType

  /** The `type` a plugin format's create request gave, echoed in its callbacks ('' if none). */
  @column()
  declare flavourType: string

  @column()
  declare name: string

  /** Upper-case fiat code. */
  @column()
  declare currency: string

  /** Fiat amount as submitted (decimal string). */
  @decimalColumn()
  declare amount: string

  @column()
  declare token: string

  @column()
  declare network: string

  @column()
  declare receiveAddress: string

  /** Crypto amount to pay (decimal string); "0" for a placeholder. */
  @decimalColumn()
  declare actualAmount: string

  /** The rate that priced it: fiat per token, the markup included ('' before a network is chosen). */
  @column()
  declare rate: string

  /** Where that rate came from: `fixed`, `live: <sources>` or `api_url`. */
  @column()
  declare rateSource: string

  /** The markup applied to the live rate (`~1.02`, `+0.3`), '' for none. */
  @column()
  declare rateMarkup: string

  @integerColumn()
  declare status: OrderStatusValue

  @booleanColumn()
  declare isSelected: boolean

  /** Completed in place from a placeholder (4 → 1) by a first selection. */
  @booleanColumn()
  declare wasPlaceholder: boolean

  @column()
  declare payProvider: string

  /** Hosted provider link (provider orders only). */
  @column()
  declare paymentUrl: string

  @column()
  declare redirectUrl: string

  @column()
  declare notifyUrl: string

  @column()
  declare blockTransactionId: string

  /** Epoch milliseconds. */
  @epochColumn()
  declare expirationTime: number

  @epochColumn()
  declare paidAt: number | null

  @column()
  declare callbackStatus: string

  @integerColumn()
  declare callbackAttempts: number

  @epochColumn()
  declare callbackLastAt: number | null

  /**
   * The columns' database defaults, also on the model instance, so that a
   * freshly created order reads the same as one loaded from the table.
   */
  @beforeCreate()
  static fillDefaults(order: Order) {
    const defaults: Partial<Order> = {
      flavourType: '',
      name: '',
      token: '',
      network: '',
      receiveAddress: '',
      actualAmount: '0',
      isSelected: false,
      wasPlaceholder: false,
      payProvider: '',
      paymentUrl: '',
      redirectUrl: '',
      blockTransactionId: '',
      paidAt: null,
      callbackStatus: 'none',
      callbackAttempts: 0,
      callbackLastAt: null,
    }
    for (const [key, value] of Object.entries(defaults)) {
      const name = key as keyof Order
      if (order[name] === undefined) (order as any)[name] = value
    }
  }

  /** Paid through the hosted provider rather than on chain. */
  get isProviderOrder() {
    return this.payProvider !== ''
  }

  /** Has an on-chain target (network, address, amount). */
  get isOnChain() {
    return this.payProvider === '' && this.network !== '' && this.receiveAddress !== ''
  }
}
