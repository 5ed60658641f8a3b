import walletAdmin from '#services/operators/wallet_admin'
import { compatIntegration } from '#plugins/compat/compat_integration'
import { test } from '@japa/runner'
import Order from '#models/order'
import ApiKey from '#models/api_key'
import paymentService from '#services/payment_service'
import callbackDeliverer from '#callbacks/callback_deliverer'
import callbackFormats from '#callbacks/callback_format'
import { renderGuide } from '#services/admin/integration_examples'
import { REFUNDS_UNSUPPORTED_MESSAGE } from '#plugins/compat/compat_api_controller'
import { resetDatabase } from '#tests/helpers/database'
import { prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK } from '#tests/helpers/fake_chain'
import { TEST_SECRET, TRON_WALLET } from '#tests/helpers/merchant'
import { tradeIdFromLocation } from '#tests/helpers/compat_merchant'
import {
  hasProgram,
  runProgram,
  scratchDirectory,
  startListeningProgram,
} from '#tests/helpers/example_programs'

/**
 * A PHP shop talks to the gateway the way EPay shops do: a small merchant
 * client written here from the EPay protocol (V1, MD5; not the SDK's
 * code), given the base URL the console shows, to which it appends
 * submit.php, mapi.php and api.php. It runs under php-cli (`.ci/run`
 * installs it; without it these tests fail, naming what is missing) with
 * PHP's streams only (no curl, no mbstring; iconv for a GBK shop), both as
 * the shop's command line and as its notify_url / return_url server.
 */
const EPAY_CLIENT_PHP = String.raw`<?php
// A small EPay (V1, MD5) merchant client: the gateway's base URL ends in
// "/", and submit.php, mapi.php and api.php are appended to it.
final class EpayMerchant
{
    public function __construct(private string $baseUrl, private string $pid, private string $key)
    {
    }

    /** MD5 of the sorted non-empty name=value pairs (sign, sign_type left out), the key appended. */
    public function sign(array $params): string
    {
        ksort($params, SORT_STRING);
        $pairs = [];
        foreach ($params as $name => $value) {
            if ($name === 'sign' || $name === 'sign_type' || $value === '' || $value === null) {
                continue;
            }
            $pairs[] = $name . '=' . $value;
        }
        return md5(implode('&', $pairs) . $this->key);
    }

    public function signed(array $params, bool $withSignType = true): array
    {
        $params = ['pid' => $this->pid] + $params;
        $params['sign'] = $this->sign($params);
        if ($withSignType) {
            $params['sign_type'] = 'MD5';
        }
        return $params;
    }

    /** The page jump as a link (GET submit.php?...), not followed. */
    public function jumpByLink(array $params): array
    {
        return $this->redirectOf($this->http('GET', $this->baseUrl . 'submit.php?' . http_build_query($this->signed($params))));
    }

    /** The page jump as the shop's auto-submitting form posts it (here without sign_type). */
    public function jumpByForm(array $params): array
    {
        return $this->redirectOf($this->http('POST', $this->baseUrl . 'submit.php', http_build_query($this->signed($params, false))));
    }

    /** API mode: the order's payment link or QR content. */
    public function apiPay(array $params): ?array
    {
        return $this->json($this->http('POST', $this->baseUrl . 'mapi.php', http_build_query($this->signed($params))));
    }

    public function queryOrder(string $tradeNo): ?array
    {
        $url = $this->baseUrl . 'api.php?act=order&pid=' . $this->pid . '&key=' . $this->key . '&trade_no=' . $tradeNo;
        return $this->json($this->http('GET', $url));
    }

    public function orderStatus(string $tradeNo): bool
    {
        $answer = $this->queryOrder($tradeNo);
        return is_array($answer) && ($answer['code'] ?? null) == 1 && ($answer['status'] ?? null) == 1;
    }

    public function refund(string $tradeNo, string $money): ?array
    {
        $body = 'pid=' . $this->pid . '&key=' . $this->key . '&trade_no=' . $tradeNo . '&money=' . $money;
        return $this->json($this->http('POST', $this->baseUrl . 'api.php?act=refund', $body));
    }

    /** A notification's or a return's parameters: their sign must be the one of the other fields. */
    public function verify(array $params): bool
    {
        return isset($params['sign']) && is_string($params['sign']) && $this->sign($params) === $params['sign'];
    }

    private function http(string $method, string $url, ?string $body = null): array
    {
        $headers = "Accept: */*\r\n" . ($body === null ? '' : "Content-Type: application/x-www-form-urlencoded\r\n");
        $context = stream_context_create(['http' => [
            'method' => $method,
            'header' => $headers,
            'content' => $body ?? '',
            'ignore_errors' => true,
            'follow_location' => 0,
            'timeout' => 20,
        ]]);
        $text = file_get_contents($url, false, $context);
        $lines = function_exists('http_get_last_response_headers') ? http_get_last_response_headers() : ($http_response_header ?? []);
        $status = 0;
        $found = [];
        foreach ($lines ?? [] as $line) {
            if (preg_match('#^HTTP/\S+ (\d{3})#', $line, $match)) {
                $status = (int) $match[1];
                continue;
            }
            $parts = explode(':', $line, 2);
            $found[strtolower(trim($parts[0]))] = trim($parts[1] ?? '');
        }
        return ['status' => $status, 'headers' => $found, 'body' => $text === false ? '' : $text];
    }

    private function redirectOf(array $answer): array
    {
        return ['status' => $answer['status'], 'location' => $answer['headers']['location'] ?? null, 'body' => $answer['body']];
    }

    private function json(array $answer): ?array
    {
        $decoded = json_decode($answer['body'], true);
        return is_array($decoded) ? $decoded : null;
    }
}

$merchant = new EpayMerchant((string) getenv('EPAY_URL'), (string) getenv('EPAY_PID'), (string) getenv('EPAY_KEY'));

if (PHP_SAPI === 'cli-server') {
    // The shop's notify_url and return_url.
    header('Content-Type: text/plain');
    $path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
    if ($path === '/notify') {
        echo $merchant->verify($_GET) && ($_GET['trade_status'] ?? '') === 'TRADE_SUCCESS' ? 'success' : 'fail';
    } elseif ($path === '/return') {
        echo $merchant->verify($_GET) ? 'verified ' . ($_GET['out_trade_no'] ?? '') : 'invalid';
    } else {
        http_response_code(404);
    }
    return;
}

// php epay_client.php COMMAND '{"field":"value"}'
$input = json_decode($argv[2] ?? '{}', true) ?: [];
if (getenv('EPAY_CHARSET') === 'GBK') {
    // A GBK shop holds its text in GBK: signed and sent as those bytes.
    foreach ($input as $name => $value) {
        $input[$name] = iconv('UTF-8', 'GBK', (string) $value);
    }
}
switch ($argv[1] ?? '') {
    case 'jump-link':
        $result = $merchant->jumpByLink($input);
        break;
    case 'jump-form':
        $result = $merchant->jumpByForm($input);
        break;
    case 'api-pay':
        $result = $merchant->apiPay($input);
        break;
    case 'query':
        $result = ['answer' => $merchant->queryOrder($input['trade_no']), 'paid' => $merchant->orderStatus($input['trade_no'])];
        break;
    case 'refund':
        $result = $merchant->refund($input['trade_no'], $input['money']);
        break;
    default:
        fwrite(STDERR, "usage: php epay_client.php jump-link|jump-form|api-pay|query|refund JSON\n");
        exit(2);
}
echo json_encode($result, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
`

