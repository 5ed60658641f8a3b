/*
|--------------------------------------------------------------------------
| Page weight of the cashier
|--------------------------------------------------------------------------
|
|   node --import=@poppinss/ts-exec bench/cashier_weight.ts
|   CASHIER_URL=http://127.0.0.1:3333/cashier/<trade_id> node --import=@poppinss/ts-exec bench/cashier_weight.ts
|
| Without CASHIER_URL it starts the real server (bin/server.ts) on a
| throw-away SQLite file, adds a TRON wallet and a rate, creates a signed
| order and measures its page. Prints the bytes (uncompressed) of the HTML,
| the script and the stylesheet, their total against the 60 KB budget (the
| operator's logo is not counted), and whether the first render needs a
| script: the served HTML must already hold the amount, the address, the
| QR code and the countdown. Exits 1 when over budget or script-dependent.
*/
import { spawn, spawnSync } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const BUDGET = 60 * 1024
const SECRET = 'weight-secret-0123456789abcdef'
const WALLET = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf'
const root = new URL('../', import.meta.url).pathname

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

function sign(params: Record<string, string>) {
  const message = Object.keys(params)
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&')
  return createHmac('sha256', SECRET).update(message).digest('hex')
}

/** Starts a gateway on a temporary database and returns the cashier URL of a new order. */
async function startGateway(): Promise<{ pageUrl: string; stop: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'cashier-weight-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const env = {
    ...process.env,
    DB_CONNECTION: 'sqlite',
    SQLITE_PATH: join(dir, 'weight.sqlite3'),
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    RUN_JOBS: 'false',
    HOST: '127.0.0.1',
    PORT: String(port),
    APP_URL: url,
    INITIAL_API_SECRET: SECRET,
  }
  const ace = (...args: string[]) => {
    const result = spawnSync(process.execPath, ['ace.js', ...args], {
      cwd: root,
      env,
      encoding: 'utf8',
    })
    if (result.status !== 0)
      throw new Error(`ace ${args.join(' ')}: ${result.stderr}${result.stdout}`)
  }
  const server = spawn(process.execPath, ['--import=@poppinss/ts-exec', 'bin/server.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const stop = () => {
    server.kill('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    let up = false
    for (let attempt = 0; attempt < 300 && !up; attempt++) {
      up = await fetch(`${url}/payments/native/v1/config`).then(
        (response) => response.ok,
        () => false
      )
      if (!up) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    if (!up) throw new Error('the server did not start')
    ace('wallet:add', 'tron', WALLET)
    ace('rate:set', 'USDT', 'CNY', '7.25')
    const params: Record<string, string> = {
      pid: '1000',
      order_id: `weight-${Date.now()}`,
      currency: 'cny',
      amount: '100',
      token: 'usdt',
      network: 'tron',
      notify_url: 'https://shop.example/notify',
      redirect_url: 'https://shop.example/back',
    }
    const response = await fetch(`${url}/payments/native/v1/order/create-transaction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...params, signature: sign(params) }),
    })
    const body = (await response.json()) as {
      status_code: number
      data: { trade_id: string }
      message: string
    }
    if (body.status_code !== 200) throw new Error(`create failed: ${body.message}`)
    return { pageUrl: `${url}/cashier/${body.data.trade_id}`, stop }
  } catch (error) {
    stop()
    throw error
  }
}

async function bytesOf(url: string): Promise<{ bytes: number; text: string }> {
  const response = await fetch(url, {
    headers: { 'accept-encoding': 'identity', 'accept-language': 'en' },
  })
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`)
  const buffer = Buffer.from(await response.arrayBuffer())
  return { bytes: buffer.length, text: buffer.toString('utf8') }
}

async function main() {
  const external = process.env.CASHIER_URL
  const gateway = external ? { pageUrl: external, stop: () => {} } : await startGateway()
  try {
    const html = await bytesOf(gateway.pageUrl)
    const base = new URL(gateway.pageUrl)
    const scriptPath = /<script src="([^"]+)"/.exec(html.text)?.[1]
    const stylePath = /<link rel="stylesheet" href="([^"]+)"/.exec(html.text)?.[1]
    if (!scriptPath || !stylePath) throw new Error('the page names no script or no stylesheet')
    const script = await bytesOf(new URL(scriptPath, base).href)
    const style = await bytesOf(new URL(stylePath, base).href)
    const total = html.bytes + script.bytes + style.bytes

    const data = JSON.parse(
      /<script type="application\/json" id="cashier-data">(.*?)<\/script>/s.exec(html.text)![1]
    )
    const firstRender = {
      'amount': html.text.includes(`<span class="digits">${data.order.actual_amount}`),
      'address':
        data.order.receive_address !== '' && html.text.includes(`>${data.order.receive_address}<`),
      'qr': /<svg role="img"[^>]*viewBox/.test(html.text),
      'countdown': /id="countdown"[^>]*>\d+:\d\d</.test(html.text),
      'no inline script': !/<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")[^>]*>/.test(
        html.text
      ),
    }
    const needsScript = Object.values(firstRender).some((ok) => !ok)

    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`.padStart(9)
    console.log(`cashier page ${gateway.pageUrl}`)
    console.log(`  HTML        ${kb(html.bytes)}  (${html.bytes} bytes)`)
    console.log(`  script      ${kb(script.bytes)}  (${script.bytes} bytes)  ${scriptPath}`)
    console.log(`  stylesheet  ${kb(style.bytes)}  (${style.bytes} bytes)  ${stylePath}`)
    console.log(
      `  total       ${kb(total)}  (${total} bytes), budget ${kb(BUDGET)} uncompressed, logo not counted: ${total < BUDGET ? 'OK' : 'OVER'}`
    )
    for (const [what, ok] of Object.entries(firstRender))
      console.log(`  first render: ${what.padEnd(16)} ${ok ? 'yes' : 'NO'}`)
    console.log(`  first render needs a script: ${needsScript ? 'YES' : 'no'}`)
    if (total >= BUDGET || needsScript) process.exitCode = 1
  } finally {
    gateway.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
