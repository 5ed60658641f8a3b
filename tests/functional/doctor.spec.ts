import { test } from '@japa/runner'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import db from '@adonisjs/lucid/services/db'
import doctor, { type DoctorReport } from '#services/doctor/doctor'
import type { CheckResult, DoctorContext } from '#services/doctor/doctor_check'
import { filesystemOf } from '#services/doctor/database_checks'
import { endpointKey } from '#chains/endpoint_memory'
import { RpcPool } from '#chains/rpc_pool'
import chainAdmin from '#services/operators/chain_admin'
import settings from '#settings/settings_service'
import { resetDatabase } from '#tests/helpers/database'
import { runCommand } from '#tests/helpers/ace_command'
import { createAdminUser } from '#tests/helpers/admin'
import { HttpStub } from '#tests/helpers/http_stub'
import { FakeTronGrid } from '#tests/helpers/tron/fake_trongrid'
import { resetOrderRows, seedOrderRow } from '#tests/helpers/order_rows'
import { track } from '#tests/helpers/processes'
import DoctorCommand from '#commands/doctor'

/** The command's output as read (raw mode writes colours as their names: yellow([warning])). */
const plain = (output: string) => output.replace(/\b(?:red|yellow|green)\((\[[^\]]+\])\)/g, '$1')

const TRON_WALLET = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf'

/** A context in which the configuration checks pass: what the tests change is then all there is to see. */
const sound = (): Partial<DoctorContext> => ({
  nodeEnv: 'production',
  appUrl: 'https://pay.example.com',
  appKey: randomBytes(32).toString('base64url'),
  generatedAppKey: '',
})

const linesOf = (report: DoctorReport, check: string) =>
  report.results.filter((line) => line.check === check)
const only = (report: DoctorReport, check: string): CheckResult => {
  const lines = linesOf(report, check)
  if (lines.length !== 1)
    throw new Error(`expected one ${check} line, got ${JSON.stringify(lines)}`)
  return lines[0]
}

/** TRON as the one chain payers can pay on: a wallet, USDT its one token, `urls` as its endpoints; the others disabled. */
async function watchTron(urls: string[]) {
  const now = Date.now()
  await db
    .from('tokens')
    .where('network', 'tron')
    .whereNot('symbol', 'USDT')
    .update({ enabled: false })
  await db.from('chains').whereNot('network', 'tron').update({ enabled: false })
  await db.from('chains').where('network', 'tron').update({ enabled: true })
  await db.table('wallets').insert({
    network: 'tron',
    address: TRON_WALLET,
    enabled: true,
    note: '',
    created_at: now,
    updated_at: now,
  })
  await chainAdmin.set('tron', { rpcUrls: urls })
}

