import env from '#start/env'
import assetCatalog from '#services/asset_catalog'
import pluginRegistry from '#plugin_host/plugin_registry'
import apiKeyAdmin from '#services/operators/api_key_admin'
import type { I18n } from '@adonisjs/i18n'
import type { PluginIntegrationSection } from '#plugin_host/gateway_plugin'

/**
 * Copy-ready integration examples for one API key: creating an order on
 * the native endpoint (curl with a shell HMAC, PHP, Node) and verifying
 * the native callback (PHP, Node). The secret is never written into them:
 * they read it from the GATEWAY_SECRET environment variable, so the
 * integration page can be shown, copied and pasted without leaking it
 * (the console shows a secret once, when it is created or rotated).
 * tests/functional/admin/integration_examples.spec.ts runs every one of
 * them against the gateway.
 */
export const SECRET_VARIABLE = 'GATEWAY_SECRET'

export const NATIVE_CREATE_PATH = '/payments/native/v1/order/create-transaction'
export const NATIVE_CONFIG_PATH = '/payments/native/v1/config'
export const NATIVE_QUERY_PATH = '/payments/native/v1/order/query'
export const NATIVE_OPENAPI_PATH = '/payments/native/v1/openapi.json'
/** Where the examples tell the gateway to send the callback (the merchant replaces it). */
export const EXAMPLE_NOTIFY_URL = 'https://shop.example/payment/notify'
export const EXAMPLE_REDIRECT_URL = 'https://shop.example/order/complete'

export type IntegrationExample = {
  id: 'shell' | 'php' | 'node'
  title: string
  /** Language of the code block (for the page's label). */
  language: string
  /** File name the code is meant to be saved as. */
  filename: string
  /** How to run it (the secret left for the merchant to fill in). */
  run: string
  code: string
}

export type IntegrationEndpoint = { name: string; method: string; url: string; signed: string }

/** A plugin's part of the guide for one key: its view (`<plugin>::…`) and what the view shows. */
export type IntegrationSection = { id: string; view: string; data: Record<string, unknown> }

export type IntegrationGuide = {
  pid: string
  baseUrl: string
  secretVariable: string
  endpoints: IntegrationEndpoint[]
  /** The token and network the create examples ask for; null: a placeholder order (payer chooses). */
  asset: { token: string; network: string } | null
  createExamples: IntegrationExample[]
  callbackExamples: IntegrationExample[]
  /**
   * What the enabled plugins add (an order flavour's own front door and
   * its URLs), each shown by its own view.
   */
  sections: IntegrationSection[]
  /** Moving a shop from epusdt or BEpusdt to the native API: what to change, with this installation's URLs. */
  migration: MigrationGuide
}

/** One change a shop's epusdt / BEpusdt plugin needs: what, from, to. */
export type MigrationStep = { what: string; before: string; after: string }

export type MigrationGuide = { createUrl: string; queryUrl: string; steps: MigrationStep[] }

/**
 * The line-by-line changes of an epusdt or BEpusdt plugin (dujiaoka's
 * EpusdtController and the like), as docs/migration.md lists them.
 */
export function migrationSteps(baseUrl: string, pid: string): MigrationStep[] {
  return [
    {
      what: 'Create URL',
      before: '{epusdt}/api/v1/order/create-transaction',
      after: `${baseUrl}${NATIVE_CREATE_PATH}`,
    },
    { what: 'pid', before: 'not sent', after: `pid=${pid} in every request, signed` },
    {
      what: 'currency',
      before: 'always CNY, not sent',
      after: 'currency=cny (or usd, eur … any currency with a rate)',
    },
    {
      what: 'Coin',
      before: 'trade_type usdt.<chain standard> … (BEpusdt)',
      after:
        'token=usdt with network=<a network of supported_assets>, or neither (the payer chooses)',
    },
    {
      what: 'Signature',
      before: 'md5(sorted name=value pairs joined by & + token)',
      after:
        'hash_hmac(sha256, sorted name=value pairs joined by &, secret): 64 lower-case hex in signature',
    },
    {
      what: 'Receiving address',
      before: 'data.token',
      after: 'data.receive_address (data.token is the coin, USDT)',
    },
    {
      what: 'Expiry',
      before: 'data.expiration_time: a duration',
      after: 'data.expiration_time: seconds since the epoch',
    },
    {
      what: 'Callback check',
      before: 'MD5 of the POSTed fields with the token',
      after:
        "HMAC-SHA256 of the JSON body's fields but signature (an MD5 check refuses every callback); answer ok or success",
    },
  ]
}

