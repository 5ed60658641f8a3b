import { spawn, spawnSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { listensOn, onFreePort, track, type PortTaken } from '#tests/helpers/processes'

/**
 * Runs the console's integration examples as a merchant would: each saved
 * to a file of its own and started with its interpreter (bash, php, node),
 * given only PATH and the variables the example names.
 */

/** Whether a program is on the PATH. */
export function hasProgram(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0
}

/** A scratch directory for the example files, removed by `cleanup`. */
export async function scratchDirectory() {
  const path = await mkdtemp(join(tmpdir(), 'gateway-examples-'))
  return {
    path,
    async write(name: string, text: string) {
      const file = join(path, name)
      await writeFile(file, text)
      return file
    },
    cleanup: () => rm(path, { recursive: true, force: true }),
  }
}

/** The interpreter of an example: node is the one running the tests (Node 24). */
export function interpreter(id: 'shell' | 'php' | 'node'): string {
  return id === 'shell' ? 'bash' : id === 'php' ? 'php' : process.execPath
}

/** Runs a program to its end (at most `timeoutMs`), with a minimal environment. */
export function runProgram(
  command: string,
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; timeoutMs?: number } = {}
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    let stdout = ''
    let stderr = ''
    const child = track(
      spawn(command, args, {
        cwd: options.cwd,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    )
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000)
    child.stdout!.on('data', (chunk) => (stdout += chunk))
    child.stderr!.on('data', (chunk) => (stderr += chunk))
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

export type ListeningProgram = { url: string; output: () => string; stop: () => Promise<void> }

/**
 * Starts a long-running example (a merchant's callback endpoint) on a free
 * port and waits until it accepts connections, on a port it holds itself
 * (one found free can be taken by another process first: another port is
 * tried then).
 */
export async function startListeningProgram(
  command: string,
  args: (port: number) => string[],
  env: (port: number) => Record<string, string>,
  options: { cwd?: string } = {}
) {
  return onFreePort((port) => startProgramOn(port, command, args, env, options))
}

async function startProgramOn(
  port: number,
  command: string,
  args: (port: number) => string[],
  env: (port: number) => Record<string, string>,
  options: { cwd?: string }
): Promise<ListeningProgram | PortTaken> {
  let output = ''
  const child = track(
    spawn(command, args(port), {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), ...env(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  )
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill('SIGTERM')
    await exited
  }
  const deadline = Date.now() + 15_000
  for (;;) {
    if (child.exitCode !== null) {
      if (/EADDRINUSE|already in use/i.test(output))
        return { taken: `port ${port} was taken:\n${output}` }
      throw new Error(`${command} exited early:\n${output}`)
    }
    try {
      await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(1000) })
      break
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL')
        throw new Error(`${command} did not listen on ${url}:\n${output}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  if (!(await listensOn(child.pid!, port))) {
    await stop()
    return { taken: `another process answered on port ${port}` }
  }
  return { url, output: () => output, stop }
}
