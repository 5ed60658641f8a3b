import vine, { SimpleMessagesProvider } from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import pluginRegistry from '#plugin_host/plugin_registry'
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
  // The payment types of the callback formats (Native; others from their plugins …), in any case.
  payment_type: vine
    .string()
    .trim()
    .toLowerCase()
    .in(() => pluginRegistry.paymentTypes().map((type) => type.toLowerCase()))
    .optional(),
  signature: vine.string(),
})

/** "Native or A" (or "Native, A or …"): the payment types this gateway knows. */
function paymentTypeList(): string {
  const types = pluginRegistry.paymentTypes()
  return types.length <= 1
    ? types.join('')
    : `${types.slice(0, -1).join(', ')} or ${types[types.length - 1]}`
}

/** The spec's messages, the payment types named as they are now. */
class CreateOrderMessages extends SimpleMessagesProvider {
  getMessage(rawMessage: string, rule: string, field: FieldContext, args?: Record<string, any>) {
    if (rule === 'in' && field.name === 'payment_type')
      return `The payment_type field must be ${paymentTypeList()}`
    return super.getMessage(rawMessage, rule, field, args)
  }
}

createOrderValidator.messagesProvider = new CreateOrderMessages({
  ...ORDER_FIELD_MESSAGES,
  'order_id.maxLength': 'The order_id field must be at most 32 characters',
  'order_id.regex': 'The order_id field must not contain control characters',
  'redirect_url.url': 'The redirect_url field must be an http(s) URL',
})