export type GuideOptions = {
  /** Base address of the gateway; default APP_URL. */
  baseUrl?: string
  /** Token and network to create orders for; default the first supported asset, null: placeholder. */
  asset?: { token: string; network: string } | null
}

/** A field of the example order: a fixed value, or an expression per language (unique order ids). */
type ExampleField =
  { name: string; value: string } | { name: string; shell: string; php: string; node: string }

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`
const phpQuote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
const jsQuote = (text: string) => JSON.stringify(text)

function exampleFields(pid: string, asset: IntegrationGuide['asset']): ExampleField[] {
  return [
    { name: 'pid', value: pid },
    {
      name: 'order_id',
      shell: 'order-$(date +%s)-$RANDOM',
      php: "'order-' . time() . '-' . random_int(1000, 9999)",
      node: '`order-${Date.now()}-${randomInt(1000, 10000)}`',
    },
    { name: 'currency', value: 'cny' },
    { name: 'amount', value: '10.00' },
    ...(asset
      ? [
          { name: 'token', value: asset.token },
          { name: 'network', value: asset.network },
        ]
      : []),
    { name: 'notify_url', value: EXAMPLE_NOTIFY_URL },
    { name: 'redirect_url', value: EXAMPLE_REDIRECT_URL },
    { name: 'name', value: 'Example order' },
  ]
}

function assetComment(asset: IntegrationGuide['asset'], prefix: string): string {
  return asset
    ? `${prefix} Pays in ${asset.token} on ${asset.network}; without token and network the payer chooses in the cashier.`
    : `${prefix} No token and network: the payer chooses them in the cashier (the gateway has no payable asset yet).`
}

function shellExample(
  baseUrl: string,
  pid: string,
  fields: ExampleField[],
  asset: IntegrationGuide['asset']
): string {
  const lines = fields.map((field) =>
    'value' in field
      ? `  ${shellQuote(`${field.name}=${field.value}`)}`
      : `  "${field.name}=${field.shell}"`
  )
  return `#!/usr/bin/env bash
# Creates an order as pid ${pid} on the native API (HMAC-SHA256 signature).
${assetComment(asset, '#')}
set -euo pipefail

GATEWAY_URL=${shellQuote(baseUrl)}
SECRET="\${${SECRET_VARIABLE}:?Set ${SECRET_VARIABLE} to the secret key of pid ${pid}}"

# Every field sent, as name=value, values exactly as sent (leave empty ones out).
FIELDS=(
${lines.join('\n')}
)

# The signature: the fields sorted by name (byte order), joined with &,
# HMAC-SHA256 keyed with the secret, as 64 lower-case hex digits.
SIGN_STRING=$(printf '%s\\n' "\${FIELDS[@]}" | LC_ALL=C sort -t= -k1,1 | paste -sd'&' -)
SIGNATURE=$(printf '%s' "$SIGN_STRING" | openssl dgst -sha256 -hmac "$SECRET" | awk '{print $NF}')

# Sent form-encoded: curl encodes each value; the gateway checks the decoded text.
ARGS=()
for field in "\${FIELDS[@]}"; do ARGS+=(--data-urlencode "$field"); done
RESPONSE=$(curl -sS "$GATEWAY_URL${NATIVE_CREATE_PATH}" \\
  -H 'Accept: application/json' "\${ARGS[@]}" --data-urlencode "signature=$SIGNATURE")
