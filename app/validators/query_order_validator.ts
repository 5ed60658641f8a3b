import vine, { SimpleMessagesProvider } from '@vinejs/vine'
import { merchantOrderIdField } from '#validators/rules'

/**
 * Field rules of POST /payments/native/v1/order/query (after the signature
 * passed): the order is named by its trade_id or by the merchant's own
 * order_id (one of them; trade_id wins when both are given).
 */
export const queryOrderValidator = vine.create({
  pid: vine.string().maxLength(32),
  trade_id: vine.string().trim().maxLength(64).optional().requiredIfMissing('order_id'),
  order_id: merchantOrderIdField().optional(),
  signature: vine.string(),
})

queryOrderValidator.messagesProvider = new SimpleMessagesProvider({
  'trade_id.requiredIfMissing': 'Give the trade_id or the order_id of the order',
  'trade_id.required': 'Give the trade_id or the order_id of the order',
  'trade_id.maxLength': 'The trade_id field must be at most 64 characters',
  'order_id.maxLength': 'The order_id field must be at most 32 characters',
  'order_id.regex': 'The order_id field must not contain control characters',
})
