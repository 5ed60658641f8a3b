import { test } from '@japa/runner'
import i18nManager from '@adonisjs/i18n/services/main'
import { duration, relativeTime, utcTime } from '#services/admin/admin_format'

const NOW = Date.UTC(2026, 0, 10, 12, 0, 0)
const AGO = [
  null,
  NOW - 2_000,
  NOW - 45_000,
  NOW - 12 * 60_000,
  NOW - 3 * 3600_000,
  NOW - 4 * 86_400_000,
]
const LONG = NOW - 1234 * 86_400_000

test.group('Console format in the admin’s language', () => {
  test('without an i18n the texts are English as before; with English they are the same', ({
    assert,
  }) => {
    const en = i18nManager.locale('en')
    assert.deepEqual(
      AGO.map((at) => relativeTime(at, NOW)),
      ['never', 'just now', '45 s ago', '12 min ago', '3 h ago', '4 d ago']
    )
    assert.equal(relativeTime(NOW + 90_000, NOW), 'in 1 min')
    assert.equal(relativeTime(LONG, NOW), '1234 d ago')
    for (const at of [...AGO, NOW + 90_000, LONG])
      assert.equal(relativeTime(at, NOW, en), relativeTime(at, NOW))
    for (const ms of [4_000, 150_000, 9_000_000, 200_000_000])
      assert.equal(duration(ms, en), duration(ms))
    assert.deepEqual(
      [4_000, 150_000, 9_000_000, 200_000_000].map((ms) => duration(ms)),
      ['4 s', '3 min', '2.5 h', '2.3 d']
    )
    assert.equal(utcTime(null), 'never')
    assert.equal(utcTime(null, en), 'never')
    assert.equal(utcTime(NOW, en), '2026-01-10 12:00 UTC')
  })

  test('in Chinese', ({ assert }) => {
    const zh = i18nManager.locale('zh-CN')
    assert.deepEqual(
      AGO.map((at) => relativeTime(at, NOW, zh)),
      ['从未', '刚刚', '45 秒前', '12 分钟前', '3 小时前', '4 天前']
    )
    assert.equal(relativeTime(NOW + 90_000, NOW, zh), '1 分钟后')
    assert.equal(relativeTime(LONG, NOW, zh), '1234 天前')
    assert.equal(duration(9_000_000, zh), '2.5 小时')
    assert.equal(utcTime(null, zh), '从未')
    assert.equal(utcTime(NOW, zh), '2026-01-10 12:00 UTC')
  })
})
