import { test } from '@japa/runner'
import type { Knex } from 'knex'
import db from '@adonisjs/lucid/services/db'
import { claimLeases, releaseLeases } from '#support/database/lease'
import { resetDatabase } from '#tests/helpers/database'

const LEASE_MS = 60_000

/** Cursor rows (the scanner's leased table) named net-0 … net-(count-1). */
async function cursorRows(count: number) {
  const now = Date.now()
  for (let index = 0; index < count; index++) {
    await db.table('chain_cursors').insert({
      network: `net-${index}`,
      cursor: '',
      caught_up: true,
      last_scan_at: 0,
      last_error: '',
      updated_at: now,
    })
  }
}

function claimNetwork(network: string, token: string, now = Date.now()) {
  const scope = (query: Knex.QueryBuilder) => query.where('network', network)
  return claimLeases({ table: 'chain_cursors', token, leaseMs: LEASE_MS, now, scope })
}

async function holder(network: string) {
  const row = await db.from('chain_cursors').where('network', network).first()
  const lockedUntil = row.locked_until === null ? null : Number(row.locked_until)
  return { lockedBy: row.locked_by as string | null, lockedUntil }
}

test.group('Leases', (group) => {
  group.each.setup(() => resetDatabase())

  test('two claimers of one free row at once: exactly one wins', async ({ assert }) => {
    await cursorRows(1)
    for (let round = 0; round < 10; round++) {
      await db.from('chain_cursors').update({ locked_by: null, locked_until: null })
      const results = await Promise.all([
        claimNetwork('net-0', `a${round}`),
        claimNetwork('net-0', `b${round}`),
      ])
      const winners = results.filter((ids) => ids.length === 1)
      assert.lengthOf(winners, 1, `round ${round}`)
      const winner = results[0].length === 1 ? `a${round}` : `b${round}`
      assert.equal((await holder('net-0')).lockedBy, winner)
    }
  })

  test('a held lease is not taken; expired, it is taken over and the old holder cannot release it', async ({
    assert,
  }) => {
    await cursorRows(1)
    const now = Date.now()
    assert.lengthOf(await claimNetwork('net-0', 'first', now), 1)
    assert.deepEqual(await holder('net-0'), { lockedBy: 'first', lockedUntil: now + LEASE_MS })

    assert.deepEqual(await claimNetwork('net-0', 'second', now + LEASE_MS - 1), [])
    // The end instant itself still belongs to the holder.
    assert.deepEqual(await claimNetwork('net-0', 'second', now + LEASE_MS), [])
    assert.lengthOf(await claimNetwork('net-0', 'second', now + LEASE_MS + 1), 1)
    assert.equal((await holder('net-0')).lockedBy, 'second')

    const stale = await releaseLeases({
      table: 'chain_cursors',
      token: 'first',
      changes: { last_error: 'stale result' },
    })
    assert.equal(stale, 0)
    assert.equal((await db.from('chain_cursors').where('network', 'net-0').first()).last_error, '')
    assert.equal((await holder('net-0')).lockedBy, 'second')
  })

  test('a release by the holder writes its changes and frees the row', async ({ assert }) => {
    await cursorRows(2)
    await claimNetwork('net-0', 'scan-0')
    await claimNetwork('net-1', 'scan-1')
    const released = await releaseLeases({
      table: 'chain_cursors',
      token: 'scan-0',
      scope: (query) => query.where('network', 'net-0'),
      changes: { cursor: '{"block":7}' },
    })
    assert.equal(released, 1)
    const row = await db.from('chain_cursors').where('network', 'net-0').first()
    assert.equal(row.cursor, '{"block":7}')
    assert.deepEqual(await holder('net-0'), { lockedBy: null, lockedUntil: null })
    assert.equal((await holder('net-1')).lockedBy, 'scan-1')
    assert.lengthOf(await claimNetwork('net-0', 'next'), 1)
  })

  test('batches take at most the limit, in order, skipping held rows; concurrent ones never share a row', async ({
    assert,
  }) => {
    await cursorRows(12)
    await db
      .from('chain_cursors')
      .where('network', 'net-0')
      .update({ locked_by: 'busy', locked_until: Date.now() + LEASE_MS })
    const batch = (token: string) =>
      claimLeases({ table: 'chain_cursors', token, leaseMs: LEASE_MS, orderBy: 'id', limit: 3 })

    const first = await batch('first')
    const ids = (await db.from('chain_cursors').orderBy('id').select('id')).map((row) =>
      Number(row.id)
    )
    // The first three free rows by id; UPDATE … RETURNING gives them in no set order on PostgreSQL.
    assert.deepEqual(
      first.toSorted((a, b) => a - b),
      ids.slice(1, 4)
    )

    const results = await Promise.all([batch('a'), batch('b'), batch('c'), batch('d')])
    const claimed = results.flat()
    assert.lengthOf(claimed, 8)
    assert.equal(new Set(claimed).size, 8)
    for (const result of results) assert.isAtMost(result.length, 3)
    for (const [index, token] of ['a', 'b', 'c', 'd'].entries()) {
      const held = await db.from('chain_cursors').where('locked_by', token).select('id')
      assert.sameMembers(
        held.map((row) => Number(row.id)),
        results[index]
      )
    }
  })
})
