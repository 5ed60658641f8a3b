import walletAdmin from '#services/operators/wallet_admin'
import chainAdmin from '#services/operators/chain_admin'
import apiKeyAdmin from '#services/operators/api_key_admin'
import { AdminAgent, createAdminUser } from '#tests/helpers/admin'
import { test } from '@japa/runner'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import db from '@adonisjs/lucid/services/db'
import env from '#start/env'
import ApiKey from '#models/api_key'
import Chain from '#models/chain'
import settings from '#settings/settings_service'
import { rpcFor } from '#chains/chain_rpc'
import { sealStoredSecrets } from '#services/secrets_reencryption'
import { AUTH_FAILED_MESSAGE } from '#services/merchant_auth'
import {
  SecretPurpose,
  SecretUnreadableError,
  looksSealed,
  revealSecret,
} from '#support/crypto/secret_box'
import { resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import {
  CREATE_PATH,
  TEST_SECRET,
  createOrder,
  merchantSign,
  orderParams,
} from '#tests/helpers/merchant'
import { SUBMIT_PATH, compatParams, compatSigned } from '#tests/helpers/compat_merchant'
import { CLOSED_URL, runAce, startServerProcess } from '#tests/helpers/processes'
import { runCommand } from '#tests/helpers/ace_command'
import EncryptSecretsAtRest from '#database/migrations/1763700000011_encrypt_secrets_at_rest'
import ApiKeyList from '#commands/apikey_list'
import ChainList from '#commands/chain_list'
import SettingsGet from '#commands/settings_get'
import { providerSettings } from '#plugins/provider/provider_settings'

const SHOP_TOKEN = 'provider-shop-token-5f1e9c'
const TRON_API_KEY = 'tron-pro-api-key-77c0d1e2'

async function stored(
  table: string,
  column: string,
  where: Record<string, string>
): Promise<string> {
  const row = await db.from(table).where(where).select(column).firstOrFail()
  return row[column]
}

/** Runs a command in-process, capturing its output. */
/** Waits until `find` returns something, for up to 10 s. */
async function eventually<T>(find: () => T | undefined | null | false, what: string): Promise<T> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const found = find()
    if (found) return found
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * The JSON lines of a log. The text after the last newline of a process's
 * live output may still be coming: left out when it does not parse yet.
 */
function jsonLines(text: string): Record<string, any>[] {
  const lines = text.split('\n').filter((line) => line.trim() !== '')
  const records: Record<string, any>[] = []
  lines.forEach((line, index) => {
    try {
      records.push(JSON.parse(line))
    } catch (error) {
      if (index < lines.length - 1 || text.endsWith('\n')) throw error
    }
  })
  return records
}

test.group('Secrets at rest', (group) => {
  group.each.setup(() => resetDatabase())

  test('API secrets, RPC API keys and the shop token are stored as ciphertext and used decrypted', async ({
    client,
    assert,
  }) => {
    await makeTronPayable()
    await apiKeyAdmin.create({ pid: 'shop2', secret: 'shop2-secret-0123456789' })
    await chainAdmin.set('tron', { apiKey: TRON_API_KEY })
    await settings.set('provider.shop_token', SHOP_TOKEN)

    const secrets: [string, string, Record<string, string>, string][] = [
      ['api_keys', 'secret_key', { pid: '1000' }, TEST_SECRET],
      ['api_keys', 'secret_key', { pid: 'shop2' }, 'shop2-secret-0123456789'],
      ['chains', 'api_key', { network: 'tron' }, TRON_API_KEY],
      ['settings', 'value', { key: 'provider.shop_token' }, SHOP_TOKEN],
    ]
    for (const [table, column, where, plain] of secrets) {
      const value = await stored(table, column, where)
      assert.notInclude(value, plain, `${table}.${column} holds the secret`)
      assert.isTrue(looksSealed(value), `${table}.${column} is not ciphertext: ${value}`)
    }

    // Decrypted where used: a request signed with the secret is accepted ...
    ;(await createOrder(client, orderParams())).assertStatus(200)
    ;(
      await createOrder(client, orderParams({ pid: 'shop2' }), 'shop2-secret-0123456789')
    ).assertStatus(200)
    // ... the RPC pool gets the key itself ...
    assert.equal((await rpcFor(await Chain.findByOrFail('network', 'tron'))).apiKey, TRON_API_KEY)
    // ... and the settings hand out the token only encrypted.
    assert.notEqual(await providerSettings.get('provider.shop_token'), SHOP_TOKEN)
    assert.equal(
      revealSecret(
        await providerSettings.get('provider.shop_token'),
        SecretPurpose.setting('provider.shop_token')
      ),
      SHOP_TOKEN
    )
  })

  test('a ciphertext copied into another secret column does not decrypt there', async ({
    assert,
  }) => {
    const apiSecret = await stored('api_keys', 'secret_key', { pid: '1000' })
    await db.from('chains').where('network', 'tron').update({ api_key: apiSecret })
    const chain = await Chain.findByOrFail('network', 'tron')
    assert.throws(() => chain.rpcApiKey(), SecretUnreadableError as any)
  })

  test('a value shaped like ciphertext is refused as a plain secret', async ({ assert }) => {
    const lookalike = `app.v1:${'A'.repeat(40)}.${'B'.repeat(16)}.${'C'.repeat(22)}`
    await assert.rejects(
      () => apiKeyAdmin.create({ pid: 'shop3', secret: lookalike }),
      /shape of an encrypted value/
    )
    await assert.rejects(
      () => chainAdmin.set('tron', { apiKey: lookalike }),
      /shape of an encrypted value/
    )
    await assert.rejects(
      () => settings.set('provider.shop_token', lookalike),
      /shape of an encrypted value/
    )
  })

  test('the migration encrypts plain rows left from before, once, and they keep working', async ({
    client,
    assert,
  }) => {
    await makeTronPayable()
    await apiKeyAdmin.create({ pid: 'shop2', secret: 'shop2-secret-0123456789' })
    const alreadySealed = await stored('api_keys', 'secret_key', { pid: 'shop2' })
    // Rows as an older version wrote them: plain text.
    await db.from('api_keys').where('pid', '1000').update({ secret_key: TEST_SECRET })
    await db.from('chains').where('network', 'tron').update({ api_key: TRON_API_KEY })
    await db
      .table('settings')
      .insert({ key: 'provider.shop_token', type: 'string', value: SHOP_TOKEN, updated_at: 1 })
    settings.invalidate()

    // Half-migrated: plain rows are still read as they are.
    ;(await createOrder(client, orderParams())).assertStatus(200)

    const migration = new EncryptSecretsAtRest(db.connection(), 'encrypt_secrets_at_rest', false)
    await migration.execUp()

    const apiSecret = await stored('api_keys', 'secret_key', { pid: '1000' })
    const tronKey = await stored('chains', 'api_key', { network: 'tron' })
    const shopToken = await stored('settings', 'value', { key: 'provider.shop_token' })
    for (const value of [apiSecret, tronKey, shopToken]) assert.isTrue(looksSealed(value), value)
    assert.equal(
      await stored('api_keys', 'secret_key', { pid: 'shop2' }),
      alreadySealed,
      'not encrypted twice'
    )
    settings.invalidate()
    assert.equal((await ApiKey.findByOrFail('pid', '1000')).signingSecret(), TEST_SECRET)
    assert.equal((await Chain.findByOrFail('network', 'tron')).rpcApiKey(), TRON_API_KEY)
    ;(await createOrder(client, orderParams())).assertStatus(200)

    // Run again (an interrupted migration, a second process): nothing changes.
    const again = await sealStoredSecrets(db.connection(), { reencrypt: false })
    assert.deepEqual(
      again.map((column) => column.encrypted),
      [0, 0, 0, 0]
    )
    assert.equal(await stored('api_keys', 'secret_key', { pid: '1000' }), apiSecret)
    assert.equal(await stored('chains', 'api_key', { network: 'tron' }), tronKey)
    assert.equal(await stored('settings', 'value', { key: 'provider.shop_token' }), shopToken)

    // Rolled back: plain again, and up again.
    await new EncryptSecretsAtRest(db.connection(), 'encrypt_secrets_at_rest', false).execDown()
    assert.equal(await stored('api_keys', 'secret_key', { pid: '1000' }), TEST_SECRET)
    assert.equal(
      await stored('api_keys', 'secret_key', { pid: 'shop2' }),
      'shop2-secret-0123456789'
    )
    await new EncryptSecretsAtRest(db.connection(), 'encrypt_secrets_at_rest', false).execUp()
    assert.isTrue(looksSealed(await stored('api_keys', 'secret_key', { pid: '1000' })))
  })

  test('apikey:list, chain:list and settings:get show secrets masked', async ({ assert }) => {
    await chainAdmin.set('ethereum', {
      apiKey: TRON_API_KEY,
      rpcUrls: [
        'https://mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161?api-key=queryKey1234567',
      ],
    })
    await settings.set('provider.shop_token', SHOP_TOKEN)

    const keys = await runCommand(ApiKeyList, [])
    assert.equal(keys.exitCode, 0, keys.output)
    assert.notInclude(keys.output, TEST_SECRET)
    assert.include(keys.output, '…cdef')

    const chains = await runCommand(ChainList, [])
    assert.equal(chains.exitCode, 0, chains.output)
    assert.include(chains.output, 'mainnet.infura.io')
    for (const secret of [TRON_API_KEY, '9aa3d95b3bc440fa88ea12eaa4456161', 'queryKey1234567']) {
      assert.notInclude(chains.output, secret)
    }

    for (const argv of [[], ['provider.shop_token']]) {
      const shown = await runCommand(SettingsGet, argv)
      assert.equal(shown.exitCode, 0, shown.output)
      assert.notInclude(shown.output, SHOP_TOKEN)
    }
  })
})

test.group('Secrets at rest: APP_KEY rotation', (group) => {
  group.each.setup(() => resetDatabase())

  test('secrets:reencrypt moves every secret to the new key; requests keep working', async ({
    assert,
    cleanup,
  }) => {
    await makeTronPayable()
    await chainAdmin.set('tron', { apiKey: TRON_API_KEY })
    await settings.set('provider.shop_token', SHOP_TOKEN)
    const admin = await createAdminUser({ email: 'twofa@example.com', totp: true })
    const oldKey = env.get('APP_KEY').release()
    const newKey = randomBytes(32).toString('base64url')
    const before = await stored('api_keys', 'secret_key', { pid: '1000' })

    const rotated = await runAce(['secrets:reencrypt'], {
      APP_KEY: newKey,
      APP_KEY_PREVIOUS: oldKey,
    })
    assert.equal(rotated.code, 0, rotated.stdout + rotated.stderr)
    assert.match(
      rotated.stdout,
      /api_keys\.secret_key: 1 re-encrypted, 0 encrypted \(were plain\), 0 already current/
    )
    assert.match(rotated.stdout, /chains\.api_key: 1 re-encrypted/)
    assert.match(rotated.stdout, /settings: 1 re-encrypted/)
    assert.match(rotated.stdout, /users\.totp_secret: 1 re-encrypted/)
    const after = await stored('api_keys', 'secret_key', { pid: '1000' })
    assert.notEqual(after, before)
    assert.isTrue(looksSealed(after))
    // This process knows only the old key: the new ciphertext is not readable here.
    assert.throws(
      () => revealSecret(after, SecretPurpose.apiKeySecret),
      SecretUnreadableError as any
    )

    // Idempotent: a second run changes nothing.
    const again = await runAce(['secrets:reencrypt'], { APP_KEY: newKey, APP_KEY_PREVIOUS: oldKey })
    assert.equal(again.code, 0, again.stdout + again.stderr)
    assert.match(
      again.stdout,
      /api_keys\.secret_key: 0 re-encrypted, 0 encrypted \(were plain\), 1 already current/
    )
    assert.equal(await stored('api_keys', 'secret_key', { pid: '1000' }), after)

    // A process with the new key alone signs and checks with the same secret.
    const server = await startServerProcess({ APP_KEY: newKey, APP_KEY_PREVIOUS: undefined })
    cleanup(() => server.stop())
    const params = orderParams()
    const response = await fetch(`${server.url}${CREATE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...params, signature: merchantSign(params) }),
    })
    assert.equal(response.status, 200, await response.text())
    // ... and an administrator's two-factor codes still match.
    await AdminAgent.signIn(admin, server.url)

    // A key that never wrote them decrypts nothing: refused, named, nothing written.
    const stranger = await runAce(['secrets:reencrypt'], {
      APP_KEY: randomBytes(32).toString('base64url'),
      APP_KEY_PREVIOUS: undefined,
    })
    assert.equal(stranger.code, 1)
    assert.match(
      stranger.stdout + stranger.stderr,
      /No known key decrypts: API key pid 1000, RPC API key of tron, two-factor secret of twofa@example\.com, setting provider\.shop_token/
    )
    assert.equal(await stored('api_keys', 'secret_key', { pid: '1000' }), after)
  }).timeout(90_000)
})

test.group('Secrets at rest: refusals and logs', (group) => {
  group.each.setup(() => resetDatabase())

  test('unknown pid, disabled key, refused IP and bad signature: one 401 body, four log reasons', async ({
    assert,
    cleanup,
  }) => {
    await makeTronPayable()
    await apiKeyAdmin.create({ pid: 'shop-off', secret: 'shop-off-secret-0123456' })
    await apiKeyAdmin.update('shop-off', { enabled: false })
    await apiKeyAdmin.create({
      pid: 'shop-ip',
      secret: 'shop-ip-secret-01234567',
      ips: ['10.9.9.9'],
    })
    const server = await startServerProcess({ LOG_LEVEL: 'info' })
    cleanup(() => server.stop())

    const cases = [
      { id: 'auth-unknown-pid', pid: '9999', secret: TEST_SECRET, reason: 'unknown_pid' },
      {
        id: 'auth-key-disabled',
        pid: 'shop-off',
        secret: 'shop-off-secret-0123456',
        reason: 'key_disabled',
      },
      {
        id: 'auth-ip-refused',
        pid: 'shop-ip',
        secret: 'shop-ip-secret-01234567',
        reason: 'ip_not_allowed',
      },
      {
        id: 'auth-bad-signature',
        pid: '1000',
        secret: 'not-the-secret-of-1000',
        reason: 'bad_signature',
      },
    ]
    const nativeBodies: string[] = []
    const compatBodies: string[] = []
    for (const entry of cases) {
      const params = orderParams({ pid: entry.pid })
      const response = await fetch(`${server.url}${CREATE_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': `${entry.id}-native` },
        body: JSON.stringify({ ...params, signature: merchantSign(params, entry.secret) }),
      })
      assert.equal(response.status, 401)
      nativeBodies.push((await response.text()).replace(`${entry.id}-native`, 'ID'))

      const query = new URLSearchParams(
        compatSigned(compatParams({ pid: entry.pid }), entry.secret)
      )
      const compat = await fetch(`${server.url}${SUBMIT_PATH}?${query}`, {
        headers: { 'x-request-id': `${entry.id}-compat`, 'accept': 'application/json' },
        redirect: 'manual',
      })
      assert.equal(compat.status, 401)
      compatBodies.push((await compat.text()).replace(`${entry.id}-compat`, 'ID'))
    }
    // Each flavour answers its four refusals with one body: nothing tells them apart.
    assert.equal(new Set(nativeBodies).size, 1, nativeBodies.join('\n'))
    assert.equal(new Set(compatBodies).size, 1, compatBodies.join('\n'))
    // Each 401 adds how its flavour signs (the same for every reason).
    const nativeFields = Object.keys(orderParams()).filter((name) => name !== 'signature')
    const native = JSON.parse(nativeBodies[0])
    assert.deepEqual(
      { ...native, message: undefined },
      { status_code: 401, message: undefined, data: null, request_id: 'ID' }
    )
    assert.isTrue(
      native.message.startsWith(`${AUTH_FAILED_MESSAGE}: requests are signed with HMAC-SHA256`),
      native.message
    )
    assert.isTrue(
      native.message.endsWith(`(here: ${nativeFields.sort().join(', ')})`),
      native.message
    )
    const compat = JSON.parse(compatBodies[0])
    assert.deepEqual(
      { ...compat, message: undefined },
      { status_code: 401, message: undefined, data: null, request_id: 'ID' }
    )
    assert.isTrue(
      compat.message.startsWith(`${AUTH_FAILED_MESSAGE}: requests are signed with MD5`),
      compat.message
    )
    const compatFields = Object.keys(compatParams()).filter(
      (name) => name !== 'sign' && name !== 'sign_type'
    )
    assert.isTrue(
      compat.message.endsWith(`(here: ${compatFields.sort().join(', ')})`),
      compat.message
    )

    // The control: the same request signed right passes (the refusals were for their reason).
    const good = orderParams()
    const accepted = await fetch(`${server.url}${CREATE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...good, signature: merchantSign(good) }),
    })
    assert.equal(accepted.status, 200)

    const messages = new Set<string>()
    for (const entry of cases) {
      for (const flavour of ['native', 'compat']) {
        const line = await eventually(
          () =>
            jsonLines(server.stdout()).find(
              (record) =>
                record.request_id === `${entry.id}-${flavour}` && record.reason !== undefined
            ),
          `the log line of ${entry.id}-${flavour}`
        )
        assert.equal(line.reason, entry.reason)
        assert.equal(line.pid, entry.pid)
        messages.add(line.msg)
      }
    }
    assert.equal(messages.size, 4, [...messages].join('\n'))
  }).timeout(90_000)

  test('a failing RPC endpoint with keys in its URL: log, stored error and listing carry no key', async ({
    assert,
  }) => {
    const infuraKey = randomBytes(16).toString('hex')
    const queryKey = `q${randomBytes(12).toString('hex')}`
    // Nothing listens there: the client fails and quotes the URL.
    const url = `${CLOSED_URL}/v3/${infuraKey}?api-key=${queryKey}`
    await chainAdmin.set('ethereum', { rpcUrls: [url], apiKey: TRON_API_KEY })
    await walletAdmin.add('ethereum', '0x52908400098527886e0f7030069857d2e4169ee7')

    const scan = await runAce(['chains:scan', '--network', 'ethereum'], { LOG_LEVEL: 'debug' })
    const output = scan.stdout + scan.stderr
    assert.equal(scan.code, 1, output)
    assert.match(output, /chain scan failed/)
    assert.match(output, /127\.0\.0\.1/)
    for (const secret of [infuraKey, queryKey, TRON_API_KEY]) assert.notInclude(output, secret)

    const cursor = await db.from('chain_cursors').where('network', 'ethereum').firstOrFail()
    assert.isNotEmpty(cursor.last_error)
    for (const secret of [infuraKey, queryKey]) assert.notInclude(cursor.last_error, secret)

    const listed = await runAce(['chain:list'])
    for (const secret of [infuraKey, queryKey, TRON_API_KEY])
      assert.notInclude(listed.stdout, secret)
  }).timeout(60_000)

  test('an invalid stored setting is logged by key, without the secret value', async ({
    assert,
  }) => {
    const token = `invalid-token-${'z'.repeat(300)}`
    const rateUrl = 'ftp://operator:ratepass123@rates.example/v1?token=ratetoken456'
    await db.table('settings').insert([
      { key: 'provider.shop_token', type: 'string', value: token, updated_at: 1 },
      { key: 'rate.api_url', type: 'url', value: rateUrl, updated_at: 1 },
    ])

    const listed = await runAce(['settings:get'], { LOG_LEVEL: 'info' })
    assert.equal(listed.code, 0, listed.stderr)
    const warnings = jsonLines(
      listed.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .join('\n')
    ).filter((record) => /stored setting is invalid/.test(record.msg))
    assert.sameMembers(
      warnings.map((record) => record.key),
      ['provider.shop_token', 'rate.api_url']
    )
    const output = listed.stdout + listed.stderr
    for (const secret of [token, 'z'.repeat(300), 'ratepass123', 'ratetoken456'])
      assert.notInclude(output, secret)
  }).timeout(60_000)

  test('the first-start secret and password go to the terminal once, never into the JSON log', async ({
    assert,
    cleanup,
  }) => {
    const fresh: Record<string, string | undefined> = {
      INITIAL_API_SECRET: undefined,
      ADMIN_EMAIL: undefined,
      ADMIN_PASSWORD: undefined,
      LOG_LEVEL: 'trace',
    }
    if (db.connection().dialect.name === 'postgres') {
      await db.connection().rawQuery('DROP DATABASE IF EXISTS gateway_secret_print')
      await db.connection().rawQuery('CREATE DATABASE gateway_secret_print')
      fresh.PG_DB_NAME = 'gateway_secret_print'
      cleanup(async () => {
        await db.connection().rawQuery('DROP DATABASE IF EXISTS gateway_secret_print WITH (FORCE)')
      })
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'gateway-print-'))
      cleanup(() => rmSync(dir, { recursive: true, force: true }))
      fresh.SQLITE_PATH = join(dir, 'print.sqlite3')
    }
    const server = await startServerProcess(fresh)
    cleanup(() => server.stop())
    const secret = /secret_key: ([0-9a-f]{64})/.exec(server.stderr())?.[1]
    const password = /password: (\S{12,})/.exec(server.stderr())?.[1]
    assert.isString(secret, server.output())
    assert.isString(password, server.output())
    // Logged requests too, so that the log is not empty by chance.
    await fetch(`${server.url}/payments/native/v1/config`)
    await eventually(() => server.stdout().includes('request completed'), 'an access log line')
    await server.stop()

    const stdout = server.stdout()
    assert.isAbove(jsonLines(stdout).length, 0)
    assert.notInclude(stdout, secret!)
    assert.notInclude(stdout, password!)
  }).timeout(120_000)
})
