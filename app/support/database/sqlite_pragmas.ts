/**
 * The pragmas every SQLite connection of the gateway runs when opened: the
 * knex pool's (config/database.ts) and the order writer thread's
 * (app/services/sqlite_writer.ts). WAL lets readers proceed while one
 * connection writes; a busy writer is waited for (10 s) rather than failing
 * at once; foreign keys are enforced.
 */
export const SQLITE_PRAGMAS = ['journal_mode = WAL', 'busy_timeout = 10000', 'foreign_keys = ON']
