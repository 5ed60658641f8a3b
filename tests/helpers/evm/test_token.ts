import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Abi, Hex } from 'viem'

export type Compiled = { abi: Abi; bytecode: Hex }

const compiled = new Map<string, Compiled>()

/**
 * TestToken.sol (next to this file) compiled with the solc package, once per
 * process. Needs no application services: the anvil test helper and
 * bench/detection_latency.ts both use it.
 */
export function compileTestToken(): Compiled {
  return compileTestContract('TestToken.sol', 'TestToken')
}

/** A contract of a .sol file next to this one, compiled once per process (solc, offline). */
export function compileTestContract(file: string, name: string): Compiled {
  const key = `${file}:${name}`
  const known = compiled.get(key)
  if (known) return known
  const require = createRequire(import.meta.url)
  const solc = require('solc')
  const source = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8')
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { [file]: { content: source } },
        settings: {
          evmVersion: 'paris',
          optimizer: { enabled: true, runs: 200 },
          outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
        },
      })
    )
  )
  const errors = (output.errors ?? []).filter(
    (entry: { severity: string }) => entry.severity === 'error'
  )
  if (errors.length > 0)
    throw new Error(errors.map((entry: { message: string }) => entry.message).join('\n'))
  const contract = output.contracts[file][name]
  const result: Compiled = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }
  compiled.set(key, result)
  return result
}