test.group('Doctor: configuration checks', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    doctor.reset()
  })

  test('APP_URL: https ok; http a warning; this machine ok while developing only; not a URL a problem', async ({
    assert,
  }) => {
    const check = async (appUrl: string, nodeEnv = 'production') =>
      only(await doctor.run({ ...sound(), appUrl, nodeEnv }), 'app_url')
    assert.equal((await check('https://pay.example.com')).status, 'ok')
    const overHttp = await check('http://pay.example.com')
    assert.equal(overHttp.status, 'warning')
    assert.include(overHttp.finding, 'http://pay.example.com is not https')
    assert.include(overHttp.fix!, 'APP_URL=https://')
    assert.equal((await check('http://127.0.0.1:3333', 'development')).status, 'ok')
    assert.equal((await check('http://localhost:3333', 'development')).status, 'ok')
    assert.equal((await check('http://127.0.0.1:3333', 'production')).status, 'warning')
    assert.equal((await check('pay.example.com')).status, 'problem')
  })

  test('APP_KEY: empty, short, a known example, not random: problems; generated in production: a warning; random: ok', async ({
    assert,
  }) => {
    const check = async (context: Partial<DoctorContext>) =>
      only(await doctor.run({ ...sound(), ...context }), 'app_key')
    for (const appKey of [
      '',
      'short-key',
      'changeme',
      '0123456789abcdef0123456789abcdef',
      'a'.repeat(40),
      'abababababababababababababababababab',
    ]) {
      const line = await check({ appKey })
      assert.equal(line.status, 'problem', appKey)
      assert.include(line.fix!, 'secrets:reencrypt')
    }
    const generated = randomBytes(32).toString('base64url')
    const kept = await check({ appKey: generated, generatedAppKey: generated })
    assert.equal(kept.status, 'warning')
    assert.include(kept.finding, 'storage/app_key')
    assert.equal(
      (await check({ appKey: generated, generatedAppKey: generated, nodeEnv: 'development' }))
        .status,
      'ok'
    )
    assert.equal((await check({})).status, 'ok')
  })

  test('2FA: no admin or no admin with 2FA: a warning; an admin with 2FA: ok (a viewer with 2FA does not count)', async ({
    assert,
  }) => {
    await db.from('users').delete()
    const none = only(await doctor.run(sound()), 'admin_2fa')
    assert.equal(none.status, 'warning')
    assert.include(none.fix!, 'admin:create')

    await createAdminUser({ role: 'admin' })
    await createAdminUser({ role: 'viewer', totp: true })
    const without = only(await doctor.run(sound()), 'admin_2fa')
    assert.equal(without.status, 'warning')
    assert.include(without.finding, 'None of the 1 admin account has two-factor sign-in')

    await createAdminUser({ role: 'admin', totp: true })
    const enrolled = only(await doctor.run(sound()), 'admin_2fa')
    assert.equal(enrolled.status, 'ok')
    assert.equal(enrolled.finding, '1 of 2 admin accounts with 2FA')
  })

  test('migrations: a migration not applied is a problem naming it; all applied: ok', async ({
    assert,
  }) => {
    assert.equal(only(await doctor.run(sound()), 'migrations').status, 'ok')
    const [last] = await db.from('adonis_schema').orderBy('id', 'desc').limit(1)
    await db.from('adonis_schema').where('id', last.id).delete()
    try {
      const pending = only(await doctor.run(sound()), 'migrations')
      assert.equal(pending.status, 'problem')
      assert.include(
        pending.finding,
        `1 migration not applied: ${String(last.name).split('/').pop()}`
      )
      assert.include(pending.fix!, 'migration:run')
    } finally {
      await db.table('adonis_schema').insert(last)
    }
    assert.equal(only(await doctor.run(sound()), 'migrations').status, 'ok')
  })

  test('chains: enabled without wallet or without token: a warning per chain with the command; with both: ok', async ({
    assert,
  }) => {
    // A fresh installation: every seeded chain enabled, none with a wallet: one line names them.
    const seeded = only(await doctor.run(sound()), 'chain_setup')
    assert.equal(seeded.status, 'warning')
    assert.match(
      seeded.finding,
      /^\d+ chains are enabled without a receiving wallet \(.*\btron\b.*\): orders on them are refused$/
    )
    assert.include(seeded.fix!, 'node ace wallet:add <network> <address>')

    await db.from('chains').whereNotIn('network', ['tron', 'ethereum']).update({ enabled: false })
    const two = linesOf(await doctor.run(sound()), 'chain_setup')
    assert.deepEqual(two.map((line) => line.subject).sort(), ['ethereum', 'tron'])
    const tron = two.find((line) => line.subject === 'tron')!
    assert.equal(tron.status, 'warning')
    assert.equal(
      tron.finding,
      'tron is enabled without a receiving wallet: orders on it are refused'
    )
    assert.equal(
      tron.fix,
      'node ace wallet:add tron <address>, or node ace chain:set tron --disable'
    )

    await watchTron([])
    assert.deepEqual(
      linesOf(await doctor.run(sound()), 'chain_setup').map((line) => [line.status, line.finding]),
      [['ok', '1 enabled chain, each with a wallet and a token']]
    )
    // Payments are possible but nothing is scanned without an endpoint.
    const noRpc = linesOf(await doctor.run(sound()), 'rpc_endpoints').find(
      (line) => line.status !== 'ok'
    )!
    assert.equal(noRpc.status, 'problem')
    assert.include(noRpc.finding, 'tron takes payments but has no RPC endpoint')

    await db.from('tokens').where('network', 'tron').update({ enabled: false })
    const noToken = only(await doctor.run(sound()), 'chain_setup')
    assert.equal(noToken.status, 'warning')
    assert.include(noToken.finding, 'tron is enabled without an enabled token')
  })

  test('callbacks: given up in the last 24 h: a problem with the count; retrying: a warning; older ones: ok', async ({
    assert,
  }) => {
    resetOrderRows()
    const now = Date.now()
    const callback = async (
      status: string,
      attempts: number,
      updatedAt: number,
      lastHttpStatus: number | null = null
    ) => {
      const orderId = await seedOrderRow({ status: 2, createdAt: updatedAt })
      await db.table('callbacks').insert({
        order_id: orderId,
        format: 'native',
        status,
        attempts,
        next_attempt_at: updatedAt,
        last_http_status: lastHttpStatus,
        last_error: '',
        created_at: updatedAt,
        updated_at: updatedAt,
      })
    }
    await callback('failed', 8, now - 3 * 86_400_000, 500)
    await callback('delivered', 1, now - 1000, 200)
    await callback('pending', 0, now - 1000)
    assert.equal(only(await doctor.run(sound()), 'callbacks').status, 'ok')

    await callback('failed', 8, now - 3600_000, 500)
    await callback('failed', 8, now - 60_000, 500)
    await callback('pending', 2, now - 60_000, 503)
    const lines = linesOf(await doctor.run(sound()), 'callbacks')
    assert.deepEqual(
      lines.map((line) => [line.status, line.finding]),
      [
        [
          'problem',
          '2 callbacks given up in the last 24 h (most answered HTTP 500): those merchants were not told of paid orders',
        ],
        ['warning', '1 callback retrying after a failed delivery in the last 24 h'],
      ]
    )
    assert.include(lines[0].fix!, 'callbacks:redeliver')
  })

  test('a check that cannot run is reported as such, and the others still run', async ({
    assert,
  }) => {
    await db.rawQuery('ALTER TABLE rates RENAME TO rates_elsewhere')
    try {
      const report = await doctor.run(sound())
      const rates = only(report, 'rates')
      assert.equal(rates.status, 'warning')
      assert.match(rates.finding, /^This check could not run: /)
      assert.equal(only(report, 'app_url').status, 'ok')
      assert.equal(only(report, 'migrations').status, 'ok')
    } finally {
      await db.rawQuery('ALTER TABLE rates_elsewhere RENAME TO rates')
    }
  })
})

