import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Abi, Hex } from 'viem'

let compiled: { abi: Abi; bytecode: Hex } | null = null

/**
 * TestToken.sol (next to this file) compiled with the solc package, once per
 * process. Needs no application services: the anvil test helper and
 * bench/detection_latency.ts both use it.
 */
export function compileTestToken(): { abi: Abi; bytecode: Hex } {
  if (compiled) return compiled
  const require = createRequire(import.meta.url)
  const solc = require('solc')
  const source = readFileSync(new URL('./TestToken.sol', import.meta.url), 'utf8')
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'TestToken.sol': { content: source } },
        settings: {
          evmVersion: 'paris',
          optimizer: { enabled: true, runs: 200 },
          outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
        },
      })
    )
  )
  const errors = (output.errors ?? []).filter((entry: { severity: string }) => entry.severity === 'error')
  if (errors.length > 0) throw new Error(errors.map((entry: { message: string }) => entry.message).join('\n'))
  const contract = output.contracts['TestToken.sol'].TestToken
  compiled = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }
  return compiled
}
