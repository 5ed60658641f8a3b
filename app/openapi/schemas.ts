import { DEFAULT_MESSAGES, ErrorCode, type ErrorCodeValue } from '#exceptions/error_codes'
import type { SchemaObject } from '#openapi/openapi_types'

/**
 * The Schema Objects of the merchant API (components.schemas), field for
 * field as app/services/order_presenter.ts, public_config.ts and
 * payment_progress.ts write them. Answers are closed
 * (`additionalProperties: false`): a field added to an answer without
 * being added here fails the contract test (tests/functional/openapi.spec.ts).
 */

export const ref = (name: string): SchemaObject => ({ $ref: `#/components/schemas/${name}` })

const string = (description?: string, extra: SchemaObject = {}): SchemaObject => ({
  type: 'string',
  ...extra,
  ...(description ? { description } : {}),
})
const integer = (description: string, extra: SchemaObject = {}): SchemaObject => ({
  type: 'integer',
  ...extra,
  description,
})
const nullable = (schema: SchemaObject): SchemaObject => ({ anyOf: [schema, { type: 'null' }] })

/** A closed object whose every listed property is present. */
export function closedObject(
  properties: Record<string, SchemaObject>,
  description?: string
): SchemaObject {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    required: Object.keys(properties),
    properties,
    additionalProperties: false,
  }
}

/**
 * `status_code` values the gateway answers beside the spec's table: the
 * HTTP-level refusals it renders in the same envelope.
 */
const TRANSPORT_CODES: Record<number, string> = {
  404: 'Not found: no such route (HTTP 404)',
  413: 'Request body too large: over 64 KB (HTTP 413)',
  429: 'Too many requests (HTTP 429, with Retry-After)',
}

/** What each business code means, and which HTTP status carries it. */
function codeTitle(code: ErrorCodeValue): string {
  switch (code) {
    case ErrorCode.PARAMETER:
      return 'System error, or general parameter/validation error (HTTP 400; also the code of an HTTP 503 while the database cannot be reached)'
    case ErrorCode.SIGNATURE:
      return 'Signature authentication error (HTTP 401)'
    case ErrorCode.WALLET_EXISTS:
      return `${DEFAULT_MESSAGES[code]} (HTTP 400; answered to operators' actions only, never by the merchant API)`
    default:
      return `${DEFAULT_MESSAGES[code]} (HTTP 400)`
  }
}

/** Every `status_code` of the envelope, each with its meaning (the spec's error table, in order). */
const statusCode: SchemaObject = {
  type: 'integer',
  description: 'Business code: 200 on success, otherwise the reason of the refusal.',
  oneOf: [
    { const: 200, title: 'Success (HTTP 200)' },
    ...Object.values(ErrorCode).map((code): SchemaObject => ({
      const: code,
      title: codeTitle(code),
    })),
    ...Object.entries(TRANSPORT_CODES).map(([code, title]): SchemaObject => ({
      const: Number(code),
      title,
    })),
  ],
}

const envelope: SchemaObject = {
  type: 'object',
  description:
    'The envelope of every JSON answer. Redirects (301/302) and the callbacks sent to merchants do not use it.',
  required: ['status_code', 'message', 'data', 'request_id'],
  properties: {
    status_code: ref('StatusCode'),
    message: string(
      'Response message; on a refusal it says in words what was wrong (the field, the rule)'
    ),
    data: { description: 'Payload; null on most refusals' },
    request_id: string('Server-generated request identifier, also sent as the X-Request-Id header'),
  },
  additionalProperties: false,
}

const validationErrors: SchemaObject = closedObject(
  {
    errors: {
      type: 'array',
      minItems: 1,
      description: 'One entry per field that failed its rule',
      items: closedObject({
        field: string('Field name'),
        message: string('What is wrong with it'),
        rule: string('The rule that failed (required, maxLength, regex, …)'),
      }),
    },
  },
  '`data` of a 400 whose parameters failed validation'
)

const orderStatus: SchemaObject = {
  type: 'integer',
  description: 'Order status',
  oneOf: [
    { const: 1, title: 'Waiting for payment' },
    { const: 2, title: 'Payment successful' },
    { const: 3, title: 'Expired' },
    { const: 4, title: 'Waiting for the payer to choose network and token (placeholder)' },
  ],
}

