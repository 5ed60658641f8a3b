import { spawn, type ChildProcess } from 'node:child_process'
import {
  encodeFunctionData,
  createPublicClient,
  createWalletClient,
  http,
  parseUnits,
  type Hex,
  type PublicClient,
  type WalletClient,
} from 'viem'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import app from '@adonisjs/core/services/app'
import { compileTestContract, compileTestToken } from '#tests/helpers/evm/test_token'

/** Anvil's first default account (a well-known test key, funded with 10 000 ETH). */
export const PAYER_KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
/** Anvil's second default account: ETH but no test tokens. */
export const EMPTY_PAYER_KEY: Hex =
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'

/** TestToken.sol compiled with the solc package (once per run). */
export const testTokenArtifact = compileTestToken

/** A real EVM node (anvil) on 127.0.0.1 for one test group. */
export class Anvil {
  url = ''
  process: ChildProcess | null = null
  client!: PublicClient
  wallet!: WalletClient
  payer: PrivateKeyAccount = privateKeyToAccount(PAYER_KEY)

  /**
   * `fork`: start as a copy of another node at a block (`--fork-url`), its
   * own blocks after it. `port`: this one rather than any free one.
   *
   * Without `port`, anvil binds a port the system gives it (`--port 0`) and
   * says which: a port found free beforehand could be taken by another
   * shard's node first, and this test would then drive that node. Its
   * output is read until "Listening on", then drained unread.
   */
  async start(chainId = 1, fork?: { url: string; block: bigint }, port?: number) {
    const forking = fork ? ['--fork-url', fork.url, '--fork-block-number', String(fork.block)] : []
    const child = spawn(
      app.makePath('node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil'),
      [
        '--host',
        '127.0.0.1',
        '--port',
        String(port ?? 0),
        '--chain-id',
        String(chainId),
        ...forking,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] }
    )
    this.process = child
    let output = ''
    const listening = new Promise<number>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk
        const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(output)
        if (!match) return
        // Its log of every request from here on is drained unread.
        for (const stream of [child.stdout!, child.stderr!]) {
          stream.removeListener('data', onData)
          stream.resume()
        }
        resolve(Number(match[1]))
      }
      child.stdout!.on('data', onData)
      child.stderr!.on('data', onData)
      child.once('error', reject)
      child.once('exit', (code) => reject(new Error(`anvil exited (${code}):\n${output}`)))
    })
    let timer: NodeJS.Timeout | undefined
    const bound = await Promise.race([
      listening,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`anvil did not listen:\n${output}`)), 60_000)
      }),
    ]).finally(() => clearTimeout(timer))
    this.url = `http://127.0.0.1:${bound}`
    this.client = createPublicClient({ cacheTime: 0, transport: http(this.url) }) as PublicClient
    this.wallet = createWalletClient({ account: this.payer, transport: http(this.url) })
    await this.client.getBlockNumber()
    return this
  }

  async stop() {
    if (!this.process || this.process.exitCode !== null) return
    const exited = new Promise((resolve) => this.process!.once('exit', resolve))
    this.process.kill('SIGKILL')
    await exited
  }

  rpc(method: string, params: unknown[] = []) {
    return this.client.request({ method: method as any, params: params as any })
  }

  async mine(blocks = 1) {
    await this.rpc('anvil_mine', [`0x${blocks.toString(16)}`])
  }

  snapshot(): Promise<string> {
    return this.rpc('evm_snapshot') as Promise<string>
  }

  async revert(id: string) {
    await this.rpc('evm_revert', [id])
  }

  /** Deploys TestToken with `supply` whole tokens to the payer. */
  async deployToken(symbol: string, decimals: number, supply = '1000000'): Promise<`0x${string}`> {
    const { abi, bytecode } = testTokenArtifact()
    const hash = await this.wallet.deployContract({
      abi,
      bytecode,
      args: [`Test ${symbol}`, symbol, decimals, parseUnits(supply, decimals)],
      account: this.payer,
      chain: null,
    })
    const receipt = await this.client.waitForTransactionReceipt({ hash })
    return receipt.contractAddress!
  }

  /**
   * payer → `to`: `amount` tokens (decimal string). Returns the tx hash once
   * mined. `from` another key with an explicit gas limit mines a transfer
   * that reverts (the key holds no tokens).
   */
  async payToken(
    token: `0x${string}`,
    decimals: number,
    to: string,
    amount: string,
    from?: { key: Hex; gas: bigint }
  ) {
    const { abi } = testTokenArtifact()
    const account = from ? privateKeyToAccount(from.key) : this.payer
    const hash = await this.wallet.writeContract({
      address: token,
      abi,
      functionName: 'transfer',
      args: [to, parseUnits(amount, decimals)],
      account,
      chain: null,
      ...(from ? { gas: from.gas } : {}),
    })
    await this.client.waitForTransactionReceipt({ hash })
    return hash
  }

  /** Deploys a contract of tests/helpers/evm/TestPayers.sol (Disperse, Forwarder). */
  async deployPayer(name: 'Disperse' | 'Forwarder'): Promise<`0x${string}`> {
    const { abi, bytecode } = compileTestContract('TestPayers.sol', name)
    const hash = await this.wallet.deployContract({
      abi,
      bytecode,
      account: this.payer,
      chain: null,
    })
    return (await this.client.waitForTransactionReceipt({ hash })).contractAddress!
  }

  /** Calls a TestPayers.sol contract as the payer (with `value` wei); the tx hash once mined, whatever its status. */
  async callPayer(
    name: 'Disperse' | 'Forwarder' | 'TestToken',
    address: `0x${string}`,
    functionName: string,
    args: unknown[],
    value = 0n,
    gas?: bigint
  ) {
    const { abi } =
      name === 'TestToken' ? testTokenArtifact() : compileTestContract('TestPayers.sol', name)
    const hash = await this.wallet.writeContract({
      address,
      abi,
      functionName,
      args,
      value,
      account: this.payer,
      chain: null,
      ...(gas ? { gas } : {}),
    } as any)
    await this.client.waitForTransactionReceipt({ hash })
    return hash
  }

  /**
   * A token payment signed but not sent (raw), so that the very same
   * transaction can be sent to two forks (a reorganisation that includes it
   * again). Its nonce is the payer's next one on the node now.
   */
  async signTokenPayment(
    token: `0x${string}`,
    decimals: number,
    to: string,
    amount: string
  ): Promise<`0x${string}`> {
    const { abi } = testTokenArtifact()
    const request = await this.wallet.prepareTransactionRequest({
      to: token,
      data: encodeFunctionData({
        abi,
        functionName: 'transfer',
        args: [to, parseUnits(amount, decimals)],
      }),
      account: this.payer,
      chain: null,
    } as any)
    return this.wallet.signTransaction({ ...request, account: this.payer, chain: null } as any)
  }

  /** Sends a signed transaction and waits until it is mined; its hash. */
  async sendRaw(raw: `0x${string}`) {
    const hash = await this.client.request({ method: 'eth_sendRawTransaction', params: [raw] })
    await this.client.waitForTransactionReceipt({ hash })
    return hash
  }

  /** payer → `to`: `amount` ETH. Returns the tx hash once mined. */
  async payNative(to: string, amount: string) {
    const hash = await this.wallet.sendTransaction({
      to: to as `0x${string}`,
      value: parseUnits(amount, 18),
      account: this.payer,
      chain: null,
    })
    await this.client.waitForTransactionReceipt({ hash })
    return hash
  }
}
