import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import chainScanner from '#services/chain_scanner'
import reorgFlags from '#services/reorg_flags'
import { nextUtcMidnight } from '#chains/rpc_pool'
import { DatabaseEndpointMemory } from '#chains/endpoint_memory'
import type { SeenAmount } from '#chains/chain_family'
import { resetDatabase } from '#tests/helpers/database'
import { createAdminUser } from '#tests/helpers/admin'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import {
  FAKE_NETWORK,
  FAKE_USDT,
  FAKE_WALLET,
  fakeFamily,
  fakeTransfer,
} from '#tests/helpers/fake_chain'
import { adminUrl } from '#admin/admin_paths'
import { latePayment, reorgNotice } from '#tests/helpers/unmatched_payments'
import {
  DESKTOP,
  PHONE,
  checkAdminPage,
  closeBrowser,
  adminSignIn,
  newPage,
  screenshot,
} from '#tests/helpers/browser'

const INFURA_URL = 'https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef'
const ALCHEMY_URL = 'https://eth-mainnet.g.alchemy.com/v2/alchemy-key-0123456789abcdef'
const OWN_NODE = 'https://rpc.example-node.net'
const API_KEY = 'browser-endpoint-key-abcdefghij'

let references = 0

/** A paid order whose block 120 a reorganisation replaced; `foundAgainIn` then scans it again in that block. */
async function reorgedOrder(
  client: any,
  position: string,
  foundAgainIn: string | null = null,
  amount = 100
) {
  // Each its own amount: a transfer of a paid order's amount would be kept as unmatched, not pay a newer order.
  const order = await newOrder(client, { name: 'Espresso machine', amount })
  const reference = `0x${String(++references).padStart(4, '0')}${'9e'.repeat(30)}`
  const transfer = fakeTransfer(reference, order.actualAmount, {
    position,
    block: { number: '120', hash: `0x${'a1'.repeat(32)}` },
  })
  fakeFamily.pending = [transfer]
  await chainScanner.scan({ network: FAKE_NETWORK })
  await reorgFlags.flag(await Chain.findByOrFail('network', FAKE_NETWORK), {
    ancestor: '100',
    replacedUpTo: '130',
  })
  if (foundAgainIn) {
    fakeFamily.pending = [
      { ...transfer, block: { number: foundAgainIn, hash: `0x${'b2'.repeat(32)}` } },
    ]
    await chainScanner.scan({ network: FAKE_NETWORK })
  }
  const flag = await reorgNotice(reference)
  return { order: await Order.findOrFail(order.id), flag }
}

function seen(reference: string, amount: string, height: string): SeenAmount {
  return { reference, position: 'log:0', to: FAKE_WALLET, contract: FAKE_USDT, amount, height }
}

async function readAt(height: string, amount: string, amounts: SeenAmount[] = []) {
  // Made due: the last reading an hour old.
  await db.from('balance_readings').update({ read_at: Date.now() - 3_600_000 })
  fakeFamily.seen = amounts
  fakeFamily.balances = {
    height,
    readings: [{ address: FAKE_WALLET, contract: FAKE_USDT, amount }],
  }
  await chainScanner.scan({ network: FAKE_NETWORK })
}