echo "$RESPONSE"
# status_code 200: data.payment_url is the cashier page to send the payer to.
case "$RESPONSE" in *'"status_code":200'*) ;; *) exit 1 ;; esac
`
}

function phpExample(
  baseUrl: string,
  pid: string,
  fields: ExampleField[],
  asset: IntegrationGuide['asset']
): string {
  const width = Math.max(...fields.map((field) => field.name.length)) + 2
  const lines = fields.map((field) => {
    const key = `'${field.name}'`.padEnd(width)
    return `    ${key} => ${'value' in field ? phpQuote(field.value) : field.php},`
  })
  return `<?php
// Creates an order as pid ${pid} on the native API (HMAC-SHA256 signature).
${assetComment(asset, '//')}

$gatewayUrl = ${phpQuote(baseUrl)};
$secret = getenv('${SECRET_VARIABLE}');
if ($secret === false || $secret === '') {
    fwrite(STDERR, "Set ${SECRET_VARIABLE} to the secret key of pid ${pid}\\n");
    exit(1);
}

// Values as strings: they are signed exactly as sent.
$fields = [
${lines.join('\n')}
];

// The signature: non-empty fields sorted by name (byte order), name=value
// joined with &, HMAC-SHA256 keyed with the secret, lower-case hex.
$signed = array_filter($fields, fn ($value) => $value !== '' && $value !== null);
ksort($signed, SORT_STRING);
$pairs = [];
foreach ($signed as $name => $value) {
    $pairs[] = $name . '=' . $value;
}
$fields['signature'] = hash_hmac('sha256', implode('&', $pairs), $secret);

$context = stream_context_create(['http' => [
    'method' => 'POST',
    'header' => "Content-Type: application/x-www-form-urlencoded\\r\\nAccept: application/json\\r\\n",
    'content' => http_build_query($fields),
    'ignore_errors' => true,
    'timeout' => 20,
]]);
$response = file_get_contents($gatewayUrl . '${NATIVE_CREATE_PATH}', false, $context);
$result = json_decode((string) $response, true);
if (!is_array($result) || ($result['status_code'] ?? null) !== 200) {
    fwrite(STDERR, 'Refused: ' . $response . "\\n");
    exit(1);
}
// Send the payer to $result['data']['payment_url'].
echo $response, "\\n";
`
}

function nodeExample(
  baseUrl: string,
  pid: string,
  fields: ExampleField[],
  asset: IntegrationGuide['asset']
): string {
  const lines = fields.map(
    (field) => `  ${field.name}: ${'value' in field ? jsQuote(field.value) : field.node},`
  )
  return `// Creates an order as pid ${pid} on the native API (HMAC-SHA256 signature).
${assetComment(asset, '//')}
// Node.js 18 or later, no packages.
import { createHmac, randomInt } from 'node:crypto'

const gatewayUrl = ${jsQuote(baseUrl)}
const secret = process.env.${SECRET_VARIABLE}
if (!secret) {
  console.error('Set ${SECRET_VARIABLE} to the secret key of pid ${pid}')
  process.exit(1)
}

// Amounts as strings: a JSON number is signed as the gateway prints it (10.00 as 10).
const fields = {
${lines.join('\n')}
}

// The signature: non-empty fields sorted by name, name=value joined with &,
// HMAC-SHA256 keyed with the secret, lower-case hex.
const message = Object.keys(fields)
  .filter((name) => fields[name] !== '' && fields[name] !== null && fields[name] !== undefined)
  .sort()
  .map((name) => \`\${name}=\${fields[name]}\`)
  .join('&')
const signature = createHmac('sha256', secret).update(message, 'utf8').digest('hex')

const response = await fetch(\`\${gatewayUrl}${NATIVE_CREATE_PATH}\`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json' },
  body: JSON.stringify({ ...fields, signature }),
})
const result = await response.json()
if (result.status_code !== 200) {
  console.error('Refused:', JSON.stringify(result))
  process.exit(1)
}
// Send the payer to result.data.payment_url.
console.log(JSON.stringify(result))
`
}

