import { test } from '@japa/runner'
import { countdownText, displayAmount, embeddedJson } from '#cashier/cashier_page'
import { siteLook } from '#cashier/site_look'

test.group('Cashier page helpers', () => {
  test('the amount is padded to the precision, never rounded', ({ assert }) => {
    assert.equal(displayAmount('13.8', 2), '13.80')
    assert.equal(displayAmount('13', 2), '13.00')
    assert.equal(displayAmount('0.000123', 6), '0.000123')
    assert.equal(displayAmount('13.8123', 2), '13.8123')
    assert.equal(displayAmount('100', 0), '100')
  })

  test('countdown text', ({ assert }) => {
    assert.equal(countdownText(600_000), '10:00')
    assert.equal(countdownText(59_001), '1:00')
    assert.equal(countdownText(9_000), '0:09')
    assert.equal(countdownText(3_725_000), '1:02:05')
    assert.equal(countdownText(-5_000), '0:00')
  })

  test('embedded JSON cannot close its script element', ({ assert }) => {
    const text = embeddedJson({
      url: 'https://x.example/?q=</script><script>alert(1)</script>',
      line: '\u2028',
    })
    assert.notInclude(text, '<')
    assert.deepEqual(JSON.parse(text), {
      url: 'https://x.example/?q=</script><script>alert(1)</script>',
      line: '\u2028',
    })
  })

  test('site look: only safe URLs and colours get through', ({ assert }) => {
    const base = {
      cashier_name: ' Shop ',
      website_title: '',
      logo_url: '',
      support_link: '',
      background_color: '',
      background_image_url: '',
    }
    assert.equal(siteLook(base).cashierName, 'Shop')
    assert.equal(siteLook(base).backgroundCss, '')
    assert.equal(siteLook({ ...base, logo_url: '/brand/logo.svg' }).logoUrl, '/brand/logo.svg')
    assert.equal(siteLook({ ...base, logo_url: '//evil.example/x.png' }).logoUrl, '')
    assert.equal(
      siteLook({ ...base, logo_url: 'data:image/svg+xml,<svg onload=alert(1)>' }).logoUrl,
      ''
    )
    assert.equal(
      siteLook({ ...base, support_link: 'mailto:help@shop.example' }).supportLink,
      'mailto:help@shop.example'
    )
    assert.equal(siteLook({ ...base, support_link: 'javascript:alert(1)' }).supportLink, '')
    assert.equal(siteLook({ ...base, background_color: 'red;}' }).backgroundCss, '')
    assert.equal(
      siteLook({ ...base, background_color: '#0a0b0c' }).backgroundCss,
      ':root{--page-bg:#0a0b0c}'
    )
    assert.equal(
      siteLook({ ...base, background_image_url: "https://x.example/a'.png" }).backgroundCss,
      ''
    )
  })
})