test.group(
  'Console in Chromium: RPC endpoint holds, reorganised payments, the inbox kinds',
  (group) => {
    group.each.setup(async () => {
      await resetDatabase()
      await prepareLifecycle()
    })
    group.teardown(() => closeBrowser())
    group.each.timeout(180_000)

    test('the chain page: an endpoint out of daily credits, one rate limited, one fine with its log range', async ({
      assert,
    }) => {
      await chainAdmin.set('ethereum', {
        rpcUrls: [INFURA_URL, ALCHEMY_URL, OWN_NODE],
        apiKey: API_KEY,
      })
      const memory = await DatabaseEndpointMemory.load(
        'ethereum',
        [INFURA_URL, ALCHEMY_URL, OWN_NODE],
        API_KEY
      )
      memory.remember(INFURA_URL, {
        holdUntil: nextUtcMidnight(),
        holdKind: 'credits',
        holdReason:
          'its daily credits are spent (HTTP 402) until 00:00 UTC: HTTP 402 Payment Required: {"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"daily request count exceeded, request rate limited"}}',
        logRange: null,
      })
      memory.remember(ALCHEMY_URL, {
        holdUntil: Date.now() + 45 * 60_000,
        holdKind: 'rate_limited',
        holdReason: 'rate limited: it asked for 2700 s (Retry-After)',
        logRange: 500,
      })
      memory.remember(OWN_NODE, {
        holdUntil: Date.now() - 3_600_000,
        holdKind: 'rate_limited',
        holdReason: 'rate limited',
        logRange: 10_000,
      })
      await memory.settled()

      const user = await createAdminUser()
      const { context, page } = await newPage(DESKTOP)
      try {
        await adminSignIn(page, user)
        await page.goto(adminUrl('/chains/ethereum'))
        const card = page.getByRole('region', { name: 'RPC endpoints', exact: true })
        const rows = card
          .getByRole('list', { name: 'RPC endpoints of ethereum' })
          .getByRole('listitem')
        assert.equal(await rows.count(), 3)
        const first = await rows.nth(0).innerText()
        assert.include(first, 'https://mainnet.infura.io/v3/***')
        assert.include(first, 'Daily credits spent (HTTP 402) until 00:00 UTC')
        assert.include(await rows.nth(1).innerText(), 'Rate limited')
        assert.include(await rows.nth(1).innerText(), 'up to 500 blocks')
        assert.include(await rows.nth(2).innerText(), 'Available')
        assert.include(await rows.nth(2).innerText(), 'up to 10,000 blocks')
        assert.notInclude(await page.content(), '0123456789abcdef0123456789abcdef')
        assert.notInclude(await page.content(), API_KEY)
        // The status card links to the endpoints.
        await page.getByRole('link', { name: '3 endpoints' }).click()
        assert.isTrue(page.url().endsWith('#endpoints'))
        // Full-page screenshots from the top (a page scrolled to #endpoints would show its sticky bar midway).
        await page.goto(adminUrl('/chains/ethereum'))
        await checkAdminPage(page, assert, 'chain-endpoints')
        await page.goto(adminUrl('/chains'))
        await checkAdminPage(page, assert, 'chains-held')
        await page.getByRole('link', { name: '2 held RPC endpoints of ethereum' }).click()
        await page.waitForURL((url) => url.pathname.endsWith('/chains/ethereum'))
      } finally {
        await context.close()
      }
    })

    test('the order page: a payment not found again, and one found again, each with its notice', async ({
      client,
      assert,
    }) => {
      const gone = await reorgedOrder(client, 'log:3')
      const moved = await reorgedOrder(client, 'ix:2.1', '125', 250)
      const user = await createAdminUser()
      for (const scheme of ['light', 'dark'] as const) {
        const { context, page } = await newPage(DESKTOP, { colorScheme: scheme })
        try {
          await adminSignIn(page, user)
          await page.goto(adminUrl(`/orders/${gone.order.tradeId}`))
          const notice = page.getByRole('region', {
            name: 'This order’s payment may be gone: a reorganisation replaced its block',
          })
          assert.isTrue(await notice.isVisible())
          assert.include(await notice.innerText(), 'came from block 120')
          assert.include(await notice.innerText(), 'Not found again in the new chain yet.')
          assert.include(
            await page.getByRole('region', { name: 'Payment reference' }).innerText(),
            'log 3'
          )
          if (scheme === 'light') await checkAdminPage(page, assert, 'order-reorged')
          else await screenshot(page, 'console-order-reorged-dark')

          await page.goto(adminUrl(`/orders/${moved.order.tradeId}`))
          const found = page.getByRole('region', {
            name: 'This order’s payment was moved by a reorganisation',
          })
          assert.include(await found.innerText(), 'Found again in block 125')
          assert.include(
            await page.getByRole('region', { name: 'Payment reference' }).innerText(),
            'instruction 2.1'
          )
          if (scheme === 'light') {
            await checkAdminPage(page, assert, 'order-reorg-found-again')
            // The notice's link opens the inbox row.
            await page
              .getByRole('link', { name: `See unmatched payment #${moved.flag.id}` })
              .click()
            await page.waitForURL((url) => url.pathname.endsWith(`/unmatched/${moved.flag.id}`))
          } else {
            await screenshot(page, 'console-order-reorg-found-again-dark')
          }
        } finally {
          await context.close()
        }
      }
    })

    test('the inbox: every kind listed in words, filtered by kind; a notice marked as handled; the gateway’s own set-aside', async ({
      client,
      assert,
    }) => {
      // Paid nothing: a transfer after its order's life ended.
      await latePayment(client, '0xinboxlate0000000000000000000000000000000000000000000000000001')
      // Unreadable.
      fakeFamily.unreadable = [
        {
          reference: '0xinboxunread00000000000000000000000000000000000000000000000002',
          to: FAKE_WALLET,
          contract: FAKE_USDT,
          timestamp: Date.now(),
          reason: 'the node returned no receipt for it',
        },
      ]
      await chainScanner.scan({ network: FAKE_NETWORK })
      // Unexplained: +25 between heights 100 and 110; then +7 between 110 and 120, explained late (set aside by the gateway).
      await readAt('100', '0')
      await readAt('110', '25')
      await readAt('120', '32')
      fakeFamily.seen = [seen('0xseenlate', '7', '115')]
      await chainScanner.scan({ network: FAKE_NETWORK })
      // Reorganised.
      const { flag } = await reorgedOrder(client, 'log:3', null, 250)
      const [excess] = await db
        .from('unmatched_payments')
        .where('kind', 'unexplained')
        .whereNull('dismissed_at')

      const user = await createAdminUser()
      const { context, page } = await newPage(DESKTOP)
      try {
        await adminSignIn(page, user)
        await page.goto(adminUrl('/unmatched'))
        const table = page.getByRole('region', { name: 'Unmatched payments, newest first' })
        for (const kind of [
          'Paid nothing',
          'Unreadable',
          'Unexplained incoming amount',
          'Reorganised payment',
        ]) {
          assert.include(await table.innerText(), kind)
        }
        await checkAdminPage(page, assert, 'unmatched-kinds')
        await page.goto(adminUrl('/unmatched?state=all'))
        await checkAdminPage(page, assert, 'unmatched-kinds-all')

        // Filter by kind with the form.
        await page.setViewportSize(DESKTOP)
        await page.goto(adminUrl('/unmatched'))
        await page.getByLabel('Kind').selectOption('reorged')
        await page.getByRole('button', { name: 'Filter' }).click()
        await page.waitForURL((url) => url.searchParams.get('kind') === 'reorged')
        assert.equal(await table.locator('tbody tr').count(), 1)
        await page.getByLabel('Kind').selectOption('transfer')
        await page.getByLabel('State').selectOption('assigned')
        await page.getByRole('button', { name: 'Filter' }).click()
        await page.waitForURL((url) => url.searchParams.get('state') === 'assigned')
        assert.include(
          await page.locator('.empty').innerText(),
          'No unmatched payment matches these filters'
        )
        await checkAdminPage(page, assert, 'unmatched-kinds-empty')

        await page.goto(adminUrl(`/unmatched/${excess.id}`))
        assert.equal(await page.getByRole('button', { name: 'Pay this order' }).count(), 0)
        await checkAdminPage(page, assert, 'unmatched-unexplained')
        const [setAside] = await db.from('unmatched_payments').where('dismissed_by', 'system')
        await page.goto(adminUrl(`/unmatched/${setAside.id}`))
        assert.include(await page.locator('main').innerText(), 'Set aside by the gateway itself')
        await checkAdminPage(page, assert, 'unmatched-set-aside')

        // Mark the reorganised payment as handled, on a phone.
        await page.goto(adminUrl(`/unmatched/${flag.id}`))
        await checkAdminPage(page, assert, 'unmatched-reorged')
        await page.setViewportSize(PHONE)
        await page
          .getByLabel('Note')
          .fill('Found again by the scanner; the merchant was told nothing changes.')
        await page.getByRole('button', { name: 'Mark as handled' }).click()
        await page.waitForURL((url) => url.pathname.endsWith(`/unmatched/${flag.id}`))
        assert.include(
          await page.getByRole('status').first().innerText(),
          `Unmatched payment #${flag.id} is marked as handled.`
        )
        assert.include(await page.locator('main').innerText(), `Marked as handled by ${user.email}`)
        await screenshot(page, 'console-unmatched-reorged-handled-phone')
      } finally {
        await context.close()
      }
    })
  }
)
