import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join, relative } from 'node:path'
import { test } from '@japa/runner'
import env from '#start/env'
import settings from '#settings/settings_service'
import { resetDatabase } from '#tests/helpers/database'
import { CREATE_PATH, TRON_WALLET, orderParams, signed } from '#tests/helpers/merchant'
import { childEnv, startServerProcess, track, type RunningServer } from '#tests/helpers/processes'
import { APP_ROOT, buildInto, installProductionDependencies } from '#tests/helpers/production_build'

/**
 * The production build (`npm run build`), installed with production
 * dependencies only (`npm ci --omit=dev`) outside this checkout, serves and
 * runs its worker on the suite's database (SQLite or PostgreSQL), with
 * nothing of the sources, the test tooling or the dev dependencies.
 *
 * Built once for the group (type check skipped: same JavaScript, and
 * `tsc --noEmit` runs on its own in CI); the first test pays for it.
 */
const BUILD_TIMEOUT = 420_000

let buildDir = ''
let building: Promise<{ buildMs: number; installMs: number; cached: boolean }> | null = null

/**
 * The production install is kept between runs on one machine, keyed by the
 * lock file (installProductionDependencies): the SQLite and the PostgreSQL
 * runs of one commit install once.
 */
function builtOnce() {
  building ??= (async () => {
    buildDir = join(mkdtempSync(join(tmpdir(), 'gateway-build-')), 'build')
    const build = await buildInto(buildDir, { typeCheck: false })
    const install = await installProductionDependencies(buildDir, { cache: true })
    return { buildMs: build.ms, installMs: install.ms, cached: install.cached }
  })()
  return building
}

/** The suite's database as the build must see it: a relative SQLite path would land in the build. */
function databaseEnv(): Record<string, string | undefined> {
  const sqlitePath = process.env.SQLITE_PATH ?? 'storage/test.sqlite3'
  return {
    SQLITE_PATH: isAbsolute(sqlitePath) ? sqlitePath : join(APP_ROOT, sqlitePath),
    // The suite's key: the API secrets at rest are encrypted with it.
    APP_KEY: env.get('APP_KEY').release(),
  }
}

function startBuiltServer(extra: Record<string, string | undefined> = {}): Promise<RunningServer> {
  return startServerProcess(
    { ...databaseEnv(), ...extra },
    { cwd: buildDir, serverArgs: ['bin/server.js'] }
  )
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) =>
    statSync(join(dir, file)).isFile()
  )
}

/** Resolves with how a child ended (listen before signalling it). */
function exitOf(
  child: ChildProcess
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode })
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
}