const PHP_PRESENT = hasProgram('php')
function requirePhp() {
  if (!PHP_PRESENT)
    throw new Error('php is not installed (apt-get install php-cli); CI must have it')
}

/** The base URL as the console's integration page shows it for this installation. */
function adminBaseUrl() {
  const guide = renderGuide({
    pid: '1000',
    baseUrl: String(process.env.APP_URL),
    asset: null,
    sections: [compatIntegration],
  })
  return guide.sections[0].data.baseUrl as string
}

type Shop = {
  url: string
  run(command: string, input: Record<string, string>, env?: Record<string, string>): Promise<any>
}

/** The shop: its notify/return server running, its command line at hand. */
async function startShop(
  credentials: { pid: string; key: string },
  cleanup: (fn: () => Promise<void>) => void
): Promise<Shop> {
  requirePhp()
  const scratch = await scratchDirectory()
  const file = await scratch.write('epay_client.php', EPAY_CLIENT_PHP)
  const env = { EPAY_URL: adminBaseUrl(), EPAY_PID: credentials.pid, EPAY_KEY: credentials.key }
  const server = await startListeningProgram(
    'php',
    (port) => ['-S', `127.0.0.1:${port}`, file],
    () => env,
    { cwd: scratch.path }
  )
  cleanup(async () => {
    await server.stop()
    await scratch.cleanup()
  })
  return {
    url: server.url,
    async run(command, input, extra = {}) {
      const result = await runProgram(
        'php',
        [file, command, JSON.stringify(input)],
        { ...env, ...extra },
        { cwd: scratch.path }
      )
      if (result.code !== 0)
        throw new Error(
          `php ${command} exited ${result.code}: ${result.stdout}${result.stderr}\n${server.output()}`
        )
      return JSON.parse(result.stdout)
    },
  }
}

function orderFields(shop: Shop, overrides: Record<string, string>) {
  return {
    type: `usdt.${FAKE_NETWORK}`,
    notify_url: `${shop.url}/notify`,
    return_url: `${shop.url}/return`,
    name: '测试商品',
    money: '100.00',
    sitename: 'PHP shop',
    ...overrides,
  }
}