test.group('Doctor: live checks (RPC endpoints, clock, rates)', (group) => {
  const tron = new FakeTronGrid()
  const silent = new HttpStub()
  const rates = new HttpStub()

  group.setup(async () => {
    await tron.start()
    await silent.start()
    await rates.start()
    // Answers nothing: a node that hangs.
    silent.handler = () => {}
    return async () => {
      await tron.stop()
      await silent.stop()
      await rates.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    resetOrderRows()
    RpcPool.reset()
    doctor.reset()
    tron.reset()
  })
  group.each.timeout(60_000)

  test('a reachable endpoint: ok with its head, and the clock within the newest block', async ({
    assert,
  }) => {
    await watchTron([tron.url])
    tron.mine(2)
    const report = await doctor.run(sound())
    const rpc = only(report, 'rpc_endpoints')
    assert.equal(rpc.status, 'ok')
    assert.equal(rpc.finding, `tron: 1 endpoint answered (block ${tron.head.number})`)
    assert.equal(only(report, 'clock_skew').status, 'ok')
    assert.isTrue(tron.requests.length > 0, 'the node was asked')
  })

  test('the newest block dated minutes ahead of the clock: a clock problem; minutes behind: a warning', async ({
    assert,
  }) => {
    await watchTron([tron.url])
    tron.mine(1, 120_000)
    const ahead = only(await doctor.run(sound()), 'clock_skew')
    assert.equal(ahead.status, 'problem')
    assert.match(
      ahead.finding,
      /^tron: the newest block is dated 1[12]\d s after this machine's clock: the clock is behind$/
    )
    assert.include(ahead.fix!, 'NTP')

    // A fresh block seen from a clock 10 minutes ahead.
    tron.reset()
    const late = only(await doctor.run({ ...sound(), now: Date.now() + 600_000 }), 'clock_skew')
    assert.equal(late.status, 'warning')
    assert.include(
      late.finding,
      "older than this machine's clock: the clock is ahead, or the endpoint lags"
    )
  })

  test('unreachable endpoints: the only one down is a problem (fast, with the reason); one of two down is a warning', async ({
    assert,
  }) => {
    await watchTron([silent.url])
    const started = Date.now()
    const down = only(await doctor.run({ ...sound(), rpcTimeoutMs: 500 }), 'rpc_endpoints')
    assert.isBelow(Date.now() - started, 10_000)
    assert.equal(down.status, 'problem')
    assert.equal(
      down.finding,
      `tron: ${silent.url} did not answer: no answer within 0.5 s; payments on this chain are not seen`
    )
    assert.include(down.fix!, 'chain:set tron --rpc')

    await chainAdmin.set('tron', { rpcUrls: [tron.url, silent.url] })
    const lines = linesOf(await doctor.run({ ...sound(), rpcTimeoutMs: 500 }), 'rpc_endpoints')
    assert.deepEqual(
      lines.map((line) => line.status),
      ['warning']
    )
    assert.include(lines[0].finding, silent.url)
    // The clock is still compared with the endpoint that answered.
    assert.equal(
      only(await doctor.run({ ...sound(), rpcTimeoutMs: 500 }), 'clock_skew').status,
      'ok'
    )
  })

  test("an endpoint held (daily credits spent) or a budget that does not fit: reported from the chain pages' state", async ({
    assert,
  }) => {
    await watchTron([tron.url])
    const now = Date.now()
    await db.table('rpc_endpoints').insert({
      network: 'tron',
      endpoint_key: endpointKey(tron.url, ''),
      hold_until: now + 3600_000,
      hold_kind: 'credits',
      hold_reason: 'its daily credits are spent (HTTP 402) until 00:00 UTC',
      log_range: null,
      updated_at: now,
    })
    const held = linesOf(await doctor.run(sound()), 'rpc_endpoints').find(
      (line) => line.status !== 'ok'
    )!
    assert.equal(held.status, 'problem')
    assert.include(held.finding, `tron: ${tron.url} is held until`)
    assert.include(
      held.finding,
      'its daily credits are spent (HTTP 402); no endpoint is left to scan with'
    )

    await db.from('rpc_endpoints').delete()
    await chainAdmin.set('tron', { requestsPerDay: 10 })
    const budget = linesOf(await doctor.run(sound()), 'rpc_endpoints').find(
      (line) => line.status !== 'ok'
    )
    assert.exists(budget, 'a budget of 10 requests a day does not fit')
    assert.equal(budget!.status, 'warning')
    assert.include(budget!.fix!, 'scan-interval')
  })

  test('rates: an offered currency without a rate is a problem; a fixed rate or a live source that quotes it: ok', async ({
    assert,
  }) => {
    await watchTron([tron.url])
    assert.equal(
      only(await doctor.run(sound()), 'rates').finding,
      'No fixed rate and no order yet: no currency to check'
    )
    await seedOrderRow({ status: 1, createdAt: Date.now() - 60_000, currency: 'EUR' })

    const missing = only(await doctor.run(sound()), 'rates')
    assert.equal(missing.status, 'problem')
    assert.equal(missing.subject, 'EUR')
    assert.include(missing.finding, 'EUR: no rate for USDT')
    assert.include(missing.fix!, 'node ace rate:set USDT EUR <rate>')

    await settings.set('rate.api_url', rates.url)
    rates.json({ eur: { usdt: 1.08 } })
    const live = only(await doctor.run(sound()), 'rates')
    assert.equal(live.status, 'ok', live.finding)
    assert.equal(rates.requests.at(-1)?.url, '/eur.json')

    rates.json({ eur: { usdc: 1.08 } })
    const notQuoted = only(await doctor.run(sound()), 'rates')
    assert.equal(notQuoted.status, 'problem')
    assert.include(notQuoted.finding, 'the live source has no rate for USDT')

    rates.json({ error: 'down' }, 503)
    const failing = only(await doctor.run(sound()), 'rates')
    assert.equal(failing.status, 'problem')
    assert.include(failing.finding, 'EUR: no fresh rate for USDT')
    assert.include(failing.finding, 'HTTP 503')

    await db.table('rates').insert({
      token: 'USDT',
      fiat: 'EUR',
      rate: '0.92',
      source: 'fixed',
      created_at: Date.now(),
      updated_at: Date.now(),
    })
    const fixed = only(await doctor.run(sound()), 'rates')
    assert.equal(fixed.status, 'ok')
    assert.equal(fixed.finding, 'EUR: fixed rates for USDT')
  })
})

test.group('Doctor: SQLite use', (group) => {
  const children: ChildProcess[] = []
  let dir = ''
  let file = ''

  group.each.setup(() => {
    dir = mkdtempSync(join(tmpdir(), 'doctor-'))
    file = join(dir, 'gateway.sqlite3')
    writeFileSync(file, '')
    return () => {
      for (const child of children.splice(0)) child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
  })

  /** A process that keeps `path` open, once it has opened it. */
  async function holder(path: string): Promise<number> {
    const child = track(
      spawn(
        process.execPath,
        [
          '-e',
          "require('fs').openSync(process.argv[1], 'r'); console.log('open'); setInterval(() => {}, 60000)",
          path,
        ],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        }
      )
    )
    children.push(child)
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk) => String(chunk).includes('open') && resolve())
      child.once('exit', (code) => reject(new Error(`holder exited with ${code}`)))
    })
    return child.pid!
  }

  const sqlite = (context: Partial<DoctorContext>) =>
    doctor
      .run({ ...sound(), dialect: 'sqlite', sqlitePath: file, mounts: null, ...context })
      .then((report) => linesOf(report, 'sqlite'))

  test('web and worker both holding the database: a warning naming them; one process: ok', async ({
    assert,
  }) => {
    const one = await holder(file)
    assert.deepEqual(
      (await sqlite({})).map((line) => line.status),
      ['ok']
    )
    // Seen from the web process itself (the dashboard): it and the worker.
    const fromWeb = await sqlite({ selfIsGateway: true })
    assert.equal(fromWeb[0].status, 'warning')
    assert.include(
      fromWeb[0].finding,
      `2 processes have the SQLite database open (pids ${process.pid}, ${one})`
    )

    const two = await holder(file)
    const both = await sqlite({})
    assert.equal(both[0].status, 'warning')
    assert.include(both[0].finding, `pids ${[one, two].sort((a, b) => a - b).join(', ')}`)
    assert.include(both[0].fix!, 'DB_CONNECTION=pg')
  })

  test('a database on a network file system: a problem; on a local disk: ok; PostgreSQL: not concerned', async ({
    assert,
  }) => {
    const nfs = `server:/export ${dir} nfs4 rw,relatime 0 0\n/dev/sda1 / ext4 rw 0 0\n`
    const remote = (await sqlite({ mounts: nfs })).find((line) => line.subject === 'filesystem')!
    assert.equal(remote.status, 'problem')
    assert.include(remote.finding, `is on a network file system (nfs4 at ${dir})`)
    assert.include(remote.fix!, 'SQLITE_PATH')

    const local = (await sqlite({ mounts: '/dev/sda1 / ext4 rw 0 0\n' })).find(
      (line) => line.subject === 'filesystem'
    )!
    assert.equal(local.status, 'ok')
    assert.equal(
      filesystemOf('/mnt/my data/db', '//nas/share /mnt/my\\040data cifs rw 0 0\n')?.type,
      'cifs'
    )

    const pg = await sqlite({ dialect: 'postgres' })
    assert.deepEqual(
      pg.map((line) => [line.status, line.finding]),
      [['ok', 'Not used: the database is PostgreSQL']]
    )
  })
})