const tradeId = string(
  'Service transaction number: 22 letters and digits, the key to the cashier endpoints',
  {
    pattern: '^[A-Za-z0-9]{22}$',
    examples: ['Xb3kQ9vLm2Ph7TzR4nWc1A'],
  }
)
const orderId = string("Merchant's order number (unique per pid)", { minLength: 1, maxLength: 32 })
const fiatAmount: SchemaObject = {
  type: 'number',
  exclusiveMinimum: 0,
  description: 'Fiat amount submitted by the merchant',
}
const cryptoAmount: SchemaObject = {
  type: 'number',
  minimum: 0,
  description:
    'Crypto amount to pay, exactly (unique per address while the order lives); 0 for a placeholder',
}
const currency = string('Fiat currency, upper-case', {
  pattern: '^[A-Z]{3,10}$',
  examples: ['CNY'],
})
const token = string('Payment token, upper-case; empty for a placeholder', {
  pattern: '^[A-Z0-9]{0,16}$',
  examples: ['USDT'],
})
const network = string(
  'Payment network (a network of `supported_assets`); empty for a placeholder; `provider` for a hosted-provider order'
)
const receiveAddress = string(
  'Receiving address; empty for a placeholder; `PROVIDER` for a hosted-provider order'
)
const paymentType = ref('PaymentType')
const cashierUrl = string('The cashier URL: `{base_url}/pay/checkout-counter/{trade_id}`', {
  format: 'uri',
})

const createdOrder = closedObject(
  {
    trade_id: tradeId,
    order_id: orderId,
    amount: fiatAmount,
    currency,
    actual_amount: cryptoAmount,
    receive_address: receiveAddress,
    token,
    status: {
      type: 'integer',
      enum: [1, 4],
      description: '1 waiting for payment, or 4 for a placeholder (no token and network given)',
    },
    expiration_time: integer('End of the order life, seconds since the epoch'),
    payment_url: cashierUrl,
  },
  '`data` of the native create'
)

const cashierOrder = closedObject(
  {
    trade_id: tradeId,
    amount: fiatAmount,
    actual_amount: cryptoAmount,
    token,
    currency,
    receive_address: receiveAddress,
    network,
    status: ref('OrderStatus'),
    payment_type: paymentType,
    expiration_time: integer('End of the order life, milliseconds since the epoch'),
    redirect_url: string("Merchant's return URL (empty when none was given)"),
    payment_url: string(
      'The hosted provider link for a provider order; empty for an on-chain order'
    ),
    created_at: integer('Creation time, milliseconds since the epoch'),
    server_time: integer(
      'Server time of the answer, milliseconds since the epoch (for countdowns)'
    ),
    is_selected: {
      type: 'boolean',
      description:
        'False after the first completion of a placeholder parent; true once the payer selected that same target again',
    },
  },
  '`data` of the cashier init and of a switch: the order as the cashier shows it (times in milliseconds). It does not follow the payment: use the status endpoint'
)

/** The fields of an order and of its child in the native query (times in seconds). */
const queriedTargetFields: Record<string, SchemaObject> = {
  trade_id: tradeId,
  order_id: orderId,
  amount: fiatAmount,
  currency,
  actual_amount: cryptoAmount,
  token,
  network,
  receive_address: receiveAddress,
  status: ref('OrderStatus'),
  payment_type: paymentType,
  pay_provider: string(
    'The hosted payment provider of a provider order (`provider` for the bundled one), else empty'
  ),
  block_transaction_id: string(
    'On-chain transaction hash or provider payment number; empty until paid'
  ),
  created_at: integer('Creation time, seconds since the epoch'),
  expiration_time: integer('End of the order life, seconds since the epoch'),
  paid_at: {
    ...nullable({ type: 'integer' }),
    description: 'Payment time, seconds since the epoch; null until paid',
  },
}

const queriedTarget = closedObject(
  queriedTargetFields,
  'The payment target the payer switched to (a child order), with its own state'
)

const queriedOrder = closedObject(
  {
    ...queriedTargetFields,
    is_selected: { type: 'boolean', description: 'As in the cashier init' },
    redirect_url: string("Merchant's return URL (empty when none was given)"),
    payment_url: cashierUrl,
    child: {
      ...nullable(ref('QueriedTarget')),
      description: 'The child order, or null when the payer did not switch to another target',
    },
  },
  '`data` of the native query. A parent paid through its child carries the child’s payment details itself'
)

