import type {
  MediaTypeObject,
  ParameterObject,
  PathItemObject,
  Reference,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from '#openapi/openapi_types'
import { JSON_TYPE, redirect, refusals, response, success, type Refusal } from '#openapi/responses'
import { ref } from '#openapi/schemas'

/**
 * The merchant-facing paths: the native API under /payments/native/v1 and
 * the public cashier endpoints under /pay, each with every answer it gives
 * (start/routes.ts and the controllers are the source; the contract test
 * requests each answer documented here and fails on any other).
 */

const FORM_TYPE = 'application/x-www-form-urlencoded'

const tradeIdParameter: Reference = { $ref: '#/components/parameters/TradeId' }

export const parameters: Record<string, ParameterObject> = {
  TradeId: {
    name: 'trade_id',
    in: 'path',
    required: true,
    description: 'The order’s trade_id (from the create answer or payment_url)',
    schema: { type: 'string', minLength: 1 },
    example: 'Xb3kQ9vLm2Ph7TzR4nWc1A',
  },
}

/** A scalar request field: what a flat JSON object or a form may carry. */
const scalar: SchemaObject = { type: ['string', 'number', 'boolean', 'null'] }

/**
 * A request body accepted as JSON (a flat object of scalars) and as a
 * form. In a form every value is text, so numbers are described for JSON
 * only.
 */
function flatBody(
  description: string,
  fields: Record<string, SchemaObject>,
  rules: Pick<SchemaObject, 'required' | 'dependentRequired' | 'anyOf'>,
  jsonOnly: Record<string, SchemaObject> = {}
): RequestBodyObject {
  const media = (
    properties: Record<string, SchemaObject>,
    extra: SchemaObject
  ): MediaTypeObject => ({
    schema: { type: 'object', properties, ...rules, additionalProperties: extra },
  })
  const jsonFields = { ...fields }
  for (const [name, schema] of Object.entries(jsonOnly)) jsonFields[name] = schema
  const formFields = { ...fields }
  for (const [name, schema] of Object.entries(jsonOnly)) formFields[name] = asText(schema)
  return {
    description,
    required: true,
    content: {
      [JSON_TYPE]: media(jsonFields, scalar),
      [FORM_TYPE]: media(formFields, { type: 'string' }),
    },
  }
}

/** The same field as form text: its pattern and words, without the JSON number's bounds. */
function asText({ pattern, description, examples }: SchemaObject): SchemaObject {
  return {
    type: 'string',
    ...(pattern ? { pattern } : {}),
    ...(description ? { description } : {}),
    ...(examples ? { examples } : {}),
  }
}

const FIAT_AMOUNT_TEXT = '^[0-9]+(\\.[0-9]{1,4})?$'

const createFields: Record<string, SchemaObject> = {
  pid: {
    type: 'string',
    maxLength: 32,
    description: 'Merchant PID: selects the signing key; signed',
    examples: ['1000'],
  },
  order_id: {
    type: 'string',
    minLength: 1,
    maxLength: 32,
    description: 'Merchant order number: unique per pid (a repeat is 10002); no control characters',
  },
  currency: {
    type: 'string',
    pattern: '^[A-Za-z]{3,10}$',
    description: 'Fiat currency, any case (cny, usd…)',
    examples: ['cny'],
  },
  token: {
    type: 'string',
    pattern: '^[A-Za-z0-9]{1,16}$',
    description:
      'Crypto token, any case; given together with network, or both omitted (placeholder order, status 4)',
    examples: ['usdt'],
  },
  network: {
    type: 'string',
    pattern: '^[A-Za-z0-9-]{1,32}$',
    description:
      'Network name (see `supported_assets` of the config endpoint); given together with token, or both omitted',
  },
  notify_url: {
    type: 'string',
    format: 'uri',
    maxLength: 2048,
    description: 'http(s) URL of the payment-success callback',
  },
  redirect_url: {
    type: 'string',
    format: 'uri',
    maxLength: 2048,
    description: 'http(s) URL the payer returns to after paying',
  },
  name: { type: 'string', maxLength: 255, description: 'Product or order name' },
  payment_type: ref('PaymentTypeInput'),
  signature: ref('NativeSignature'),
}

const SIGNING_TEXT =
  'Signed (HMAC-SHA256, see the `signature` field and the document’s introduction). Empty strings and nulls count as absent, for the signature as for the rules.'

const createOrder: PathItemObject = {
  post: {
    operationId: 'createNativeTransaction',
    tags: ['Native API'],
    summary: 'Create an order',
    description: `${SIGNING_TEXT} With token and network: an order waiting for payment (status 1) with its address and exact crypto amount. Without both: a placeholder (status 4) whose payer chooses in the cashier. Limited per pid (\`rate_limit.create_per_minute\`); requests that fail the signature count per client IP.`,
    requestBody: flatBody(
      'The order. JSON numbers are signed as the server prints them (100.00 is signed as 100): send amounts as strings, or as a form, to sign exactly what you typed.',
      createFields,
      {
        required: ['pid', 'order_id', 'currency', 'amount', 'notify_url', 'signature'],
        dependentRequired: { token: ['network'], network: ['token'] },
      },
      {
        amount: {
          type: ['number', 'string'],
          exclusiveMinimum: 0.01,
          exclusiveMaximum: 10_000_000_000,
          pattern: FIAT_AMOUNT_TEXT,
          description:
            'Fiat amount: greater than 0.01, at most 4 decimals (a plain decimal: no sign, no exponent)',
          examples: ['100.00'],
        },
      }
    ),
    responses: {
      '200': success('The order', 'CreatedOrder'),
      '400': refusals([
        [
          400,
          'a field missing or invalid (`data.errors` names each), token without network or the reverse, a `payment_type` whose callback format refuses the pid (e.g. one that needs a numeric pid)',
        ],
        [10002, 'this pid already used the order_id'],
        [10003, 'no receiving wallet on the network'],
        [
          10004,
          'the amount is below one unit of the token, or needs more digits than are kept exactly',
        ],
        [10005, 'every unique amount step is taken on every wallet of the network'],
        [10006, 'no usable exchange rate for the currency and token'],
        [
          10009,
          'the body cannot be parsed (not a flat JSON object, a field given twice, multipart)',
        ],
        [10014, 'the chain is not enabled'],
        [10016, 'unknown network, or a token the network does not offer'],
      ]),
      '401': response('SignatureRefused'),
      '413': response('BodyTooLarge'),
      '429': response('TooManyRequests'),
      '503': response('DatabaseUnavailable'),
    },
  },
}

const queryOrder: PathItemObject = {
  post: {
    operationId: 'queryNativeOrder',
    tags: ['Native API'],
    summary: 'Query an order',
    description: `${SIGNING_TEXT} Names one of the pid’s own (parent) orders by trade_id or order_id (trade_id wins when both are given). Limited per pid on its own budget (\`rate_limit.query_per_minute\`), apart from creates.`,
    requestBody: flatBody(
      'The order to look up',
      {
        pid: createFields.pid,
        trade_id: { type: 'string', maxLength: 64, description: 'The order’s trade_id' },
        order_id: {
          type: 'string',
          minLength: 1,
          maxLength: 32,
          description: 'The merchant’s order number',
        },
        signature: ref('NativeSignature'),
      },
      {
        required: ['pid', 'signature'],
        // Each branch names the field it requires (an empty string counts as absent).
        anyOf: [
          { properties: { trade_id: { type: 'string', minLength: 1 } }, required: ['trade_id'] },
          { properties: { order_id: { type: 'string', minLength: 1 } }, required: ['order_id'] },
        ],
      }
    ),
    responses: {
      '200': success(
        'The order, and the payment target the payer switched to since',
        'QueriedOrder'
      ),
      '400': refusals([
        [400, 'a field missing or invalid, or neither trade_id nor order_id given'],
        [
          10008,
          'no such order of this pid (an order of another pid, or a child’s trade_id, is unknown too)',
        ],
        [10009, 'the body cannot be parsed'],
      ]),
      '401': response('SignatureRefused'),
      '413': response('BodyTooLarge'),
      '429': response('TooManyRequests'),
      '503': response('DatabaseUnavailable'),
    },
  },
}

const config: PathItemObject = {
  get: {
    operationId: 'getPublicConfig',
    tags: ['Native API'],
    summary: 'Offered networks and tokens, cashier look, the plugins’ sections, version',
    description:
      'No signature. Read `supported_assets` rather than assuming a fixed list of networks.',
    responses: {
      '200': success('The public configuration', 'PublicConfig'),
      '503': response('DatabaseUnavailable'),
    },
  },
}

const openApi: PathItemObject = {
  get: {
    operationId: 'getOpenApiDocument',
    tags: ['Native API'],
    summary: 'This document',
    description:
      'OpenAPI 3.1 description of the merchant API, `servers` set to this gateway’s APP_URL. No signature; cacheable (Cache-Control, ETag; If-None-Match answers 304).',
    responses: {
      '200': {
        description: 'The OpenAPI document',
        headers: {
          'Cache-Control': { required: true, schema: { type: 'string', pattern: 'max-age=\\d+' } },
          'ETag': { required: true, schema: { type: 'string', minLength: 3 } },
        },
        content: {
          [JSON_TYPE]: {
            schema: {
              type: 'object',
              required: ['openapi', 'info', 'servers', 'paths', 'webhooks', 'components'],
              properties: {
                openapi: { const: '3.1.0' },
                info: { type: 'object' },
                servers: { type: 'array', minItems: 1 },
                paths: { type: 'object' },
                webhooks: { type: 'object' },
                components: { type: 'object' },
              },
            },
          },
        },
      },
      '304': {
        description: 'Not modified: the If-None-Match ETag is current',
        headers: { ETag: { required: true, schema: { type: 'string', minLength: 3 } } },
      },
    },
  },
}

/** Answers of every /pay endpoint that reads an order: rate limited per client IP, database needed. */
const cashierCommon: Record<string, Reference> = {
  '429': response('TooManyRequests'),
  '503': response('DatabaseUnavailable'),
}

const UNKNOWN_ORDER: Refusal = [10008, 'no order has this trade_id']
const CASHIER_TEXT =
  'No signature: the trade_id is the key. Limited per client IP (`rate_limit.cashier_per_minute`).'

const cashierGet = (
  operationId: string,
  summary: string,
  description: string,
  ok: ResponseObject,
  codes: Refusal[] = [UNKNOWN_ORDER]
): PathItemObject => ({
  get: {
    operationId,
    tags: ['Cashier'],
    summary,
    description: `${CASHIER_TEXT} ${description}`,
    parameters: [tradeIdParameter],
    responses: { '200': ok, '400': refusals(codes), ...cashierCommon },
  },
})

const switchFields: Record<string, SchemaObject> = {
  trade_id: { type: 'string', maxLength: 64, description: 'The parent order’s trade_id' },
  token: {
    type: 'string',
    pattern: '^[A-Za-z0-9]{1,16}$',
    description: 'Token, any case',
    examples: ['usdt'],
  },
  network: {
    type: 'string',
    pattern: '^[A-Za-z0-9-]{1,32}$',
    description: 'A network of `supported_assets`, or `provider` for the hosted provider’s page',
  },
}

export const paths: Record<string, PathItemObject> = {
  '/payments/native/v1/order/create-transaction': createOrder,
  '/payments/native/v1/order/query': queryOrder,
  '/payments/native/v1/config': config,
  '/payments/native/v1/openapi.json': openApi,
  '/pay/checkout-counter/{trade_id}': {
    get: {
      operationId: 'openCashier',
      tags: ['Cashier'],
      summary: 'The cashier URL (payment_url): 301 to the payer’s page',
      description: `${CASHIER_TEXT} Always redirects to \`/cashier/{trade_id}\` (an HTML page; an unknown trade_id shows a not-found page there).`,
      parameters: [tradeIdParameter],
      responses: {
        '301': redirect('To `/cashier/{trade_id}`'),
        '429': response('TooManyRequests'),
      },
    },
  },
  '/pay/checkout-counter-resp/{trade_id}': cashierGet(
    'getCashierOrder',
    'Cashier init data',
    'The order as the cashier shows it (times in milliseconds, server_time for countdowns). A placeholder (status 4) has empty token, network and address: show a selector, then call switch-network. It does not follow the payment: use check-status.',
    success('The order', 'CashierOrder')
  ),
  '/pay/check-status/{trade_id}': cashierGet(
    'checkStatus',
    'Payment status',
    'Poll it to follow the payment.',
    success('The order’s status', 'OrderState')
  ),
  '/pay/submit-tx-hash/{trade_id}': {
    post: {
      operationId: 'submitTxHash',
      tags: ['Cashier'],
      summary: 'The payer reports the transaction that paid',
      description: `${CASHIER_TEXT} The order’s rules are checked before any chain lookup (on-chain order, status 1, not expired, not a provider order); then the transaction is verified on chain (recipient, token, exact amount, success, confirmations, made within the order’s life) and the order is paid. References: a plain transaction hash, or another form the chain’s family accepts (docs/chains.md lists them). Also limited per order, from any IP: \`rate_limit.submit_per_order\` submissions per \`rate_limit.submit_window_minutes\` (429 beyond); a reference that failed is answered again from memory, without a chain request, for \`chains.verify_failed_cache_minutes\`.`,
      parameters: [tradeIdParameter],
      requestBody: flatBody(
        'The transaction reference',
        {
          block_transaction_id: {
            type: 'string',
            minLength: 8,
            maxLength: 255,
            description: 'Transaction hash or reference',
          },
        },
        { required: ['block_transaction_id'] }
      ),
      responses: {
        '200': success('The order is paid', 'SubmittedPayment'),
        '400': refusals([
          [
            400,
            'the reference is missing or malformed, the transaction does not pay this order (the message says why), or the order is a provider order',
          ],
          [10007, 'the transaction already paid another order'],
          UNKNOWN_ORDER,
          [10009, 'the body cannot be parsed'],
          [10010, 'the order was paid by another transaction meanwhile'],
          [
            10013,
            'the order is not waiting for payment: a placeholder still choosing, paid, expired or past its life',
          ],
        ]),
        '413': response('BodyTooLarge'),
        ...cashierCommon,
      },
    },
  },
  '/pay/switch-network': {
    post: {
      operationId: 'switchNetwork',
      tags: ['Cashier'],
      summary: 'The payer chooses or changes the payment target',
      description: `${CASHIER_TEXT} A placeholder (status 4) is completed in place (same trade_id; on chain, or as a provider order whose payment_url is the hosted link). On a waiting parent, the same target returns it (marking a completed placeholder selected); another target creates its single child order, returned with its own trade_id.`,
      requestBody: flatBody('The parent order and the target', switchFields, {
        required: ['trade_id', 'token', 'network'],
      }),
      responses: {
        '200': success('The order to pay (the parent, or its child)', 'CashierOrder'),
        '400': refusals([
          [
            400,
            'a field missing or invalid, or the hosted provider did not create a payment link (the message says why)',
          ],
          [10003, 'no receiving wallet on the network'],
          [10004, 'the amount is below one unit of the token'],
          [10005, 'every unique amount step is taken on every wallet of the network'],
          [10006, 'no usable exchange rate for the order’s currency and the token'],
          UNKNOWN_ORDER,
          [10009, 'the body cannot be parsed'],
          [10010, 'the order’s status changed meanwhile (e.g. paid)'],
          [10011, 'the order already has a child order for another target'],
          [10012, 'the trade_id is a child order’s'],
          [10013, 'the order is not waiting for payment (status 2 or 3, or past its life)'],
          [10014, 'the chain is not enabled'],
          [10016, 'unknown network, or a token the network does not offer'],
          [10017, 'the hosted provider is not enabled'],
          [10018, 'the hosted provider’s configuration is incomplete'],
          [10019, 'the hosted provider does not offer this token'],
        ]),
        '413': response('BodyTooLarge'),
        ...cashierCommon,
      },
    },
  },
  '/pay/payment-uri/{trade_id}': cashierGet(
    'getPaymentUri',
    'Wallet URI for the QR code',
    'Beside the interface spec: the wallet URI of the order’s target with the amount, built by the chain’s family (the hosted link for a provider order).',
    success('The URI', 'PaymentUri'),
    [UNKNOWN_ORDER, [10013, 'a placeholder: no network and token chosen yet']]
  ),
  '/pay/payment-progress/{trade_id}': cashierGet(
    'getPaymentProgress',
    'What the chain watcher has seen of the payment',
    'Beside the interface spec: a transfer seen but not yet deep enough (“payment seen, 3 of 12 confirmations”), and the paying transaction once paid, with explorer links. A parent shows its child’s.',
    success('Progress', 'PaymentProgress')
  ),
  '/pay/return/{trade_id}': {
    get: {
      operationId: 'returnToShop',
      tags: ['Cashier'],
      summary: 'The payer’s way back to the shop',
      description: `${CASHIER_TEXT} Once the order (or the child that paid it) is paid and has a return address: 302 to it: native orders to their redirect_url as given, an order of a plugin’s callback format to the address that format writes (e.g. with its signed return fields added). Otherwise (not paid yet, no return address, unknown trade_id): 302 back to \`/cashier/{trade_id}\`.`,
      parameters: [tradeIdParameter],
      responses: {
        '302': redirect('To the shop’s return address, or back to the cashier'),
        '429': response('TooManyRequests'),
      },
    },
  },
}