test.group('Production build', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })
  group.teardown(() => {
    if (buildDir) rmSync(join(buildDir, '..'), { recursive: true, force: true })
  })

  test('npm run build carries what the app reads at run time, and runs on production dependencies only', async ({
    assert,
  }) => {
    const { buildMs, installMs, cached } = await builtOnce()
    const install = cached
      ? 'npm ci --omit=dev of this lock file, linked from tmp/production-deps'
      : 'npm ci --omit=dev'
    console.log(
      `    build ${(buildMs / 1000).toFixed(1)} s, ${install} ${(installMs / 1000).toFixed(1)} s`
    )

    const files = new Set(filesUnder(buildDir).filter((file) => !file.startsWith('node_modules/')))
    for (const entry of [
      'ace.js',
      'bin/server.js',
      'bin/console.js',
      'adonisrc.js',
      'package.json',
      'package-lock.json',
    ]) {
      assert.isTrue(files.has(entry), `${entry} is in the build`)
    }
    // Read at run time by path: views, lang files, public assets, migrations.
    // A plugin's own texts and views (app/plugin_host/plugin_resources.ts) too.
    const pluginResources = readdirSync(join(APP_ROOT, 'plugins')).flatMap((name) =>
      ['lang', 'views']
        .map((sub) => `plugins/${name}/${sub}`)
        .filter((dir) => existsSync(join(APP_ROOT, dir)))
    )
    assert.include(pluginResources, 'plugins/ton/lang')
    for (const dir of [
      'resources/views',
      'resources/lang',
      'public',
      'database/migrations',
      ...pluginResources,
    ]) {
      const sources = filesUnder(join(APP_ROOT, dir)).map((file) =>
        join(dir, file).replace(/\.ts$/, '.js')
      )
      assert.isAbove(sources.length, 0, `${dir} has files`)
      const missing = sources.filter((file) => !files.has(file))
      assert.deepEqual(missing, [], `${dir} is carried whole`)
    }
    // Compiled: no TypeScript left, no tests, no benchmarks, no test runner entry.
    assert.deepEqual(
      [...files].filter(
        (file) => file.endsWith('.ts') || /^(tests|bench)\//.test(file) || file === 'bin/test.js'
      ),
      []
    )
    // Every import alias the app uses points at compiled JavaScript.
    const pkg = JSON.parse(readFileSync(join(buildDir, 'package.json'), 'utf8')) as {
      imports: Record<string, string>
    }
    for (const [alias, target] of Object.entries(pkg.imports)) {
      assert.match(target, /\.js$/, `${alias} points at .js`)
      const dir = target.replace(/^\.\//, '').replace(/\/\*\.js$/, '')
      if (['tests', '.adonisjs/server'].includes(dir)) continue // test helpers; generated types, unused
      assert.isTrue(
        [...files].some((file) => file.startsWith(`${dir}/`) && file.endsWith('.js')),
        `${alias} (${dir}) resolves to compiled files`
      )
    }
    for (const plugin of readdirSync(join(APP_ROOT, 'plugins'))) {
      assert.isTrue(files.has(`plugins/${plugin}/plugin.js`), `plugin ${plugin} is compiled`)
    }
    // --omit=dev took effect: no package the lock file marks dev-only is
    // installed (playwright-core, solc, ajv…). npm still installs the dev
    // dependencies that are also optional peers of a production package
    // ("devOptional": @japa/runner, pino-pretty): they are unused there.
    const lock = JSON.parse(readFileSync(join(buildDir, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>
    }
    const devOnly = Object.entries(lock.packages)
      .filter(([path, entry]) => entry.dev === true && path.startsWith('node_modules/'))
      .map(([path]) => path)
    assert.includeMembers(devOnly, ['node_modules/playwright-core', 'node_modules/solc'])
    assert.deepEqual(
      devOnly.filter((path) => existsSync(join(buildDir, path))),
      [],
      'dev-only packages are not installed'
    )
    assert.isTrue(
      existsSync(join(buildDir, 'node_modules/@adonisjs/core')),
      'production packages are installed'
    )
    // Outside the checkout: a package missing from the install cannot be found in ours.
    assert.isTrue(relative(APP_ROOT, buildDir).startsWith('..'))
  }).timeout(BUILD_TIMEOUT)

  test('the built server serves the API, the cashier page and the console on the suite database', async ({
    assert,
  }) => {
    await builtOnce()
    await walletAdmin.add('tron', TRON_WALLET)
    await rateAdmin.set('USDT', 'CNY', '7.25')
    await settings.set('rate_limit.create_per_minute', '0')

    const restartStarted = performance.now()
    const server = await startBuiltServer()
    const startMs = performance.now() - restartStarted
    try {
      const ready = await fetch(`${server.url}/health/ready`)
      assert.equal(ready.status, 200)
      assert.containSubset(await ready.json(), {
        ready: true,
        checks: { database: 'ok', migrations: 'ok' },
      })
      console.log(
        `    installed database: first answer ${(startMs / 1000).toFixed(1)} s after spawn`
      )

      const config = await fetch(`${server.url}/payments/native/v1/config`)
      assert.equal(config.status, 200)
      assert.equal(((await config.json()) as { status_code: number }).status_code, 200)

      const created = await fetch(`${server.url}${CREATE_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'accept': 'application/json' },
        body: JSON.stringify(signed(orderParams({ amount: 100 }))),
      })
      const body = (await created.json()) as {
        status_code: number
        data: { trade_id: string; payment_url: string }
      }
      assert.equal(created.status, 200, JSON.stringify(body))
      assert.equal(body.status_code, 200, JSON.stringify(body))
      const tradeId = body.data.trade_id

      // Edge views and the lang files of the build: the page in Japanese.
      const page = await fetch(`${server.url}/cashier/${tradeId}`, {
        headers: { 'accept-language': 'ja' },
      })
      assert.equal(page.status, 200)
      const html = await page.text()
      assert.include(html, '<html lang="ja"')
      assert.include(html, TRON_WALLET)
      const ja = JSON.parse(
        readFileSync(join(APP_ROOT, 'resources/lang/ja/cashier.json'), 'utf8')
      ) as Record<string, string>
      assert.include(html, ja['pay.heading'])

      // Public assets, as the page links them.
      const stylesheet = html.match(/href="(\/assets\/cashier\.css[^"]*)"/)?.[1]
      assert.isString(stylesheet, 'the page links its stylesheet')
      const css = await fetch(`${server.url}${stylesheet}`)
      assert.equal(css.status, 200)
      assert.equal(
        await css.text(),
        readFileSync(join(APP_ROOT, 'public/assets/cashier.css'), 'utf8')
      )

      const login = await fetch(`${server.url}/admin/login`)
      assert.equal(login.status, 200)
      const loginHtml = await login.text()
      assert.match(loginHtml, /<form[^>]+method="post"/i)
      assert.match(loginHtml, /name=['"]_csrf['"]/)

      const missing = await fetch(`${server.url}/payments/native/v1/no-such-path`, {
        headers: { accept: 'application/json' },
      })
      assert.equal(missing.status, 404)
    } finally {
      await server.stop()
    }
    assert.equal(server.process.exitCode, 0, server.output())
  }).timeout(BUILD_TIMEOUT)

  test('the built worker (node ace.js scheduler:run) starts and stops cleanly on SIGTERM', async ({
    assert,
  }) => {
    await builtOnce()
    let output = ''
    const worker = track(
      spawn(process.execPath, ['ace.js', 'scheduler:run'], {
        cwd: buildDir,
        env: childEnv({ ...databaseEnv(), FORCE_COLOR: '0', LOG_LEVEL: 'info' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    )
    worker.stdout!.on('data', (chunk) => (output += chunk))
    worker.stderr!.on('data', (chunk) => (output += chunk))
    const exited = exitOf(worker)

    try {
      const deadline = Date.now() + 60_000
      // The command's own line and the scheduler's, in either order (two
      // loggers: a busy machine can print them the other way round).
      while (!/scheduler running/.test(output) || !/Schedule worker started/.test(output)) {
        if (worker.exitCode !== null)
          assert.fail(`the worker exited early (${worker.exitCode}):\n${output}`)
        if (Date.now() > deadline) assert.fail(`the worker did not start:\n${output}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }

      worker.kill('SIGTERM')
      const timer = setTimeout(() => worker.kill('SIGKILL'), 20_000)
      const end = await exited
      clearTimeout(timer)
      assert.deepEqual(end, { code: 0, signal: null }, output)
    } finally {
      // A worker left running would go on working on the test database
      // (expiring, delivering) under the tests that follow.
      if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL')
    }
  }).timeout(BUILD_TIMEOUT)

  test('the built server refuses a bad environment with a message naming the variable', async ({
    assert,
  }) => {
    await builtOnce()
    // Without the dev dependencies (youch, pino-pretty) the error must still be printed.
    const error = await startBuiltServer({ TRUST_PROXY: 'not-an-address' }).then(
      (server) => server.stop().then(() => null),
      (reason: Error) => reason
    )
    assert.instanceOf(error, Error, 'the server did not start')
    assert.match(error!.message, /server exited early/)
    assert.match(error!.message, /TRUST_PROXY: "not-an-address" is not an IP address/)
  }).timeout(BUILD_TIMEOUT)
})
