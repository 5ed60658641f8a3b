import { test } from '@japa/runner'
import Order, { OrderStatus, type OrderStatusValue } from '#models/order'
import BusinessError from '#exceptions/business_error'
import {
  assertOnChainTarget,
  assertOpen,
  assertPayableBy,
  isOpen,
  isPayableBy,
} from '#services/order_rules'

const NOW = 1_800_000_000_000

function order(status: OrderStatusValue, fields: Partial<Order> = {}): Order {
  const made = new Order()
  made.merge({
    status,
    network: 'tron',
    receiveAddress: 'TXYZ',
    payProvider: '',
    expirationTime: NOW + 60_000,
    ...fields,
  })
  return made
}

/** The refusal `run` throws, checked for the spec's code and today's message. */
function refusal(run: () => void): { code: number; message: string } {
  try {
    run()
  } catch (error) {
    if (!(error instanceof BusinessError)) throw error
    return { code: error.businessCode, message: error.message }
  }
  throw new Error('expected a refusal')
}

test.group('Order rules: open', () => {
  test('the life ends at expiration_time itself: open one millisecond before, closed at it', ({
    assert,
  }) => {
    const waiting = order(OrderStatus.WAITING, { expirationTime: NOW })
    assert.isTrue(isOpen(waiting, NOW - 1))
    assert.isFalse(isOpen(waiting, NOW))
    assert.isFalse(isOpen(waiting, NOW + 1))

    assert.doesNotThrow(() => assertOpen(waiting, 'submit', NOW - 1))
    assert.doesNotThrow(() => assertOpen(waiting, 'switch', NOW - 1))
    for (const action of ['submit', 'switch'] as const) {
      assert.deepEqual(
        refusal(() => assertOpen(waiting, action, NOW)),
        { code: 10013, message: 'Order is not waiting for payment: it has expired' },
        action
      )
    }
  })

  test('open statuses: waiting and choosing; paid and expired are not', ({ assert }) => {
    assert.isTrue(isOpen(order(OrderStatus.WAITING), NOW))
    assert.isTrue(isOpen(order(OrderStatus.SELECTING, { network: '', receiveAddress: '' }), NOW))
    assert.isFalse(isOpen(order(OrderStatus.PAID), NOW))
    // Status 3 is closed even when the clock says its life is not over.
    assert.isFalse(isOpen(order(OrderStatus.EXPIRED), NOW))
  })

  test('a switch takes status 1 or 4; status 2 and 3 are refused with the status named', ({
    assert,
  }) => {
    assert.doesNotThrow(() => assertOpen(order(OrderStatus.WAITING), 'switch', NOW))
    assert.doesNotThrow(() =>
      assertOpen(order(OrderStatus.SELECTING, { network: '', receiveAddress: '' }), 'switch', NOW)
    )
    assert.deepEqual(
      refusal(() => assertOpen(order(OrderStatus.PAID), 'switch', NOW)),
      {
        code: 10013,
        message: 'Order is not waiting for payment (status 2)',
      }
    )
    assert.deepEqual(
      refusal(() => assertOpen(order(OrderStatus.EXPIRED), 'switch', NOW)),
      {
        code: 10013,
        message: 'Order is not waiting for payment (status 3)',
      }
    )
  })

  test('a submitted hash needs an on-chain target first, then status 1, then the life', ({
    assert,
  }) => {
    const placeholder = order(OrderStatus.SELECTING, { network: '', receiveAddress: '' })
    assert.deepEqual(
      refusal(() => assertOpen(placeholder, 'submit', NOW)),
      {
        code: 10013,
        message: 'Order is not waiting for payment: choose a network and token first',
      }
    )
    // The target is judged before the life: an expired placeholder still asks for a choice.
    assert.equal(
      refusal(() =>
        assertOpen(
          order(OrderStatus.SELECTING, { network: '', receiveAddress: '', expirationTime: NOW }),
          'submit',
          NOW
        )
      ).message,
      'Order is not waiting for payment: choose a network and token first'
    )
    assert.deepEqual(
      refusal(() => assertOpen(order(OrderStatus.PAID), 'submit', NOW)),
      {
        code: 10013,
        message: 'Order is not waiting for payment (status 2)',
      }
    )
    // The status is judged before the life: a paid order past its life says it is paid.
    assert.equal(
      refusal(() => assertOpen(order(OrderStatus.PAID, { expirationTime: NOW }), 'submit', NOW))
        .message,
      'Order is not waiting for payment (status 2)'
    )
    assert.doesNotThrow(() => assertOpen(order(OrderStatus.WAITING), 'submit', NOW))
  })

  test('an on-chain target needs a network and an address, and no provider', ({ assert }) => {
    assert.doesNotThrow(() => assertOnChainTarget(order(OrderStatus.WAITING)))
    assert.equal(
      refusal(() => assertOnChainTarget(order(OrderStatus.WAITING, { receiveAddress: '' }))).code,
      10013
    )
    assert.equal(
      refusal(() => assertOnChainTarget(order(OrderStatus.WAITING, { network: '' }))).code,
      10013
    )
    assert.equal(
      refusal(() =>
        assertOnChainTarget(
          order(OrderStatus.WAITING, { payProvider: 'provider', network: 'provider' })
        )
      ).code,
      10013
    )
  })
})

test.group('Order rules: payable', () => {
  test('every path pays a waiting order; only a submitted hash refuses an expired one', ({
    assert,
  }) => {
    for (const source of ['scanner', 'admin', 'provider', 'submit'] as const) {
      assert.isTrue(isPayableBy(order(OrderStatus.WAITING), source), source)
      assert.isFalse(isPayableBy(order(OrderStatus.SELECTING), source), source)
      assert.isFalse(isPayableBy(order(OrderStatus.PAID), source), source)
      assert.equal(isPayableBy(order(OrderStatus.EXPIRED), source), source !== 'submit', source)
    }
  })

  test('the refusal names what is missing', ({ assert }) => {
    assert.deepEqual(
      refusal(() => assertPayableBy(order(OrderStatus.SELECTING), 'admin')),
      {
        code: 10013,
        message: 'Order is not waiting for payment: no network and token chosen yet',
      }
    )
    assert.deepEqual(
      refusal(() => assertPayableBy(order(OrderStatus.EXPIRED), 'submit')),
      {
        code: 10013,
        message: 'Order is not waiting for payment (status 3)',
      }
    )
    assert.doesNotThrow(() => assertPayableBy(order(OrderStatus.EXPIRED), 'scanner'))
  })
})
