import { test } from '@japa/runner'
import { startServerProcess } from '#tests/helpers/processes'

test.group('BENCH_ROUTES', () => {
  test('a production server with BENCH_ROUTES=true refuses to start, saying why', async ({
    assert,
  }) => {
    await assert.rejects(
      () => startServerProcess({ NODE_ENV: 'production', BENCH_ROUTES: 'true' }),
      /BENCH_ROUTES=true is refused when NODE_ENV=production/
    )
  })

  test('outside production the baselines are served (what npm run bench uses)', async ({
    assert,
  }) => {
    const server = await startServerProcess({
      NODE_ENV: 'development',
      BENCH_ROUTES: 'true',
      LOG_LEVEL: 'error',
    })
    try {
      const response = await fetch(`${server.url}/__bench/statements`)
      assert.equal(response.status, 200)
    } finally {
      await server.stop()
    }
    const production = await startServerProcess({ NODE_ENV: 'production' })
    try {
      assert.equal((await fetch(`${production.url}/__bench/statements`)).status, 404)
    } finally {
      await production.stop()
    }
  })
})
