import vine, { SimpleMessagesProvider } from '@vinejs/vine'
import { fiatAmountRule, httpUrl } from '#validators/rules'

/**
 * Field rules of POST /payments/native/v1/order/create-transaction.
 * Input is the flat text map the signature was checked on, with empty
 * values already dropped. Case is normalised here: currency and token
 * upper-case, network and payment_type lower-case.
 */
export const createOrderValidator = vine.create({
  pid: vine.string().maxLength(32),
  order_id: vine
    .string()
    .minLength(1)
    .maxLength(32)
    .regex(/^[^\u0000-\u001f\u007f]+$/),
  currency: vine
    .string()
    .trim()
    .regex(/^[A-Za-z]{3,10}$/)
    .toUpperCase(),
  token: vine
    .string()
    .trim()
    .regex(/^[A-Za-z0-9]{1,16}$/)
    .toUpperCase()
    .optional(),
  network: vine
    .string()
    .trim()
    .regex(/^[A-Za-z0-9-]{1,32}$/)
    .toLowerCase()
    .optional(),
  amount: vine.string().use(fiatAmountRule({ min: '0.01', max: '10000000000', maxFractionDigits: 4 })),
  notify_url: httpUrl(),
  redirect_url: httpUrl().optional(),
  name: vine.string().maxLength(255).optional(),
  payment_type: vine.string().trim().toLowerCase().in(['native', 'compat']).optional(),
  signature: vine.string(),
})

createOrderValidator.messagesProvider = new SimpleMessagesProvider({
  'required': 'The {{ field }} field is required',
  'string': 'The {{ field }} field must be a string',
  'order_id.maxLength': 'The order_id field must be at most 32 characters',
  'order_id.regex': 'The order_id field must not contain control characters',
  'currency.regex': 'The currency field must be a fiat code such as CNY or USD',
  'token.regex': 'The token field must be a token symbol such as USDT',
  'network.regex': 'The network field must be a network name such as tron',
  'notify_url.url': 'The notify_url field must be an http(s) URL',
  'redirect_url.url': 'The redirect_url field must be an http(s) URL',
  'payment_type.in': 'The payment_type field must be Native or Compat',
})
