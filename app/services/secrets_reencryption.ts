import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import settings from '#settings/settings_service'
import {
  SecretPurpose,
  looksSealed,
  revealSecret,
  sealSecret,
  sealedWithCurrentKey,
} from '#support/crypto/secret_box'

type Client = QueryClientContract | TransactionClientContract
type Row = Record<string, string | number | null>

/** A column holding encrypted secrets. */
type SecretColumn = {
  /** How the operator sees it in the counts. */
  name: string
  table: string
  /** Primary key of the table, for the update. */
  key: string
  column: string
  /** Columns to read (key, value, what names the row). */
  select: string[]
  purpose: (row: Row) => string
  /** Names the row in a message (never its value). */
  describe: (row: Row) => string
  /** Only these rows (settings: the secret ones). */
  only?: { column: string; values: string[] }
}

/** Every place a secret is stored. A new secret column is added here. */
export const SECRET_COLUMNS: SecretColumn[] = [
  {
    name: 'api_keys.secret_key',
    table: 'api_keys',
    key: 'id',
    column: 'secret_key',
    select: ['id', 'pid', 'secret_key'],
    purpose: () => SecretPurpose.apiKeySecret,
    describe: (row) => `API key pid ${row.pid}`,
  },
  {
    name: 'chains.api_key',
    table: 'chains',
    key: 'id',
    column: 'api_key',
    select: ['id', 'network', 'api_key'],
    purpose: () => SecretPurpose.chainApiKey,
    describe: (row) => `RPC API key of ${row.network}`,
  },
  {
    name: 'users.totp_secret',
    table: 'users',
    key: 'id',
    column: 'totp_secret',
    select: ['id', 'email', 'totp_secret'],
    purpose: () => SecretPurpose.totpSecret,
    describe: (row) => `two-factor secret of ${row.email}`,
  },
  {
    name: 'settings',
    table: 'settings',
    key: 'key',
    column: 'value',
    select: ['key', 'value'],
    purpose: (row) => SecretPurpose.setting(String(row.key)),
    describe: (row) => `setting ${row.key}`,
    only: {
      column: 'key',
      // The core's and every loaded plugin's (on or off): read when used.
      get values() {
        return settings.secretKeys()
      },
    },
  },
]

export type SecretColumnCounts = {
  name: string
  /** Plain values now encrypted. */
  encrypted: number
  /** Values moved from a previous key to the current one. */
  reencrypted: number
  /** Values already under the current key (left as they are). */
  current: number
  /** Values no known key decrypts (left as they are), named. */
  unreadable: string[]
}

/**
 * The secret columns that exist in this database: the migration that
 * introduced encryption runs before later ones add columns (users.totp_secret).
 */
async function presentColumns(client: Client): Promise<SecretColumn[]> {
  const present: SecretColumn[] = []
  for (const field of SECRET_COLUMNS) {
    const columns = await client.columnsInfo(field.table).catch(() => ({}))
    if (field.column in columns) present.push(field)
  }
  return present
}

/**
 * Encrypts the plain secrets of the database and, with `reencrypt`, moves
 * those encrypted under a previous APP_KEY to the current one. Idempotent:
 * a value already in its target form is not written. Each write is
 * conditional on the value read, so a secret changed meanwhile (a rotation)
 * is never overwritten with an older one.
 *
 * Used by the migration that introduced encryption at rest (plain values
 * only) and by `node ace secrets:reencrypt` (both).
 */
export async function sealStoredSecrets(
  client: Client,
  options: {
    reencrypt: boolean
    /** Told after each row read (a command's progress line): rows seen so far, and rows written. */
    onRow?: (progress: { checked: number; written: number }) => void
  }
): Promise<SecretColumnCounts[]> {
  const seen = { checked: 0, written: 0 }
  const report: SecretColumnCounts[] = []
  for (const field of await presentColumns(client)) {
    const counts: SecretColumnCounts = {
      name: field.name,
      encrypted: 0,
      reencrypted: 0,
      current: 0,
      unreadable: [],
    }
    const query = client.from(field.table).select(field.select)
    if (field.only) query.whereIn(field.only.column, field.only.values)
    const rows: Row[] = await query

    for (const row of rows) {
      seen.checked++
      options.onRow?.(seen)
      const stored = row[field.column]
      if (typeof stored !== 'string' || stored === '') continue
      const purpose = field.purpose(row)
      let next: string
      if (!looksSealed(stored)) {
        next = sealSecret(stored, purpose)
        counts.encrypted++
      } else if (!options.reencrypt) {
        continue
      } else if (sealedWithCurrentKey(stored, purpose)) {
        counts.current++
        continue
      } else {
        let plain: string
        try {
          plain = revealSecret(stored, purpose)
        } catch {
          counts.unreadable.push(field.describe(row))
          continue
        }
        next = sealSecret(plain, purpose)
        counts.reencrypted++
      }
      await client
        .from(field.table)
        .where(field.key, row[field.key] as string | number)
        .where(field.column, stored)
        .update({ [field.column]: next })
      seen.written++
    }
    report.push(counts)
  }
  return report
}

/**
 * The reverse, for rolling the migration back: every readable secret
 * decrypted to its plain value.
 */
export async function unsealStoredSecrets(client: Client): Promise<void> {
  for (const field of await presentColumns(client)) {
    const query = client.from(field.table).select(field.select)
    if (field.only) query.whereIn(field.only.column, field.only.values)
    const rows: Row[] = await query
    for (const row of rows) {
      const stored = row[field.column]
      if (typeof stored !== 'string' || !looksSealed(stored)) continue
      const plain = revealSecret(stored, field.purpose(row))
      await client
        .from(field.table)
        .where(field.key, row[field.key] as string | number)
        .where(field.column, stored)
        .update({ [field.column]: plain })
    }
  }
}