function phpCallbackExample(pid: string): string {
  return `<?php
// notify.php: receives the gateway's payment callback for pid ${pid} (POST, JSON),
// checks its signature and acknowledges it with "success".
$secret = getenv('${SECRET_VARIABLE}');
$body = json_decode((string) file_get_contents('php://input'), true);
if ($secret === false || $secret === '' || !is_array($body) || !is_string($body['signature'] ?? null)) {
    http_response_code(400);
    exit('bad request');
}

// Same rule as requests: every non-empty field except signature, sorted by
// name, name=value joined with &; numbers as JSON prints them.
$fields = $body;
unset($fields['signature']);
ksort($fields, SORT_STRING);
$pairs = [];
foreach ($fields as $name => $value) {
    if ($value === '' || $value === null) {
        continue;
    }
    $pairs[] = $name . '=' . (is_string($value) ? $value : json_encode($value));
}
$expected = hash_hmac('sha256', implode('&', $pairs), $secret);
if (!hash_equals($expected, strtolower($body['signature']))) {
    http_response_code(401);
    exit('bad signature');
}

if (strncmp((string) $body['trade_id'], 'TEST-', 5) === 0) {
    // A test callback sent from the gateway's console: acknowledge it, change nothing.
    exit('success');
}
// Mark order $body['order_id'] paid here. Callbacks can arrive more than
// once: do it only if it is not paid yet, then answer success.
echo 'success';
`
}

function nodeCallbackExample(pid: string): string {
  return `// notify.mjs: receives the gateway's payment callback for pid ${pid} (POST, JSON),
// checks its signature and acknowledges it with "success". Node.js 18 or later.
import { createServer } from 'node:http'
import { createHmac, timingSafeEqual } from 'node:crypto'

const secret = process.env.${SECRET_VARIABLE}
if (!secret) {
  console.error('Set ${SECRET_VARIABLE} to the secret key of pid ${pid}')
  process.exit(1)
}

// Same rule as requests: every non-empty field except signature, sorted by
// name, name=value joined with &; numbers as JSON prints them.
function signatureIsValid(body) {
  if (typeof body?.signature !== 'string') return false
  const message = Object.keys(body)
    .filter((name) => name !== 'signature' && body[name] !== '' && body[name] !== null)
    .sort()
    .map((name) => \`\${name}=\${typeof body[name] === 'string' ? body[name] : JSON.stringify(body[name])}\`)
    .join('&')
  const expected = createHmac('sha256', secret).update(message, 'utf8').digest()
  const given = Buffer.from(body.signature, 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

createServer(async (request, response) => {
  let raw = ''
  for await (const chunk of request) raw += chunk
  let body
  try {
    body = JSON.parse(raw)
  } catch {
    return response.writeHead(400).end('bad request')
  }
  if (!signatureIsValid(body)) return response.writeHead(401).end('bad signature')
  if (String(body.trade_id).startsWith('TEST-')) {
    // A test callback sent from the gateway's console: acknowledge it, change nothing.
    return response.writeHead(200).end('success')
  }
  // Mark order body.order_id paid here. Callbacks can arrive more than once:
  // do it only if it is not paid yet, then answer success.
  response.writeHead(200).end('success')
}).listen(Number(process.env.PORT ?? 8080))
`
}

