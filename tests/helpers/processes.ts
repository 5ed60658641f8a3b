import { fileURLToPath } from 'node:url'
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { readFile, readdir, readlink } from 'node:fs/promises'
import app from '@adonisjs/core/services/app'

/**
 * How the tests start the application's TypeScript in a process of its
 * own: tests/helpers/ts_hooks.mjs, the same transform as ts-exec in the
 * process's own thread, at about two thirds of the CPU per start.
 */
export const TS_HOOKS = [`--import=${fileURLToPath(new URL('./ts_hooks.mjs', import.meta.url))}`]

/**
 * A URL nobody answers: port 2 of 127.0.0.1, a privileged port nothing here
 * listens on and not one that fetch refuses to dial (9, say, is). A port
 * found free a moment ago is not one: another shard's node or server can
 * take it before the test dials it, and answer.
 */
export const CLOSED_URL = 'http://127.0.0.1:2'

/**
 * Whether process `pid` holds the listening socket of `port` (Linux:
 * /proc/net/tcp{,6} and the process's descriptors). A port found free
 * (freePort) is only a hint: another process may bind it before the child
 * does, and then the child's readiness probe is answered by that process.
 * True where /proc cannot tell (another system).
 */
export async function listensOn(pid: number, port: number): Promise<boolean> {
  const tables = await Promise.all(
    ['/proc/net/tcp', '/proc/net/tcp6'].map((file) => readFile(file, 'utf8').catch(() => null))
  )
  if (tables.every((table) => table === null)) return true
  // Any local address (127.0.0.1, 0.0.0.0, ::) on that port, in the LISTEN state (0A).
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  const inodes = new Set(
    tables
      .flatMap((table) => (table ?? '').split('\n').slice(1))
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[1]?.endsWith(suffix) && fields[3] === '0A')
      .map((fields) => `socket:[${fields[9]}]`)
  )
  if (inodes.size === 0) return false
  const descriptors = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])
  for (const descriptor of descriptors) {
    const target = await readlink(`/proc/${pid}/fd/${descriptor}`).catch(() => '')
    if (inodes.has(target)) return true
  }
  return false
}

/** What a start reports when another process held its port (why, for the last try's error). */
export type PortTaken = { taken: string }

/**
 * Starts something on a port found free, and again on another (three
 * tries in all) when `start` reports that port taken by another process:
 * a port found free is only a hint (see listensOn).
 */
export async function onFreePort<T extends object>(
  start: (port: number) => Promise<T | PortTaken>
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const started = await start(await freePort())
    if (!('taken' in started)) return started
    if (attempt === 3) throw new Error(started.taken)
  }
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

/**
 * Environment of a child process: the test process's own (so the test
 * database), plus `extra`; a key set to undefined in `extra` is removed.
 */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    RUN_JOBS: 'false',
  }
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key]
    else env[key] = value
  }
  return env
}

/**
 * Children still running at the end of the run are killed (runner teardown
 * in tests/bootstrap.ts): a server left behind by a failed test would
 * otherwise keep running jobs against the test database, and its pipes
 * would keep this process from exiting.
 */
const children = new Set<ChildProcess>()

export function killLeftoverProcesses() {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  children.clear()
}
process.once('exit', killLeftoverProcesses)

export function track<T extends ChildProcess>(child: T): T {
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
async function terminate(child: ChildProcess, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

export type RunningServer = {
  url: string
  process: ChildProcess
  /** stdout and stderr as they came. */
  output: () => string
  /** stdout alone (the JSON log lines in production mode). */
  stdout: () => string
  stderr: () => string
  stop: () => Promise<void>
}

/** Where a child process runs: the sources (default) or a production build. */
export type ProcessRoot = {
  /** The application root: this checkout, or a build directory. */
  cwd?: string
  /** Node arguments that start the server: `bin/server.ts` under ts-exec, or `bin/server.js` of a build. */
  serverArgs?: string[]
}

/**
 * Starts `bin/server.ts` (what `npm start` runs), or the server of a build
 * (`root`), as a separate process and waits until it answers.
 */
export async function startServerProcess(
  extra: Record<string, string | undefined> = {},
  root: ProcessRoot = {}
): Promise<RunningServer> {
  // A port found free can be taken by another process before the server binds it: then the
  // server exits (address in use) or, worse, the probe below is answered by that process.
  // Either way another port is tried.
  return onFreePort((port) => startServerOn(port, extra, root))
}

async function startServerOn(
  port: number,
  extra: Record<string, string | undefined>,
  root: ProcessRoot
): Promise<RunningServer | PortTaken> {
  const url = `http://127.0.0.1:${port}`
  let output = ''
  let stdout = ''
  let stderr = ''
  const child = track(
    spawn(process.execPath, root.serverArgs ?? [...TS_HOOKS, 'bin/server.ts'], {
      cwd: root.cwd ?? app.makePath(),
      env: childEnv({ HOST: '127.0.0.1', PORT: String(port), APP_URL: url, ...extra }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  )
  child.stdout!.on('data', (chunk) => {
    output += chunk
    stdout += chunk
  })
  child.stderr!.on('data', (chunk) => {
    output += chunk
    stderr += chunk
  })

  // A deadline only: a start takes a few seconds, many more on a busy machine.
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) {
      if (/EADDRINUSE/.test(output)) return { taken: `port ${port} was taken:\n${output}` }
      throw new Error(`server exited early:\n${output}`)
    }
    if (Date.now() >= deadline) {
      child.kill('SIGKILL')
      throw new Error(`server did not start:\n${output}`)
    }
    try {
      const response = await fetch(`${url}/payments/native/v1/config`)
      if (response.ok) break
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 150))
  }
  if (!(await listensOn(child.pid!, port))) {
    await terminate(child)
    return { taken: `another process answered on port ${port}` }
  }

  return {
    url,
    process: child,
    output: () => output,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: () => terminate(child),
  }
}

/** Runs `node ace <args>` as a separate process (in a build with `root.cwd`). */
export async function runAce(
  args: string[],
  extra: Record<string, string | undefined> = {},
  root: ProcessRoot = {}
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    let stdout = ''
    let stderr = ''
    const child = track(
      // ace.js is ts-exec plus bin/console.ts; in a build (root.cwd), its compiled ace.js.
      spawn(
        process.execPath,
        root.cwd ? ['ace.js', ...args] : [...TS_HOOKS, 'bin/console.ts', ...args],
        {
          cwd: root.cwd ?? app.makePath(),
          env: childEnv({ FORCE_COLOR: '0', ...extra }),
          stdio: ['ignore', 'pipe', 'pipe'],
        }
      )
    )
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.once('error', reject)
    child.once('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }))
  })
}

/**
 * Runs `body` against another gateway process started with `extra` in its
 * environment (a plugin left out, say): the tests' APP_URL points at it
 * meanwhile, so the AdminAgents made in `body` talk to it. APP_URL is given
 * back and the process stopped afterwards.
 */
export async function atServerProcess<T>(
  extra: Record<string, string | undefined>,
  body: (server: RunningServer) => Promise<T>
): Promise<T> {
  const server = await startServerProcess(extra)
  const appUrl = process.env.APP_URL
  process.env.APP_URL = server.url
  try {
    return await body(server)
  } finally {
    process.env.APP_URL = appUrl
    await server.stop()
  }
}