test.group('Compat: a PHP shop following the EPay protocol', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await walletAdmin.add('tron', TRON_WALLET)
  })

  test("the console's base URL is what an EPay SDK wants: it ends in create-transaction/", async ({
    assert,
  }) => {
    assert.equal(
      adminBaseUrl(),
      `${process.env.APP_URL}/payments/compat/v1/order/create-transaction/`
    )
  })

  test('page jump, API mode, order query, notification and return, end to end', async ({
    assert,
    cleanup,
  }) => {
    const shop = await startShop({ pid: '1000', key: TEST_SECRET }, cleanup)

    // page jump, as a link and as a form: 302 to the cashier
    for (const command of ['jump-link', 'jump-form']) {
      const jump = await shop.run(command, orderFields(shop, { out_trade_no: `PHP-${command}` }))
      assert.equal(jump.status, 302, JSON.stringify(jump))
      const order = await Order.findByOrFail('trade_id', tradeIdFromLocation(jump.location))
      assert.deepEqual(
        [order.orderId, order.name, order.paymentType],
        [`PHP-${command}`, '测试商品', 'Compat']
      )
    }

    // API mode: the cashier link and the wallet URI
    const paid = await shop.run(
      'api-pay',
      orderFields(shop, { out_trade_no: 'PHP-API-1', type: 'usdt.tron' })
    )
    assert.equal(paid.code, 1, JSON.stringify(paid))
    assert.equal(paid.payurl, `${process.env.APP_URL}/pay/checkout-counter/${paid.trade_no}`)
    assert.include(paid.qrcode, TRON_WALLET)
    const order = await Order.findByOrFail('trade_id', paid.trade_no)

    // query: not paid, then paid
    const before = await shop.run('query', { trade_no: paid.trade_no })
    assert.isFalse(before.paid)
    assert.equal(before.answer.out_trade_no, 'PHP-API-1')
    await paymentService.markPaid(order.id, {
      reference: 'tx-php-1',
      source: 'scanner',
      paidAt: Date.now(),
    })
    const after = await shop.run('query', { trade_no: paid.trade_no })
    assert.isTrue(after.paid, JSON.stringify(after))

    // the notification: the shop verifies it and answers success
    const report = await callbackDeliverer.deliverFor(order.id)
    assert.equal(report.delivered, 1, JSON.stringify(report))
    assert.equal((await Order.findOrFail(order.id)).callbackStatus, 'delivered')
    // a forged one (another amount) is refused by the same check
    const callback = callbackFormats
      .get('compat')
      .build(await Order.findOrFail(order.id), await ApiKey.findByOrFail('pid', '1000'))
    const forged = new URL(callback.url)
    forged.searchParams.set('money', '1.0000')
    assert.equal(await (await fetch(forged)).text(), 'fail')
    assert.equal(await (await fetch(callback.url)).text(), 'success')

    // the return: the gateway sends the payer to return_url, the shop verifies it
    const back = await fetch(`${process.env.APP_URL}/pay/return/${order.tradeId}`, {
      redirect: 'manual',
    })
    const location = back.headers.get('location') ?? ''
    assert.isTrue(location.startsWith(`${shop.url}/return?`), location)
    assert.equal(await (await fetch(location)).text(), 'verified PHP-API-1')

    // refunds: refused (code -1, never EPay's 0 of a refund done)
    const refund = await shop.run('refund', { trade_no: paid.trade_no, money: '100.00' })
    assert.deepEqual(refund, { code: -1, msg: REFUNDS_UNSUPPORTED_MESSAGE })
  })

  test('a GBK shop: its GBK name is signed and sent as GBK, and stored as text', async ({
    assert,
    cleanup,
  }) => {
    const shop = await startShop({ pid: '1000', key: TEST_SECRET }, cleanup)
    const gbk = { EPAY_CHARSET: 'GBK' }
    const created = await shop.run('api-pay', orderFields(shop, { out_trade_no: 'PHP-GBK-1' }), gbk)
    assert.equal(created.code, 1, JSON.stringify(created))
    assert.equal((await Order.findByOrFail('trade_id', created.trade_no)).name, '测试商品')
    const jump = await shop.run('jump-form', orderFields(shop, { out_trade_no: 'PHP-GBK-2' }), gbk)
    assert.equal(jump.status, 302, JSON.stringify(jump))
    assert.equal(
      (await Order.findByOrFail('trade_id', tradeIdFromLocation(jump.location))).name,
      '测试商品'
    )
  })

  test('a shop with the wrong key: mapi.php code -1, the query never says paid', async ({
    assert,
    cleanup,
  }) => {
    const shop = await startShop({ pid: '1000', key: 'not-the-key-of-pid-1000' }, cleanup)
    const refused = await shop.run('api-pay', orderFields(shop, { out_trade_no: 'PHP-BAD-1' }))
    assert.equal(refused.code, -1)
    assert.match(refused.msg, /^Signature verification failed/)

    const good = await startShop({ pid: '1000', key: TEST_SECRET }, cleanup)
    const created = await good.run('api-pay', orderFields(good, { out_trade_no: 'PHP-BAD-2' }))
    const order = await Order.findByOrFail('trade_id', created.trade_no)
    await paymentService.markPaid(order.id, {
      reference: 'tx-php-2',
      source: 'scanner',
      paidAt: Date.now(),
    })
    const query = await shop.run('query', { trade_no: created.trade_no })
    assert.isFalse(query.paid)
    assert.equal(query.answer.code, -1)
  })
})