/** The examples themselves, for a key and a base address (no database). */
export function renderGuide(input: {
  pid: string
  baseUrl: string
  asset: IntegrationGuide['asset']
  /** The enabled plugins' sections (default: none); `i18n`: their words in the admin's language. */
  sections?: PluginIntegrationSection[]
  i18n?: I18n
}): IntegrationGuide {
  const baseUrl = input.baseUrl.replace(/\/+$/, '')
  const { pid, asset } = input
  const context = { baseUrl, pid, i18n: input.i18n }
  const plugins = input.sections ?? []
  const fields = exampleFields(pid, asset)
  const run = (command: string) => `${SECRET_VARIABLE}='<secret of pid ${pid}>' ${command}`
  return {
    pid,
    baseUrl,
    secretVariable: SECRET_VARIABLE,
    endpoints: [
      {
        name: 'Create an order',
        method: 'POST',
        url: `${baseUrl}${NATIVE_CREATE_PATH}`,
        signed: 'HMAC-SHA256 in the signature field',
      },
      {
        name: 'Query an order',
        method: 'POST',
        url: `${baseUrl}${NATIVE_QUERY_PATH}`,
        signed: 'HMAC-SHA256 in the signature field',
      },
      {
        name: 'Networks and tokens offered',
        method: 'GET',
        url: `${baseUrl}${NATIVE_CONFIG_PATH}`,
        signed: 'none',
      },
      {
        name: 'This API as OpenAPI 3.1 (Postman, Insomnia, code generators)',
        method: 'GET',
        url: `${baseUrl}${NATIVE_OPENAPI_PATH}`,
        signed: 'none',
      },
      ...plugins.flatMap((section) => section.endpoints?.(context) ?? []),
    ],
    asset,
    createExamples: [
      {
        id: 'shell',
        title: 'curl and a shell HMAC',
        language: 'bash',
        filename: 'create_order.sh',
        run: run('bash create_order.sh'),
        code: shellExample(baseUrl, pid, fields, asset),
      },
      {
        id: 'php',
        title: 'PHP',
        language: 'php',
        filename: 'create_order.php',
        run: run('php create_order.php'),
        code: phpExample(baseUrl, pid, fields, asset),
      },
      {
        id: 'node',
        title: 'Node.js',
        language: 'javascript',
        filename: 'create_order.mjs',
        run: run('node create_order.mjs'),
        code: nodeExample(baseUrl, pid, fields, asset),
      },
    ],
    callbackExamples: [
      {
        id: 'php',
        title: 'PHP',
        language: 'php',
        filename: 'notify.php',
        run: run('php -S 0.0.0.0:8080 notify.php'),
        code: phpCallbackExample(pid),
      },
      {
        id: 'node',
        title: 'Node.js',
        language: 'javascript',
        filename: 'notify.mjs',
        run: run('PORT=8080 node notify.mjs'),
        code: nodeCallbackExample(pid),
      },
    ],
    sections: plugins.map((section) => ({
      id: section.id,
      view: section.view,
      data: section.data(context),
    })),
    migration: {
      createUrl: `${baseUrl}${NATIVE_CREATE_PATH}`,
      queryUrl: `${baseUrl}${NATIVE_QUERY_PATH}`,
      steps: migrationSteps(baseUrl, pid),
    },
  }
}

export class IntegrationExamples {
  constructor(protected apiKeys = apiKeyAdmin) {}

  /** The guide of one key (refused as OperatorError when no such key). */
  async forKey(
    pid: string,
    options: GuideOptions & { i18n?: I18n } = {}
  ): Promise<IntegrationGuide> {
    const apiKey = await this.apiKeys.find(pid)
    let asset = options.asset
    if (asset === undefined) {
      const [first] = await assetCatalog.supportedAssets()
      asset = first ? { token: first.tokens[0], network: first.network } : null
    }
    return renderGuide({
      pid: apiKey.pid,
      baseUrl: options.baseUrl ?? String(env.get('APP_URL')),
      asset,
      sections: pluginRegistry.enabled.flatMap((plugin) => plugin.integrationSections ?? []),
      i18n: options.i18n,
    })
  }
}

const integrationExamples = new IntegrationExamples()
export default integrationExamples
