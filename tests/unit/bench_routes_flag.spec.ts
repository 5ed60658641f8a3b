import { test } from '@japa/runner'
import { parseBenchRoutes } from '#support/http/bench_routes_flag'

test.group('BENCH_ROUTES', () => {
  test('off unless true; true outside production', ({ assert }) => {
    for (const value of [undefined, '', 'false', '0', ' FALSE '])
      assert.isFalse(parseBenchRoutes('BENCH_ROUTES', value, 'production'))
    for (const value of ['true', '1', 'TRUE']) {
      assert.isTrue(parseBenchRoutes('BENCH_ROUTES', value, 'development'))
      assert.isTrue(parseBenchRoutes('BENCH_ROUTES', value, 'test'))
    }
  })

  test('true under NODE_ENV=production, or a value that is not a boolean, is refused with a message', ({
    assert,
  }) => {
    assert.throws(
      () => parseBenchRoutes('BENCH_ROUTES', 'true', 'production'),
      /BENCH_ROUTES=true is refused when NODE_ENV=production/
    )
    assert.throws(
      () => parseBenchRoutes('BENCH_ROUTES', 'yes please', 'development'),
      /BENCH_ROUTES must be true or false, not "yes please"/
    )
  })
})
