import { FailedTransactionMetadata, LiteSVM } from 'litesvm'
import {
  address,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  getAddressEncoder,
  generateKeyPairSigner,
  getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit'
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system'
import {
  TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getInitializeAccount3Instruction,
  getInitializeMint2Instruction,
  getMintDecoder,
  getMintSize,
  getMintToCheckedInstruction,
  getRecoverNestedAssociatedTokenInstructionAsync,
  getTokenDecoder,
  getTokenSize,
  getTransferCheckedInstruction,
  getTransferInstruction,
} from '@solana-program/token'
import { Decimal } from '#support/text/money'
import { TOKEN_2022_PROGRAM_ADDRESS } from '#plugins/solana/solana_programs'

/** The address lookup table program (version-0 transactions load accounts through its tables). */
export const ADDRESS_LOOKUP_TABLE_PROGRAM = address('AddressLookupTab1e1111111111111111111111111')
/** Size of a lookup table's header before its addresses. */
const LOOKUP_TABLE_META_SIZE = 56

export type CompiledInstructionView = { programIndex: number; accounts: number[]; data: Uint8Array }

export type TokenBalanceView = {
  accountIndex: number
  mint: string
  owner: string
  programId: string
  uiTokenAmount: {
    amount: string
    decimals: number
    uiAmount: number | null
    uiAmountString: string
  }
}

/** A lookup table a version-0 transaction used, and which of its entries it loaded. */
export type AddressTableLookupView = {
  accountKey: string
  writableIndexes: number[]
  readonlyIndexes: number[]
}

/** What the ledger keeps of a transaction litesvm executed (the node's view of it). */
export type RecordedTransaction = {
  signature: string
  slot: number
  /** Seconds. */
  blockTime: number
  recentBlockhash: string
  /** The message's own keys, then those loaded from lookup tables (writable, then read-only): instruction indexes count in this list. */
  accountKeys: {
    pubkey: string
    signer: boolean
    writable: boolean
    source: 'transaction' | 'lookupTable'
  }[]
  addressTableLookups: AddressTableLookupView[]
  loadedAddresses: { writable: string[]; readonly: string[] }
  instructions: CompiledInstructionView[]
  /** Inner instructions (CPIs) by index of the top-level instruction. */
  innerInstructions: {
    index: number
    instructions: (CompiledInstructionView & { stackHeight: number })[]
  }[]
  /** Error in the RPC's JSON form; null for a success. */
  err: unknown
  fee: number
  logMessages: string[]
  computeUnitsConsumed: number
  preBalances: number[]
  postBalances: number[]
  preTokenBalances: TokenBalanceView[]
  postTokenBalances: TokenBalanceView[]
}

/** A token account as of some slot (SolanaTestChain.tokenAccountsAt). */
export type TokenAccountState = {
  pubkey: string
  mint: string
  owner: string
  programId: string
  amount: bigint
  decimals: number
  lamports: bigint
  /** The account's data now (null once closed): authorities and extensions are read from it. */
  data: Uint8Array | null
}

/** litesvm's error objects in the shape Solana's RPC gives `err`. */
function rpcError(error: unknown): unknown {
  const value = error as Record<string, any>
  if (value && typeof value === 'object' && 'index' in value && 'error' in value) {
    const inner = value.error
    const detail =
      inner && typeof inner === 'object' && 'code' in inner ? { Custom: inner.code } : String(inner)
    return { InstructionError: [value.index, detail] }
  }
  if (value && typeof value === 'object' && 'account_index' in value) {
    return { InsufficientFundsForRent: { account_index: value.account_index } }
  }
  return String(error) || 'TransactionError'
}

/**
 * A Solana ledger for tests: litesvm executes REAL signed transactions
 * (system and SPL Token programs), and this records each one the way a
 * node would serve it: a slot of its own, a block time, balances before and
 * after, token balances, inner instructions, logs and the error if it
 * failed. Finality is simulated: by default every transaction is finalized
 * at once; `holdFinality()` keeps new ones `confirmed` until `finalize()`,
 * `holdConfirmation()` keeps them merely `processed`.
 */
export class SolanaTestChain {
  readonly svm = new LiteSVM()
  readonly records: RecordedTransaction[] = []
  /** Lookup tables created, with their addresses (a node resolves them when serving a transaction). */
  readonly lookupTables = new Map<Address, Address[]>()
  payer!: KeyPairSigner
  slot = 300_000_000
  #finalizedHold: number | null = null
  #confirmedHold: number | null = null

  static async create() {
    const chain = new SolanaTestChain()
    chain.payer = await chain.newWallet(100_000_000_000n)
    return chain
  }

  get finalizedSlot() {
    return this.#finalizedHold ?? this.slot
  }

  get confirmedSlot() {
    return this.#confirmedHold ?? this.slot
  }

  holdFinality() {
    this.#finalizedHold = this.slot
  }

  holdConfirmation() {
    this.#confirmedHold = this.slot
    this.#finalizedHold ??= this.slot
  }

  /** Everything sent so far becomes finalized; later transactions too. */
  finalize() {
    this.#finalizedHold = null
    this.#confirmedHold = null
  }

  /** A fresh key pair holding `balance` lamports (airdrops are not recorded: they are setup). */
  async newWallet(balance = 2_000_000_000n): Promise<KeyPairSigner> {
    const signer = await generateKeyPairSigner()
    if (balance > 0n) this.svm.airdrop(signer.address, lamports(balance))
    return signer
  }

  /** The token program owning `mint` (the classic Token program or Token-2022). */
  tokenProgramOf(mint: Address): Address {
    const account = this.svm.getAccount(mint)
    if (!account.exists) throw new Error(`no mint ${mint}`)
    return account.programAddress
  }

  async associatedTokenAccount(owner: Address, mint: Address): Promise<Address> {
    const [account] = await findAssociatedTokenPda({
      owner,
      mint,
      tokenProgram: this.tokenProgramOf(mint),
    })
    return account
  }

  /** A mint of the classic Token program, or of Token-2022 (`tokenProgram`), without extensions. */
  async createMint(decimals: number, options: { tokenProgram?: Address } = {}): Promise<Address> {
    const programAddress = options.tokenProgram ?? TOKEN_PROGRAM_ADDRESS
    const mint = await generateKeyPairSigner()
    const space = BigInt(getMintSize())
    await this.send([
      getCreateAccountInstruction({
        payer: this.payer,
        newAccount: mint,
        lamports: this.svm.minimumBalanceForRentExemption(space),
        space,
        programAddress,
      }),
      getInitializeMint2Instruction(
        { mint: mint.address, decimals, mintAuthority: this.payer.address },
        { programAddress }
      ),
    ])
    return mint.address
  }

  /** Creates `owner`'s associated token account (idempotent) and mints `amount` base units to it. */
  async mintTo(owner: Address, mint: Address, amount: bigint) {
    const decimals = this.#mintDecimals(mint)
    const programAddress = this.tokenProgramOf(mint)
    const account = await this.associatedTokenAccount(owner, mint)
    await this.send([
      await getCreateAssociatedTokenIdempotentInstructionAsync({
        payer: this.payer,
        owner,
        mint,
        tokenProgram: programAddress,
      }),
      getMintToCheckedInstruction(
        { mint, token: account, mintAuthority: this.payer, amount, decimals },
        { programAddress }
      ),
    ])
    return account
  }

  /**
   * A token account of `owner` for `mint` that is NOT its associated one:
   * a fresh key pair made into a token account (createAccount then
   * InitializeAccount3), as older wallets and some custodians do.
   */
  async createOtherTokenAccount(owner: Address, mint: Address): Promise<Address> {
    const programAddress = this.tokenProgramOf(mint)
    const account = await generateKeyPairSigner()
    const space = BigInt(getTokenSize())
    await this.send([
      getCreateAccountInstruction({
        payer: this.payer,
        newAccount: account,
        lamports: this.svm.minimumBalanceForRentExemption(space),
        space,
        programAddress,
      }),
      getInitializeAccount3Instruction(
        { account: account.address, mint, owner },
        { programAddress }
      ),
    ])
    return account.address
  }

  /**
   * Several token payments from `from` in ONE transaction, one
   * transferChecked each (instructions ix:0, ix:1 …): to a wallet's
   * associated token account, or to a given token account.
   */
  async payTokens(
    from: KeyPairSigner,
    mint: Address,
    payments: { toWallet?: Address; toAccount?: Address; amount: bigint }[]
  ) {
    const programAddress = this.tokenProgramOf(mint)
    const source = await this.associatedTokenAccount(from.address, mint)
    const decimals = this.#mintDecimals(mint)
    const instructions: Instruction[] = []
    for (const payment of payments) {
      const destination =
        payment.toAccount ?? (await this.associatedTokenAccount(payment.toWallet!, mint))
      instructions.push(
        getTransferCheckedInstruction(
          { source, mint, destination, authority: from, amount: payment.amount, decimals },
          { programAddress }
        )
      )
    }
    return this.send(instructions, { feePayer: from })
  }

  /** Several SOL payments from `from` in ONE transaction (a system transfer each). */
  async paySols(from: KeyPairSigner, payments: { to: Address; amount: bigint }[]) {
    return this.send(
      payments.map((payment) =>
        getTransferSolInstruction({ source: from, destination: payment.to, amount: payment.amount })
      ),
      { feePayer: from }
    )
  }

  async createTokenAccount(owner: Address, mint: Address) {
    const tokenProgram = this.tokenProgramOf(mint)
    await this.send([
      await getCreateAssociatedTokenIdempotentInstructionAsync({
        payer: this.payer,
        owner,
        mint,
        tokenProgram,
      }),
    ])
    return this.associatedTokenAccount(owner, mint)
  }

  /**
   * An address lookup table holding `addresses`, active at once (written
   * directly: its creation is setup, not a payment). Version-0 messages
   * sent with `lookupTables` load their accounts from it.
   */
  async createLookupTable(addresses: Address[]): Promise<Address> {
    const table = (await generateKeyPairSigner()).address
    const data = new Uint8Array(LOOKUP_TABLE_META_SIZE + 32 * addresses.length)
    const view = new DataView(data.buffer)
    view.setUint32(0, 1, true) // an initialised lookup table
    view.setBigUint64(4, 0xffffffffffffffffn, true) // never deactivated
    view.setBigUint64(12, 0n, true) // last extended slot
    data[20] = addresses.length // every entry already active
    data[21] = 1 // authority: some
    data.set(getAddressEncoder().encode(this.payer.address), 22)
    addresses.forEach((entry, index) =>
      data.set(getAddressEncoder().encode(entry), LOOKUP_TABLE_META_SIZE + 32 * index)
    )
    this.svm.setAccount({
      address: table,
      data,
      executable: false,
      lamports: lamports(this.svm.minimumBalanceForRentExemption(BigInt(data.length))),
      programAddress: ADDRESS_LOOKUP_TABLE_PROGRAM,
      space: BigInt(data.length),
    })
    this.lookupTables.set(table, addresses)
    return table
  }

  /**
   * What a wallet does to pay tokens: transferChecked from the sender's
   * associated token account to the recipient's (created in the same
   * transaction when `createRecipientAccount`).
   */
  async payToken(
    from: KeyPairSigner,
    toWallet: Address,
    mint: Address,
    amount: bigint,
    options: {
      checked?: boolean
      createRecipientAccount?: boolean
      blockTime?: number
      lookupTables?: Address[]
      /** A token account of the recipient to pay into instead of its associated one. */
      toAccount?: Address
    } = {}
  ) {
    const programAddress = this.tokenProgramOf(mint)
    const source = await this.associatedTokenAccount(from.address, mint)
    const destination = options.toAccount ?? (await this.associatedTokenAccount(toWallet, mint))
    const instructions: Instruction[] = []
    if (options.createRecipientAccount) {
      instructions.push(
        await getCreateAssociatedTokenIdempotentInstructionAsync({
          payer: from,
          owner: toWallet,
          mint,
          tokenProgram: programAddress,
        })
      )
    }
    instructions.push(
      options.checked === false
        ? getTransferInstruction(
            { source, destination, authority: from, amount },
            { programAddress }
          )
        : getTransferCheckedInstruction(
            {
              source,
              mint,
              destination,
              authority: from,
              amount,
              decimals: this.#mintDecimals(mint),
            },
            { programAddress }
          )
    )
    return this.send(instructions, {
      feePayer: from,
      blockTime: options.blockTime,
      lookupTables: options.lookupTables,
    })
  }

  async paySol(
    from: KeyPairSigner,
    to: Address,
    amount: bigint,
    options: { blockTime?: number; lookupTables?: Address[] } = {}
  ) {
    return this.send([getTransferSolInstruction({ source: from, destination: to, amount })], {
      feePayer: from,
      blockTime: options.blockTime,
      lookupTables: options.lookupTables,
    })
  }

  /**
   * Tokens sent by mistake to the associated token account OF an associated
   * token account are recovered by the wallet with the ATA program's
   * RecoverNested, which moves them with a transferChecked made by the
   * program (an inner instruction) into the wallet's own token account.
   */
  async payNestedAndRecover(
    from: KeyPairSigner,
    wallet: KeyPairSigner,
    ownerMint: Address,
    nestedMint: Address,
    amount: bigint
  ) {
    const walletOwnerAccount = await this.createTokenAccount(wallet.address, ownerMint)
    await this.createTokenAccount(wallet.address, nestedMint)
    await this.createTokenAccount(walletOwnerAccount, nestedMint)
    await this.payToken(from, walletOwnerAccount, nestedMint, amount)
    return this.send(
      [
        await getRecoverNestedAssociatedTokenInstructionAsync({
          nestedTokenMintAddress: nestedMint,
          ownerTokenMintAddress: ownerMint,
          walletAddress: wallet,
        }),
      ],
      { feePayer: wallet }
    )
  }

  /** Signs with the signers named in the instructions, executes, and records. */
  async send(
    instructions: Instruction[],
    options: { feePayer?: KeyPairSigner; blockTime?: number; lookupTables?: Address[] } = {}
  ): Promise<RecordedTransaction> {
    const feePayer = options.feePayer ?? this.payer
    const tables = Object.fromEntries(
      (options.lookupTables ?? []).map((table) => [table, this.lookupTables.get(table)!])
    )
    const transaction = await pipe(
      createTransactionMessage({ version: 0 }),
      (message) => setTransactionMessageFeePayerSigner(feePayer, message),
      (message) => this.svm.setTransactionMessageLifetimeUsingLatestBlockhash(message),
      (message) => appendTransactionMessageInstructions(instructions, message),
      (message) => compressTransactionMessageUsingAddressLookupTables(message, tables),
      (message) => signTransactionMessageWithSigners(message)
    )
    const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes)
    if (message.version === 1) throw new Error('this ledger records legacy and v0 messages only')
    const staticKeys = message.staticAccounts.map(String)
    const header = message.header
    const signers = header.numSignerAccounts
    const lookups: AddressTableLookupView[] = (
      'addressTableLookups' in message ? (message.addressTableLookups ?? []) : []
    ).map((lookup) => ({
      accountKey: lookup.lookupTableAddress,
      writableIndexes: [...lookup.writableIndexes],
      readonlyIndexes: [...lookup.readonlyIndexes],
    }))
    const loaded = (kind: 'writableIndexes' | 'readonlyIndexes') =>
      lookups.flatMap((lookup) =>
        lookup[kind].map((index) =>
          String(this.lookupTables.get(address(lookup.accountKey))![index])
        )
      )
    const loadedAddresses = {
      writable: loaded('writableIndexes'),
      readonly: loaded('readonlyIndexes'),
    }
    const keys = [...staticKeys, ...loadedAddresses.writable, ...loadedAddresses.readonly]
    const accountKeys = [
      ...staticKeys.map((pubkey, index) => ({
        pubkey,
        signer: index < signers,
        writable:
          index < signers
            ? index < signers - header.numReadonlySignerAccounts
            : index < staticKeys.length - header.numReadonlyNonSignerAccounts,
        source: 'transaction' as const,
      })),
      ...loadedAddresses.writable.map((pubkey) => ({
        pubkey,
        signer: false,
        writable: true,
        source: 'lookupTable' as const,
      })),
      ...loadedAddresses.readonly.map((pubkey) => ({
        pubkey,
        signer: false,
        writable: false,
        source: 'lookupTable' as const,
      })),
    ]

    const preBalances = keys.map((key) => this.#lamports(key))
    const preTokenBalances = this.#tokenBalances(keys)
    const result = this.svm.sendTransaction(transaction)
    // the next transaction gets another blockhash, so equal payments stay distinct transactions
    this.svm.expireBlockhash()
    const failed = result instanceof FailedTransactionMetadata
    const meta = failed ? result.meta() : result

    this.slot += 1
    const record: RecordedTransaction = {
      signature: getSignatureFromTransaction(transaction),
      slot: this.slot,
      // rounded up: a block made right after an order is never dated before it
      blockTime: options.blockTime ?? Math.ceil(Date.now() / 1000),
      recentBlockhash: String(message.lifetimeToken),
      accountKeys,
      addressTableLookups: lookups,
      loadedAddresses,
      instructions: message.instructions.map((instruction) => ({
        programIndex: instruction.programAddressIndex,
        accounts: [...(instruction.accountIndices ?? [])],
        data: new Uint8Array(instruction.data ?? []),
      })),
      innerInstructions: meta
        .innerInstructions()
        .map((list, index) => ({
          index,
          instructions: list.map((inner) => ({
            programIndex: inner.instruction().programIdIndex(),
            accounts: [...inner.instruction().accounts()],
            data: new Uint8Array(inner.instruction().data()),
            stackHeight: inner.stackHeight(),
          })),
        }))
        .filter((entry) => entry.instructions.length > 0),
      err: failed ? rpcError(result.err()) : null,
      fee: 5000 * signers,
      logMessages: meta.logs(),
      computeUnitsConsumed: Number(meta.computeUnitsConsumed()),
      preBalances,
      postBalances: keys.map((key) => this.#lamports(key)),
      preTokenBalances,
      postTokenBalances: this.#tokenBalances(keys),
    }
    this.records.push(record)
    return record
  }

  #lamports(key: string): number {
    return Number(this.svm.getBalance(key as Address) ?? 0n)
  }

  #mintDecimals(mint: Address): number {
    const account = this.svm.getAccount(mint)
    if (!account.exists) throw new Error(`no mint ${mint}`)
    return getMintDecoder().decode(account.data.slice(0, getMintSize())).decimals
  }

  /** Token accounts among `keys`, as the RPC lists them in pre/postTokenBalances. */
  #tokenBalances(keys: string[]): TokenBalanceView[] {
    const balances: TokenBalanceView[] = []
    keys.forEach((key, accountIndex) => {
      const account = this.svm.getAccount(key as Address)
      if (!account.exists) return
      const program = account.programAddress
      if (program !== TOKEN_PROGRAM_ADDRESS && program !== TOKEN_2022_PROGRAM_ADDRESS) return
      // a Token-2022 account with extensions is longer, its type byte (2: account) right after the base layout
      const isAccount =
        account.data.length === getTokenSize() ||
        (program === TOKEN_2022_PROGRAM_ADDRESS && account.data[getTokenSize()] === 2)
      if (!isAccount) return
      const token = getTokenDecoder().decode(account.data.slice(0, getTokenSize()))
      const decimals = this.#mintDecimals(token.mint)
      const amount = token.amount.toString()
      const uiAmountString = new Decimal(amount).shiftedBy(-decimals).toFixed()
      balances.push({
        accountIndex,
        mint: token.mint,
        owner: token.owner,
        programId: program,
        uiTokenAmount: { amount, decimals, uiAmount: Number(uiAmountString), uiAmountString },
      })
    })
    return balances
  }

  /**
   * The first recorded transaction after `slot` that loaded `account`, and
   * the account's index in it: its state before that transaction is the
   * account's state as of `slot`.
   */
  #firstAfter(
    account: string,
    slot: number
  ): { record: RecordedTransaction; index: number } | null {
    for (const record of this.records) {
      if (record.slot <= slot) continue
      const index = record.accountKeys.findIndex((key) => key.pubkey === account)
      if (index !== -1) return { record, index }
    }
    return null
  }

  /**
   * Lamports of `account` as of `slot` (a node answering at a commitment
   * whose tip is `slot`): litesvm keeps only the latest state, so a later
   * transaction's balances before it are used. Airdrops are setup, not
   * recorded: they count as always there.
   */
  lamportsAt(account: string, slot: number): bigint {
    const later = this.#firstAfter(account, slot)
    if (later) return BigInt(later.record.preBalances[later.index])
    return this.svm.getBalance(account as Address) ?? 0n
  }

  /**
   * Every token account as of `slot`: each account a recorded transaction
   * touched (token accounts only come to be through transactions), in its
   * state before the first later transaction that loaded it, or as it is
   * now. `data` is the account's data now (null when closed): extensions
   * and authorities are read from it.
   */
  tokenAccountsAt(slot: number): TokenAccountState[] {
    const addresses = new Set<string>()
    for (const record of this.records) {
      for (const balance of [...record.preTokenBalances, ...record.postTokenBalances]) {
        addresses.add(record.accountKeys[balance.accountIndex].pubkey)
      }
    }
    const states: TokenAccountState[] = []
    for (const pubkey of addresses) {
      const now = this.svm.getAccount(pubkey as Address)
      const data = now.exists ? new Uint8Array(now.data) : null
      const later = this.#firstAfter(pubkey, slot)
      if (later) {
        const before = later.record.preTokenBalances.find(
          (balance) => balance.accountIndex === later.index
        )
        if (!before) continue // it did not exist yet
        states.push({
          pubkey,
          mint: before.mint,
          owner: before.owner,
          programId: before.programId,
          amount: BigInt(before.uiTokenAmount.amount),
          decimals: before.uiTokenAmount.decimals,
          lamports: BigInt(later.record.preBalances[later.index]),
          data,
        })
        continue
      }
      if (!data) continue
      const program = now.exists ? now.programAddress : ''
      if (program !== TOKEN_PROGRAM_ADDRESS && program !== TOKEN_2022_PROGRAM_ADDRESS) continue
      const token = getTokenDecoder().decode(data.slice(0, getTokenSize()))
      states.push({
        pubkey,
        mint: token.mint,
        owner: token.owner,
        programId: program,
        amount: token.amount,
        decimals: this.#mintDecimals(token.mint),
        lamports: this.svm.getBalance(pubkey as Address) ?? 0n,
        data,
      })
    }
    return states
  }

  /** A fork dropped a transaction that was confirmed but never finalized. */
  drop(signature: string) {
    const index = this.records.findIndex((record) => record.signature === signature)
    if (index === -1 || this.records[index].slot <= this.finalizedSlot)
      throw new Error(`cannot drop ${signature}`)
    this.records.splice(index, 1)
  }

  find(signature: string) {
    return this.records.find((record) => record.signature === signature) ?? null
  }
}
