import type { PathItemObject, ResponseObject, SchemaObject } from '#openapi/openapi_types'
import { JSON_TYPE } from '#openapi/responses'
import { closedObject, ref } from '#openapi/schemas'

/**
 * The payment-success callbacks the gateway sends to an order's
 * notify_url, as OpenAPI webhooks: the merchant implements them. The
 * native one is here (app/callbacks/native_callback_format.ts); a plugin's
 * callback format describes its own (`openapi.webhooks` of its plugin).
 */

/** How every callback is retried (a plugin format's description starts with it too). */
export const CALLBACK_RETRIES =
  'Sent once the order is paid (status 2), never for other states. Until acknowledged it is retried: after the first failure up to `order_notice_max_retry` times, with exponential backoff from `callback_retry_base_seconds`, each interval at most 5 minutes. Delivery is at-least-once: the same payment may be notified twice, so handle it idempotently (by trade_id).'

/** The merchant's acknowledgement, the same for every callback format. */
export const callbackAcknowledged: Record<string, ResponseObject> = {
  '200': {
    description:
      'Acknowledged, when the body is `ok` or `success` (any case, surrounding white space ignored). Any other answer (status, body, time-out) is a failure and is retried.',
    content: {
      'text/plain': {
        schema: { type: 'string', pattern: '^\\s*([Oo][Kk]|[Ss][Uu][Cc][Cc][Ee][Ss][Ss])\\s*$' },
      },
    },
  },
}

export const nativeCallback: SchemaObject = closedObject(
  {
    pid: {
      type: 'string',
      description:
        'PID of the API key owning the order: look up its secret_key to verify the signature',
    },
    trade_id: { type: 'string', pattern: '^[A-Za-z0-9]{22}$', description: 'Transaction number' },
    order_id: { type: 'string', maxLength: 32, description: 'Merchant order number' },
    amount: { type: 'number', description: 'Fiat amount submitted' },
    actual_amount: { type: 'number', description: 'Crypto amount received' },
    receive_address: {
      type: 'string',
      description: 'Receiving address (`PROVIDER` for a hosted-provider payment)',
    },
    token: { type: 'string', description: 'Payment token' },
    block_transaction_id: {
      type: 'string',
      minLength: 1,
      description: 'On-chain hash or the provider’s payment number',
    },
    signature: ref('NativeSignature'),
    status: { const: 2, description: 'Always 2' },
  },
  'Body of the native callback. Verify `signature` like a request’s: HMAC-SHA256 over the sorted name=value pairs of every other non-empty field (numbers as printed in the JSON, e.g. 13.8) joined by &, keyed with the secret_key of the pid'
)

export const webhooks: Record<string, PathItemObject> = {
  nativePaymentCallback: {
    post: {
      operationId: 'nativePaymentCallback',
      tags: ['Callbacks'],
      summary: 'Payment success, native orders: POST JSON to notify_url',
      description: CALLBACK_RETRIES,
      requestBody: { required: true, content: { [JSON_TYPE]: { schema: ref('NativeCallback') } } },
      responses: callbackAcknowledged,
    },
  },
}