const orderState = closedObject(
  { trade_id: tradeId, status: ref('OrderStatus') },
  '`data` of check-status'
)

const submittedPayment = closedObject(
  {
    trade_id: tradeId,
    block_transaction_id: string('The transaction reference that paid the order, as recorded'),
    status: { const: 2, description: 'Always 2 (paid)' },
  },
  '`data` of submit-tx-hash'
)

const paymentUri = closedObject(
  {
    trade_id: tradeId,
    uri: string(
      "The wallet URI of the order's target with the amount (each family's scheme), or the hosted link of a provider order"
    ),
  },
  '`data` of payment-uri'
)

const explorerUrl = string(
  'Block explorer link of the transaction; empty when the chain has none configured, and for provider payments'
)

const paymentProgress = closedObject(
  {
    trade_id: tradeId,
    status: ref('OrderStatus'),
    sighting: {
      ...nullable(
        closedObject({
          reference: string('Transaction reference'),
          confirmations: integer('Confirmations so far (always below the requirement)', {
            minimum: 0,
          }),
          required_confirmations: integer('Confirmations the chain requires', { minimum: 0 }),
          seen_at: integer('When it was first seen, milliseconds since the epoch'),
          explorer_url: explorerUrl,
        })
      ),
      description: 'A transfer for the order seen on chain but not yet deep enough; null when none',
    },
    payment: {
      ...nullable(
        closedObject({
          reference: string('Transaction reference that paid the order'),
          explorer_url: explorerUrl,
        })
      ),
      description: 'The payment, once status is 2; null before',
    },
  },
  '`data` of payment-progress'
)

/** `data` of the config endpoint, with the sections the plugins answer (`PluginConfigSection.schema`). */
export function publicConfigSchema(sections: Record<string, SchemaObject>): SchemaObject {
  return closedObject(
    {
      supported_assets: {
        type: 'array',
        description:
          'Network and token combinations offered now: the chain is enabled, has a receiving wallet and an enabled token',
        items: closedObject({
          network: string('Network name'),
          display_name: string('Name shown to payers'),
          tokens: {
            type: 'array',
            items: string(undefined, { pattern: '^[A-Z0-9]{1,16}$' }),
            description: 'Token symbols, upper-case',
          },
        }),
      },
      site: closedObject(
        {
          cashier_name: string(),
          logo_url: string(),
          website_title: string(),
          support_link: string(),
          background_color: string(),
          background_image_url: string(),
        },
        "The cashier's look"
      ),
      ...sections,
      version: string('Service version label'),
    },
    '`data` of the config endpoint'
  )
}

/**
 * The payment types of this gateway's callback formats (`Native` and each
 * plugin format's own, served now or by a plugin turned off), as written in
 * an order: lower-case.
 */
export function paymentTypeSchema(types: string[]): SchemaObject {
  return string(
    'Callback format of the order: `native` (POST JSON, HMAC-SHA256), or a plugin format’s own (the document’s `webhooks` describe each served now)',
    { enum: types.map((type) => type.toLowerCase()) }
  )
}

/** The create request's `payment_type`: one of the formats' payment types, in any case. */
export function paymentTypeInputSchema(types: string[]): SchemaObject {
  const anyCase = (type: string) =>
    [...type].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join('')
  return string(
    'Callback format: `Native` when omitted; another format’s payment type (any case) for its callback, which may need a certain kind of pid (a refused one is answered 400). Signed when non-empty',
    { pattern: `^(${types.map(anyCase).join('|')})$` }
  )
}

const nativeSignature = string(
  'HMAC-SHA256 of the sorted `name=value` pairs of every other non-empty field joined by `&`, keyed with the secret_key of the pid: 64 lower-case hexadecimal characters',
  { pattern: '^[0-9a-f]{64}$' }
)

export const schemas: Record<string, SchemaObject> = {
  StatusCode: statusCode,
  Envelope: envelope,
  ValidationErrors: validationErrors,
  OrderStatus: orderStatus,
  TradeId: tradeId,
  NativeSignature: nativeSignature,
  CreatedOrder: createdOrder,
  CashierOrder: cashierOrder,
  QueriedOrder: queriedOrder,
  QueriedTarget: queriedTarget,
  OrderState: orderState,
  SubmittedPayment: submittedPayment,
  PaymentUri: paymentUri,
  PaymentProgress: paymentProgress,
}
