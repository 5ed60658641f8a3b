/*
|--------------------------------------------------------------------------
| Benchmark: start-up of the sources (ts-exec) against the production build
|--------------------------------------------------------------------------
|
|   npm run bench:startup
|   BENCH_ROUNDS=5 npm run bench:startup
|
| Builds the gateway as `npm run build` does (into a temporary directory,
| type check skipped: the same JavaScript), installs it with
| `npm ci --omit=dev`, installs a temporary SQLite database once (a first
| start: migrations and defaults), then restarts each way BENCH_ROUNDS
| times (3), in turn:
|
|   - sources: `node --import=@poppinss/ts-exec bin/server.ts` (npm start)
|   - build:   `node bin/server.js` in the build
|   - the build with NODE_COMPILE_CACHE (V8's code cache on disk, filled
|     by the first start)
|
| and prints side by side the time from spawn to the first 200 of
| /health/ready (polled every 20 ms) and the idle resident memory (VmRSS
| once it has settled after start), median and worst of the rounds. Both
| run as web processes (RUN_JOBS=false) with NODE_ENV=production.
*/
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  APP_ROOT,
  buildInto,
  installProductionDependencies,
} from '../tests/helpers/production_build.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const READY_LIMIT_MS = 120_000

type Way = { name: string; cwd: string; args: string[]; env?: NodeJS.ProcessEnv }
type Sample = { readyMs: number; rssMb: number }

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)
  if (!line) throw new Error(`no VmRSS for process ${pid}`)
  return Number(line[1]) / 1024
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts one way, times its first ready answer, waits for RSS to settle, stops it. */
async function measure(way: Way, env: NodeJS.ProcessEnv): Promise<Sample> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  let output = ''
  const started = performance.now()
  const child = spawn(process.execPath, way.args, {
    cwd: way.cwd,
    env: { ...env, ...way.env, PORT: String(port), APP_URL: url },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const exited = new Promise((resolve) => child.once('exit', resolve))
  try {
    let readyMs = 0
    while (readyMs === 0) {
      if (child.exitCode !== null)
        throw new Error(`${way.name}: the server exited (${child.exitCode}):\n${output}`)
      if (performance.now() - started > READY_LIMIT_MS)
        throw new Error(`${way.name}: not ready in time:\n${output}`)
      try {
        const response = await fetch(`${url}/health/ready`)
        if (response.status === 200) readyMs = performance.now() - started
        await response.body?.cancel()
      } catch {
        // not listening yet
      }
      if (readyMs === 0) await sleep(20)
    }
    // Idle: RSS once two samples a second apart differ by less than 1 %.
    let previous = rssMb(child.pid!)
    for (let i = 0; i < 20; i++) {
      await sleep(1000)
      const current = rssMb(child.pid!)
      if (Math.abs(current - previous) < previous * 0.01) return { readyMs, rssMb: current }
      previous = current
    }
    return { readyMs, rssMb: previous }
  } finally {
    child.kill('SIGTERM')
    await exited
  }
}

function median(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'startup-bench-'))
  const buildDir = join(work, 'build')
  try {
    process.stdout.write('building (npm run build, type check skipped)… ')
    const build = await buildInto(buildDir, { typeCheck: false })
    process.stdout.write(`${(build.ms / 1000).toFixed(1)} s\ninstalling (npm ci --omit=dev)… `)
    const install = await installProductionDependencies(buildDir, { cache: true })
    process.stdout.write(
      `${(install.ms / 1000).toFixed(1)} s${install.cached ? ' (linked from tmp/production-deps)' : ''}\n`
    )

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      RUN_JOBS: 'false',
      HOST: '127.0.0.1',
      DB_CONNECTION: 'sqlite',
      SQLITE_PATH: join(work, 'startup.sqlite3'),
      APP_KEY: randomBytes(32).toString('base64url'),
      INITIAL_API_SECRET: randomBytes(16).toString('hex'),
      ADMIN_EMAIL: 'bench@example.test',
      ADMIN_PASSWORD: randomBytes(12).toString('hex'),
    }
    const ways: Way[] = [
      {
        name: 'sources (ts-exec)',
        cwd: APP_ROOT,
        args: ['--import=@poppinss/ts-exec', 'bin/server.ts'],
      },
      { name: 'build (node bin/server.js)', cwd: buildDir, args: ['bin/server.js'] },
      {
        name: 'build + NODE_COMPILE_CACHE',
        cwd: buildDir,
        args: ['bin/server.js'],
        env: { NODE_COMPILE_CACHE: join(work, 'compile-cache') },
      },
    ]

    // Also fills the compile cache of the third way.
    const first = await measure(ways[2], env)
    console.log(
      `first start (empty database: migrations and defaults), build: ${(first.readyMs / 1000).toFixed(2)} s`
    )

    const samples = new Map<string, Sample[]>(ways.map((way) => [way.name, []]))
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order: the page cache favours the later ones.
      for (const way of round % 2 === 0 ? ways : [...ways].reverse()) {
        samples.get(way.name)!.push(await measure(way, env))
      }
    }

    console.log(`\nrestart on an installed database, ${ROUNDS} rounds (median / worst)\n`)
    console.log(
      `${'way'.padEnd(30)}${'first /health/ready 200'.padStart(26)}${'idle RSS'.padStart(20)}`
    )
    for (const way of ways) {
      const list = samples.get(way.name)!
      const ready = list.map((sample) => sample.readyMs / 1000)
      const rss = list.map((sample) => sample.rssMb)
      console.log(
        `${way.name.padEnd(30)}${`${median(ready).toFixed(2)} s / ${Math.max(...ready).toFixed(2)} s`.padStart(26)}` +
          `${`${median(rss).toFixed(0)} / ${Math.max(...rss).toFixed(0)} MB`.padStart(20)}`
      )
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

await main()
