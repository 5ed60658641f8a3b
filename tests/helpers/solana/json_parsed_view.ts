import { getBase58Decoder, isSome } from '@solana/kit'
import {
  SystemInstruction,
  getAllocateInstructionDataDecoder,
  getAssignInstructionDataDecoder,
  getCreateAccountInstructionDataDecoder,
  getTransferSolInstructionDataDecoder,
  identifySystemInstruction,
  SYSTEM_PROGRAM_ADDRESS,
} from '@solana-program/system'
import {
  ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
  TOKEN_PROGRAM_ADDRESS,
  TokenInstruction,
  getInitializeAccount3InstructionDataDecoder,
  getInitializeMint2InstructionDataDecoder,
  getMintToCheckedInstructionDataDecoder,
  getTransferCheckedInstructionDataDecoder,
  getTransferInstructionDataDecoder,
  identifyTokenInstruction,
} from '@solana-program/token'
import { Decimal } from '#support/text/money'
import { TOKEN_2022_PROGRAM_ADDRESS } from '#plugins/solana/solana_programs'
import type {
  CompiledInstructionView,
  RecordedTransaction,
} from '#tests/helpers/solana/solana_test_chain'

type Info = Record<string, unknown>

/** uiTokenAmount / tokenAmount as the RPC prints them. */
function tokenAmount(amount: bigint, decimals: number) {
  const uiAmountString = new Decimal(amount.toString()).shiftedBy(-decimals).toFixed()
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString }
}

function systemInfo(data: Uint8Array, accounts: string[]): [string, Info] | null {
  switch (identifySystemInstruction(data)) {
    case SystemInstruction.TransferSol: {
      const { amount } = getTransferSolInstructionDataDecoder().decode(data)
      return [
        'transfer',
        { source: accounts[0], destination: accounts[1], lamports: Number(amount) },
      ]
    }
    case SystemInstruction.CreateAccount: {
      const decoded = getCreateAccountInstructionDataDecoder().decode(data)
      return [
        'createAccount',
        {
          source: accounts[0],
          newAccount: accounts[1],
          lamports: Number(decoded.lamports),
          space: Number(decoded.space),
          owner: decoded.programAddress,
        },
      ]
    }
    case SystemInstruction.Allocate:
      return [
        'allocate',
        {
          account: accounts[0],
          space: Number(getAllocateInstructionDataDecoder().decode(data).space),
        },
      ]
    case SystemInstruction.Assign:
      return [
        'assign',
        {
          account: accounts[0],
          owner: getAssignInstructionDataDecoder().decode(data).programAddress,
        },
      ]
    default:
      return null
  }
}

function tokenInfo(data: Uint8Array, accounts: string[]): [string, Info] | null {
  switch (identifyTokenInstruction(data)) {
    case TokenInstruction.Transfer: {
      const { amount } = getTransferInstructionDataDecoder().decode(data)
      return [
        'transfer',
        {
          source: accounts[0],
          destination: accounts[1],
          authority: accounts[2],
          amount: amount.toString(),
        },
      ]
    }
    case TokenInstruction.TransferChecked: {
      const { amount, decimals } = getTransferCheckedInstructionDataDecoder().decode(data)
      return [
        'transferChecked',
        {
          source: accounts[0],
          mint: accounts[1],
          destination: accounts[2],
          authority: accounts[3],
          tokenAmount: tokenAmount(amount, decimals),
        },
      ]
    }
    case TokenInstruction.InitializeMint2: {
      const decoded = getInitializeMint2InstructionDataDecoder().decode(data)
      const info: Info = {
        mint: accounts[0],
        decimals: decoded.decimals,
        mintAuthority: decoded.mintAuthority,
      }
      if (isSome(decoded.freezeAuthority)) info.freezeAuthority = decoded.freezeAuthority.value
      return ['initializeMint2', info]
    }
    case TokenInstruction.MintToChecked: {
      const { amount, decimals } = getMintToCheckedInstructionDataDecoder().decode(data)
      const info = {
        mint: accounts[0],
        account: accounts[1],
        mintAuthority: accounts[2],
        tokenAmount: tokenAmount(amount, decimals),
      }
      return ['mintToChecked', info]
    }
    case TokenInstruction.InitializeAccount3: {
      const { owner } = getInitializeAccount3InstructionDataDecoder().decode(data)
      return ['initializeAccount3', { account: accounts[0], mint: accounts[1], owner }]
    }
    case TokenInstruction.GetAccountDataSize:
      return ['getAccountDataSize', { mint: accounts[0], extensionTypes: ['immutableOwner'] }]
    case TokenInstruction.InitializeImmutableOwner:
      return ['initializeImmutableOwner', { account: accounts[0] }]
    case TokenInstruction.CloseAccount:
      return [
        'closeAccount',
        { account: accounts[0], destination: accounts[1], owner: accounts[2] },
      ]
    default:
      return null
  }
}

