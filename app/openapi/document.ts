import type { OpenApiDocument } from '#openapi/openapi_types'
import { parameters, paths } from '#openapi/paths'
import { headers, responses } from '#openapi/responses'
import {
  paymentTypeInputSchema,
  paymentTypeSchema,
  publicConfigSchema,
  schemas,
} from '#openapi/schemas'
import pluginRegistry from '#plugin_host/plugin_registry'
import { nativeCallback, webhooks } from '#openapi/webhooks'
import { SERVICE_VERSION } from '#support/runtime/version'

const DESCRIPTION = `The merchant-facing API of this crypto payment gateway: the native flavour (JSON, HMAC-SHA256) under \`/payments/native/v1\`, the public cashier endpoints under \`/pay\`, and the payment-success callbacks sent to merchants (\`webhooks\`).

## Envelope and codes

Every JSON answer is the envelope \`{status_code, message, data, request_id}\` (schema \`Envelope\`). \`status_code\` is 200 on success; a refusal carries a business code with HTTP 400 (\`StatusCode\` lists them all with their meaning), a signature refusal 401. The gateway also answers, in the same envelope: an unknown route 404 (the former \`POST /api/v1/order/create-transaction\` and \`POST /payments/epusdt/v1/order/create-transaction\` are not registered), a body over 64 KB 413, too many requests 429 with \`Retry-After\`, and while its database cannot be reached 503 with \`Retry-After\` and \`status_code\` 400. Each operation lists exactly the codes it answers.

## Signing native requests (HMAC-SHA256)

1. Take every request parameter except \`signature\`; drop those that are empty strings or null.
2. Sort them by name in ascending byte order (case-sensitive) and join them as \`name=value\` pairs with \`&\`, values as sent (no URL encoding).
3. HMAC-SHA256 of that string keyed with the \`secret_key\` of the \`pid\`; send it as \`signature\`, 64 lower-case hexadecimal characters.

\`pid\` is always signed, \`payment_type\` when non-empty, and every extra field you send too. JSON numbers are signed in the server’s numeric format (100.00 sent as a JSON number is signed as \`100\`): send amounts as strings, or as a form, to sign exactly what you typed. The same rule verifies the native callback. A refusal is HTTP 401 with \`status_code\` 401, the same message for a wrong signature, an unknown or disabled pid and a client IP outside the key’s allow-list.

Example (an order the payer completes at the cashier, without token and network): secret \`demo-secret-please-change\`, string \`amount=100&currency=cny&notify_url=https://shop.example/notify&order_id=A-1001&pid=1000\`, signature \`5d97285cde028b5d232b61284c0011261a3c60e405ce0f345c17a09133db9ab2\`.

## Order status

1 waiting for payment, 2 paid, 3 expired, 4 waiting for the payer to choose network and token (an order created without \`token\` and \`network\`).

The hosted provider’s inbound notification is described in the README.`

/**
 * The OpenAPI 3.1 document of the merchant API, served at
 * GET /payments/native/v1/openapi.json. `servers` is the gateway's own
 * base URL (APP_URL), given by the caller at request time.
 */
export function openApiDocument(baseUrl: string): OpenApiDocument {
  const parts = pluginRegistry.openApiParts()
  const description = [DESCRIPTION, ...parts.flatMap((part) => part.description ?? [])]
  const paymentTypes = pluginRegistry.paymentTypes()
  return {
    openapi: '3.1.0',
    info: {
      title: 'Crypto payment gateway: merchant API',
      version: SERVICE_VERSION,
      summary:
        'Create and query orders, the public cashier endpoints, and the payment callbacks sent to merchants',
      description: description.join('\n\n'),
    },
    servers: [{ url: baseUrl.replace(/\/+$/, ''), description: 'This gateway (APP_URL)' }],
    tags: [
      {
        name: 'Native API',
        description:
          'Merchant server to gateway: signed order requests and the public configuration',
      },
      {
        name: 'Cashier',
        description: 'Payer’s browser to gateway: no signature, the trade_id is the key',
      },
      { name: 'Callbacks', description: 'Gateway to merchant server: payment success' },
    ],
    paths,
    webhooks: Object.assign({}, webhooks, ...parts.map((part) => part.webhooks ?? {})),
    components: {
      schemas: {
        ...schemas,
        PaymentType: paymentTypeSchema(paymentTypes),
        PaymentTypeInput: paymentTypeInputSchema(paymentTypes),
        PublicConfig: publicConfigSchema(pluginRegistry.configSectionSchemas()),
        NativeCallback: nativeCallback,
      },
      responses,
      parameters,
      headers,
    },
  }
}
