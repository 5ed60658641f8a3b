import { test } from '@japa/runner'
import {
  base32Decode,
  base32Encode,
  hotp,
  matchTotp,
  newTotpSecret,
  otpauthUri,
  totpCode,
} from '#support/crypto/totp'

const SHA1_KEY = Buffer.from('12345678901234567890')
const SHA256_KEY = Buffer.from('12345678901234567890123456789012')
const SHA512_KEY = Buffer.from('1234567890123456789012345678901234567890123456789012345678901234')

test.group('TOTP (RFC 6238 / RFC 4226)', () => {
  test('RFC 4226 appendix D: HOTP values of counters 0 to 9', ({ assert }) => {
    const expected = [
      '755224',
      '287082',
      '359152',
      '969429',
      '338314',
      '254676',
      '287922',
      '162583',
      '399871',
      '520489',
    ]
    assert.deepEqual(
      expected.map((_, counter) => hotp(SHA1_KEY, counter)),
      expected
    )
  })

  test('RFC 6238 appendix B: 8-digit codes for SHA-1, SHA-256 and SHA-512', ({ assert }) => {
    const vectors: [number, string, string, string][] = [
      [59, '94287082', '46119246', '90693936'],
      [1111111109, '07081804', '68084774', '25091201'],
      [1111111111, '14050471', '67062674', '99943326'],
      [1234567890, '89005924', '91819424', '93441116'],
      [2000000000, '69279037', '90698825', '38618901'],
      [20000000000, '65353130', '77737706', '47863826'],
    ]
    for (const [seconds, sha1, sha256, sha512] of vectors) {
      assert.equal(totpCode(SHA1_KEY, seconds * 1000, 8, 'sha1'), sha1)
      assert.equal(totpCode(SHA256_KEY, seconds * 1000, 8, 'sha256'), sha256)
      assert.equal(totpCode(SHA512_KEY, seconds * 1000, 8, 'sha512'), sha512)
    }
  })

  test('a code is accepted one step either side of now, not two', ({ assert }) => {
    const now = 1111111111_000
    const step = Math.floor(now / 30_000)
    assert.equal(matchTotp(SHA1_KEY, hotp(SHA1_KEY, step), now, null), step)
    assert.equal(matchTotp(SHA1_KEY, hotp(SHA1_KEY, step - 1), now, null), step - 1)
    assert.equal(matchTotp(SHA1_KEY, hotp(SHA1_KEY, step + 1), now, null), step + 1)
    assert.isNull(matchTotp(SHA1_KEY, hotp(SHA1_KEY, step - 2), now, null))
    assert.isNull(matchTotp(SHA1_KEY, hotp(SHA1_KEY, step + 2), now, null))
  })

  test('replay guard: a step at or before the last accepted one is refused', ({ assert }) => {
    const now = 1234567890_000
    const step = Math.floor(now / 30_000)
    const code = hotp(SHA1_KEY, step)
    assert.isNull(matchTotp(SHA1_KEY, code, now, step))
    assert.isNull(matchTotp(SHA1_KEY, hotp(SHA1_KEY, step - 1), now, step - 1))
    assert.equal(matchTotp(SHA1_KEY, code, now, step - 1), step)
  })

  test('malformed codes are refused; spaces are tolerated', ({ assert }) => {
    const now = 59_000
    const code = hotp(SHA1_KEY, 1)
    assert.equal(matchTotp(SHA1_KEY, `${code.slice(0, 3)} ${code.slice(3)}`, now, null), 1)
    for (const bad of ['', '12345', '1234567', 'abcdef', `${code}0`]) {
      assert.isNull(matchTotp(SHA1_KEY, bad, now, null), bad)
    }
  })

  test('base32 (RFC 4648 vectors), a new secret of 160 bits, the otpauth URI', ({ assert }) => {
    const vectors: [string, string][] = [
      ['f', 'MY'],
      ['fo', 'MZXQ'],
      ['foo', 'MZXW6'],
      ['foob', 'MZXW6YQ'],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI'],
    ]
    for (const [plain, encoded] of vectors) {
      assert.equal(base32Encode(Buffer.from(plain)), encoded)
      assert.equal(base32Decode(encoded)!.toString(), plain)
    }
    assert.equal(base32Decode('mzxw 6ytb oi==')!.toString(), 'foobar')
    assert.isNull(base32Decode('MZXW1'))
    const secret = newTotpSecret()
    assert.lengthOf(base32Decode(secret)!, 20)
    assert.notEqual(newTotpSecret(), secret)
    const uri = new URL(otpauthUri('Gateway', 'ops@example.test', secret))
    assert.equal(uri.protocol, 'otpauth:')
    assert.equal(uri.host, 'totp')
    assert.equal(decodeURIComponent(uri.pathname), '/Gateway:ops@example.test')
    assert.equal(uri.searchParams.get('secret'), secret)
    assert.equal(uri.searchParams.get('period'), '30')
    assert.equal(uri.searchParams.get('digits'), '6')
  })
})