test.group('Doctor: the command', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    resetOrderRows()
    doctor.reset()
  })

  test('warnings only: exit 0, each line with its fix and a summary; --strict: exit 1', async ({
    assert,
  }) => {
    // The seeded chains have no wallet yet, the seeded admin no 2FA: warnings, nothing broken.
    const result = await runCommand(DoctorCommand, []).then((run) => ({
      ...run,
      output: plain(run.output),
    }))
    assert.equal(result.exitCode, 0, result.output)
    assert.match(
      result.output,
      /\[warning\] Chains: wallets and tokens: \d+ chains are enabled without a receiving wallet \(.*tron/
    )
    assert.include(result.output, 'fix: node ace wallet:add <network> <address>')
    assert.match(
      result.output,
      /\[ok {5}\] Database migrations: Every migration of this release is applied/
    )
    assert.match(result.output, /0 problems, \d+ warnings, \d+ ok: nothing is broken/)
    assert.notInclude(result.output, '[problem]')

    const strict = await runCommand(DoctorCommand, ['--strict'])
    assert.equal(strict.exitCode, 1)
  })

  test('a problem: exit 1, listed first; --json: the report for monitoring', async ({ assert }) => {
    const orderId = await seedOrderRow({ status: 2, createdAt: Date.now() - 60_000 })
    await db.table('callbacks').insert({
      order_id: orderId,
      format: 'native',
      status: 'failed',
      attempts: 8,
      next_attempt_at: Date.now(),
      last_error: 'HTTP 500',
      created_at: Date.now(),
      updated_at: Date.now(),
    })
    const result = await runCommand(DoctorCommand, []).then((run) => ({
      ...run,
      output: plain(run.output),
    }))
    assert.equal(result.exitCode, 1)
    assert.match(
      result.output,
      /^\[problem\] Merchant callbacks: 1 callback given up in the last 24 h/
    )
    assert.match(result.output, /1 problem, \d+ warnings, \d+ ok: fix the problems above\./)

    const json = await runCommand(DoctorCommand, ['--json'])
    assert.equal(json.exitCode, 1)
    const report = JSON.parse(json.output)
    assert.equal(report.status, 'problem')
    assert.match(report.generated_at, /^\d{4}-\d\d-\d\dT/)
    assert.equal(report.counts.problem, 1)
    assert.equal(
      report.counts.ok + report.counts.warning + report.counts.problem,
      report.checks.length
    )
    for (const line of report.checks) {
      assert.sameMembers(Object.keys(line), [
        'check',
        'title',
        'subject',
        'status',
        'finding',
        'fix',
      ])
      assert.oneOf(line.status, ['ok', 'warning', 'problem'])
      if (line.status === 'ok') assert.isNull(line.fix)
      else assert.isString(line.fix)
    }
    assert.sameMembers(
      [...new Set(report.checks.map((line: { check: string }) => line.check))],
      [
        'app_url',
        'app_key',
        'migrations',
        'sqlite',
        'admin_2fa',
        'chain_setup',
        'callbacks',
        'rpc_endpoints',
        'clock_skew',
        'rates',
      ]
    )
    const given = report.checks.find(
      (line: { check: string; status: string }) =>
        line.check === 'callbacks' && line.status === 'problem'
    )
    assert.equal(given.subject, 'given_up')

    await db.from('callbacks').delete()
    const fine = await runCommand(DoctorCommand, ['--json'])
    assert.equal(fine.exitCode, 0)
    assert.equal(JSON.parse(fine.output).status, 'warning')
  })
})
