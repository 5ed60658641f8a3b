import { test } from '@japa/runner'
import { compatSignature } from '#plugins/compat/compat_signature'
import {
  canonicalString,
  hexDigestsEqual,
  nativeSignature,
  signedNumber,
} from '#support/crypto/signing'

test.group('Signatures: canonical string', () => {
  test('sorts by name in ASCII order, drops empty and null, excludes the signature', ({
    assert,
  }) => {
    const text = canonicalString(
      { pid: '1000', b: '2', a: '1', Z: 'upper', empty: '', nothing: null, signature: 'x' },
      ['signature']
    )
    assert.equal(text, 'Z=upper&a=1&b=2&pid=1000')
  })

  test('keeps values as sent: no URL encoding, no trimming', ({ assert }) => {
    const text = canonicalString({ url: 'https://a.example/x?y=1&z=2', name: ' two words ' }, [])
    assert.equal(text, 'name= two words &url=https://a.example/x?y=1&z=2')
  })
})

test.group('Signatures: vectors', () => {
  test('native HMAC-SHA256 vector', ({ assert }) => {
    const params = {
      pid: '1000',
      order_id: 'A-1',
      currency: 'cny',
      amount: '100',
      token: 'usdt',
      network: 'tron',
      notify_url: 'https://shop.example/notify',
      redirect_url: '',
    }
    // Computed independently with Python's hmac module.
    assert.equal(
      nativeSignature(params, 'my-secret'),
      'c1fb9f911e20bffdc814fc6c2766d4a9b0c5b94f93e4128ef50be3f4872e2b38'
    )
  })

  test('compat MD5 vector: secret appended, sign and sign_type not signed', ({ assert }) => {
    const params = {
      pid: '1000',
      type: 'usdt.tron',
      out_trade_no: 'X1',
      notify_url: 'https://shop.example/n',
      name: 'Book',
      money: '12.50',
      sign: 'whatever',
      sign_type: 'MD5',
    }
    assert.equal(compatSignature(params, 'my-secret'), 'd67e01752b0ded54bdf5c589d6c4bfdf')
  })
})

test.group('Signatures: comparison', () => {
  test('accepts the same digest in either case', ({ assert }) => {
    assert.isTrue(hexDigestsEqual('abcdef01', 'abcdef01'))
    assert.isTrue(hexDigestsEqual('abcdef01', 'ABCDEF01'))
  })

  test('refuses other digests, other lengths, non-hex and non-strings', ({ assert }) => {
    assert.isFalse(hexDigestsEqual('abcdef01', 'abcdef02'))
    assert.isFalse(hexDigestsEqual('abcdef01', 'abcdef0'))
    assert.isFalse(hexDigestsEqual('abcdef01', 'abcdef0z'))
    assert.isFalse(hexDigestsEqual('abcdef01', 12345678))
    assert.isFalse(hexDigestsEqual('abcdef01', undefined))
  })
})

test.group('Signatures: numbers', () => {
  test('a number is signed as it prints in JSON (the server numeric format)', ({ assert }) => {
    assert.equal(signedNumber(100.0), '100')
    assert.equal(signedNumber(12.5), '12.5')
    assert.equal(signedNumber(13.8), '13.8')
    assert.equal(signedNumber(2), '2')
    assert.equal(signedNumber(0.000001), '0.000001')
    assert.equal(signedNumber(137931034.482745), '137931034.482745')
    for (const value of [100, 13.8, 0.000001, 137931034.482745]) {
      assert.equal(signedNumber(value), JSON.stringify({ n: value }).slice(5, -1))
    }
  })

  test('refuses what JSON cannot carry', ({ assert }) => {
    assert.throws(() => signedNumber(Number.NaN), /finite/)
    assert.throws(() => signedNumber(Number.POSITIVE_INFINITY), /finite/)
  })
})
