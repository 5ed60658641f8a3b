import vine, { SimpleMessagesProvider } from '@vinejs/vine'
import {
  ORDER_FIELD_MESSAGES,
  currencyField,
  fiatAmountRule,
  httpUrl,
  merchantOrderIdField,
  networkField,
  tokenField,
} from '#validators/rules'

/**
 * Field rules of POST /payments/native/v1/order/create-transaction.
 * Input is the flat text map the signature was checked on, with empty
 * values already dropped. Case is normalised here: currency and token
 * upper-case, network and payment_type lower-case.
 */
export const createOrderValidator = vine.create({
  pid: vine.string().maxLength(32),
  order_id: merchantOrderIdField(),
  currency: currencyField(),
  token: tokenField().optional(),
  network: networkField().optional(),
  amount: vine
    .string()
    .use(fiatAmountRule({ min: '0.01', max: '10000000000', maxFractionDigits: 4 })),
  notify_url: httpUrl(),
  redirect_url: httpUrl().optional(),
  name: vine.string().maxLength(255).optional(),
  payment_type: vine.string().trim().toLowerCase().in(['native', 'compat']).optional(),
  signature: vine.string(),
})

createOrderValidator.messagesProvider = new SimpleMessagesProvider({
  ...ORDER_FIELD_MESSAGES,
  'order_id.maxLength': 'The order_id field must be at most 32 characters',
  'order_id.regex': 'The order_id field must not contain control characters',
  'redirect_url.url': 'The redirect_url field must be an http(s) URL',
  'payment_type.in': 'The payment_type field must be Native or Compat',
})