function associatedTokenInfo(data: Uint8Array, accounts: string[]): [string, Info] | null {
  const kind = data.length === 0 ? 0 : data[0]
  if (kind === 0 || kind === 1) {
    const [source, account, wallet, mint, systemProgram, tokenProgram] = accounts
    return [
      kind === 0 ? 'create' : 'createIdempotent',
      { source, account, wallet, mint, systemProgram, tokenProgram },
    ]
  }
  if (kind === 2) {
    return [
      'recoverNested',
      {
        nestedSource: accounts[0],
        nestedMint: accounts[1],
        destination: accounts[2],
        nestedOwner: accounts[3],
        ownerMint: accounts[4],
        wallet: accounts[5],
        tokenProgram: accounts[6],
      },
    ]
  }
  return null
}

const PROGRAMS: Record<
  string,
  { name: string; parse: (data: Uint8Array, accounts: string[]) => [string, Info] | null }
> = {
  [SYSTEM_PROGRAM_ADDRESS]: { name: 'system', parse: systemInfo },
  [TOKEN_PROGRAM_ADDRESS]: { name: 'spl-token', parse: tokenInfo },
  // same layouts for the instructions a payment uses; the node names the program apart
  [TOKEN_2022_PROGRAM_ADDRESS]: { name: 'spl-token-2022', parse: tokenInfo },
  [ASSOCIATED_TOKEN_PROGRAM_ADDRESS]: {
    name: 'spl-associated-token-account',
    parse: associatedTokenInfo,
  },
}

/**
 * An instruction as `jsonParsed` shows it: `{program, programId, parsed:
 * {type, info}}` for programs the node has a parser for, otherwise the raw
 * `{programId, accounts, data (base58)}`.
 */
function parsedInstruction(
  record: RecordedTransaction,
  instruction: CompiledInstructionView,
  stackHeight: number | null
) {
  const keys = record.accountKeys.map((key) => key.pubkey)
  const programId = keys[instruction.programIndex]
  const accounts = instruction.accounts.map((index) => keys[index])
  const program = PROGRAMS[programId]
  let parsed: [string, Info] | null = null
  try {
    parsed = program ? program.parse(instruction.data, accounts) : null
  } catch {
    parsed = null // data the parser cannot read: shown raw, as the node does
  }
  if (program && parsed) {
    return {
      program: program.name,
      programId,
      parsed: { type: parsed[0], info: parsed[1] },
      stackHeight,
    }
  }
  return { programId, accounts, data: getBase58Decoder().decode(instruction.data), stackHeight }
}

/**
 * The `getTransaction` answer (encoding jsonParsed, maxSupportedTransactionVersion 0).
 * For a version-0 message with lookup tables the node lists the loaded
 * addresses after the message's own keys (source `lookupTable`), names
 * them in `meta.loadedAddresses`, and keeps the message's
 * `addressTableLookups`; token balances index into that whole list.
 */
export function jsonParsedTransaction(record: RecordedTransaction) {
  return {
    slot: record.slot,
    blockTime: record.blockTime,
    version: 0,
    meta: {
      err: record.err,
      status: record.err === null ? { Ok: null } : { Err: record.err },
      fee: record.fee,
      preBalances: record.preBalances,
      postBalances: record.postBalances,
      preTokenBalances: record.preTokenBalances,
      postTokenBalances: record.postTokenBalances,
      innerInstructions: record.innerInstructions.map((entry) => ({
        index: entry.index,
        instructions: entry.instructions.map((inner) =>
          parsedInstruction(record, inner, inner.stackHeight)
        ),
      })),
      logMessages: record.logMessages,
      rewards: [],
      loadedAddresses: record.loadedAddresses,
      computeUnitsConsumed: record.computeUnitsConsumed,
    },
    transaction: {
      signatures: [record.signature],
      message: {
        accountKeys: record.accountKeys,
        recentBlockhash: record.recentBlockhash,
        instructions: record.instructions.map((instruction) =>
          parsedInstruction(record, instruction, null)
        ),
        addressTableLookups: record.addressTableLookups,
      },
    },
  }
}
