import { test } from '@japa/runner'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resetDatabase } from '#tests/helpers/database'
import { startServerProcess } from '#tests/helpers/processes'

/**
 * What a web process holds (docs/production.md, "Memory"): the chain
 * libraries and undici are loaded by the scanners, the reference checks and
 * the callback deliveries on first use, never at boot. A static import of
 * one of them in a module the server loads puts tens of MB back into every
 * web process; this test names the module that did. ioredis is loaded by
 * the rate limiter's Redis store on its first use only
 * (app/services/redis_limiter_store.ts). And its log lines are written from
 * the main thread (config/logger.ts): a pino transport would start a worker
 * thread, with a V8 heap of its own, only to copy them to stdout.
 */
const LOADED_ON_FIRST_USE = [
  'viem',
  '@solana/kit',
  '@ton/ton',
  'undici',
  'axios',
  'ioredis',
  'nodemailer',
]

test.group('A web process at boot', (group) => {
  group.each.setup(() => resetDatabase())

  test('answers its API, readiness and console pages without loading the chain libraries or undici', async ({
    assert,
  }) => {
    const scratch = mkdtempSync(join(tmpdir(), 'boot-modules-'))
    const record = join(scratch, 'loaded.txt')
    const hook = join(scratch, 'hook.mjs')
    // Every module resolved, with the module that asked for it.
    writeFileSync(
      hook,
      `import { registerHooks } from 'node:module'
import { appendFileSync } from 'node:fs'
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context)
    appendFileSync(${JSON.stringify(record)}, (context.parentURL ?? '') + ' ' + result.url + '\\n')
    return result
  },
})
`
    )
    const server = await startServerProcess(
      { RUN_JOBS: 'false' },
      { serverArgs: ['--import=@poppinss/ts-exec', `--import=${hook}`, 'bin/server.ts'] }
    )
    try {
      for (const path of ['/payments/native/v1/config', '/health/ready', '/admin/login']) {
        const response = await fetch(`${server.url}${path}`)
        assert.equal(response.status, 200, path)
        await response.arrayBuffer()
      }
      const lines = readFileSync(record, 'utf8').trim().split('\n')
      assert.isAbove(lines.length, 300, 'the hook saw the modules')
      assert.isTrue(
        lines.some((line) => line.includes('/node_modules/@adonisjs/lucid/')),
        'the hook saw the dependencies'
      )
      for (const name of LOADED_ON_FIRST_USE) {
        const culprit = lines.find((line) => line.split(' ')[1]?.includes(`/node_modules/${name}/`))
        assert.isUndefined(culprit, `${name} is loaded at boot (parent, then module): ${culprit}`)
      }
      // The process's threads by name (Linux): Node's own (MainThread, V8Worker,
      // libuv-worker …; here also ts-exec's loader, "WorkerThread"), no pino transport.
      const pid = server.process.pid!
      const threads = readdirSync(`/proc/${pid}/task`).map((task) =>
        readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim()
      )
      assert.include(threads, 'MainThread', 'the thread names were read')
      assert.notInclude(threads, 'pino.transport', 'the logger runs a transport thread')
    } finally {
      await server.stop()
      rmSync(scratch, { recursive: true, force: true })
    }
  }).timeout(120_000)
})
