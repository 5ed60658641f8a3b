import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The production build made the way an operator makes it (`npm run build`,
 * i.e. `node ace build --tsconfig tsconfig.build.json`), written somewhere
 * else than build/, and its production install (`npm ci --omit=dev`).
 * Used by tests/functional/production_build.spec.ts and bench/startup.ts;
 * no application service is needed here (the bench does not boot the app).
 */

/** The application root (this file is tests/helpers/production_build.ts). */
export const APP_ROOT = fileURLToPath(new URL('../../', import.meta.url))

export type CommandResult = { code: number; output: string; ms: number }

/** Runs a command to its end, stdout and stderr kept together; never rejects on a non-zero exit. */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv }
): Promise<CommandResult> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    let output = ''
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    child.once('error', reject)
    child.once('exit', (code, signal) =>
      resolve({ code: code ?? (signal ? 128 : 1), output, ms: performance.now() - started })
    )
  })
}

/**
 * Builds into `outDir` (an absolute path; outside the application, so that
 * the build cannot resolve a package from the application's node_modules).
 *
 * The assembler takes its output directory from the tsconfig it is given,
 * so a throw-away tsconfig extending tsconfig.build.json says where. It
 * sits in tmp/ of the application so that the compiler options'
 * `types` still resolve from the application's node_modules.
 *
 * `typeCheck: false` adds `noCheck`: the same JavaScript is emitted (tsc
 * --noEmit checks the types in CI anyway) in about half the time.
 */
export async function buildInto(
  outDir: string,
  options: { typeCheck: boolean }
): Promise<CommandResult> {
  const configDir = join(APP_ROOT, 'tmp')
  const configFile = join(
    configDir,
    `tsconfig.build-${process.pid}-${randomBytes(4).toString('hex')}.json`
  )
  const config = {
    extends: '../tsconfig.build.json',
    compilerOptions: {
      outDir: relative(configDir, outDir),
      ...(options.typeCheck ? {} : { noCheck: true }),
    },
  }
  // tmp/ exists in a checkout only once something wrote to it.
  mkdirSync(dirname(configFile), { recursive: true })
  writeFileSync(configFile, JSON.stringify(config, null, 2))
  try {
    const result = await runCommand(
      process.execPath,
      ['ace.js', 'build', '--tsconfig', relative(APP_ROOT, configFile)],
      { cwd: APP_ROOT, env: { ...process.env, FORCE_COLOR: '0', NODE_ENV: 'development' } }
    )
    if (result.code !== 0 || !/build completed/.test(result.output)) {
      throw new Error(`node ace build failed (exit ${result.code}):\n${result.output}`)
    }
    return result
  } finally {
    rmSync(configFile, { force: true })
  }
}

/**
 * `npm ci --omit=dev` in the build, as an operator installs it.
 *
 * `cache: true` keeps the installed node_modules under
 * tmp/production-deps/, keyed by the build's lock file and dependency
 * lists and by Node's version and platform, and on a later call with the same
 * key links it (hard links: no copy of the bytes) instead of installing
 * again: it is what the same `npm ci --omit=dev` of the same lock file
 * produced, saved only after that install succeeded. The first run on a
 * machine (a fresh clone) always installs for real.
 */
export async function installProductionDependencies(
  buildDir: string,
  options: { cache: boolean } = { cache: false }
): Promise<CommandResult & { cached: boolean }> {
  const started = performance.now()
  const cacheRoot = join(APP_ROOT, 'tmp', 'production-deps')
  // What npm ci reads: the lock file, and the dependency lists it checks the lock against (not the scripts).
  const pkg = JSON.parse(readFileSync(join(buildDir, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >
  const dependencyLists = [
    'dependencies',
    'devDependencies',
    'optionalDependencies',
    'peerDependencies',
    'overrides',
  ]
  const key = createHash('sha256')
    .update(JSON.stringify(dependencyLists.map((list) => pkg[list] ?? null)))
    .update(readFileSync(join(buildDir, 'package-lock.json')))
    .update(`${process.version} ${process.platform} ${process.arch}`)
    .digest('hex')
    .slice(0, 16)
  const cached = join(cacheRoot, key, 'node_modules')

  if (options.cache && existsSync(cached)) {
    const link = await runCommand('cp', ['-al', cached, join(buildDir, 'node_modules')], {
      cwd: buildDir,
    })
    if (link.code === 0)
      return { code: 0, output: link.output, ms: performance.now() - started, cached: true }
    rmSync(join(buildDir, 'node_modules'), { recursive: true, force: true })
  }

  const result = await runCommand('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], {
    cwd: buildDir,
    env: { ...process.env, NODE_ENV: 'production' },
  })
  if (result.code !== 0)
    throw new Error(
      `npm ci --omit=dev failed in ${buildDir} (exit ${result.code}):\n${result.output}`
    )

  if (options.cache) {
    // Written aside, then renamed: a concurrent or interrupted run never sees half of it.
    const partial = join(cacheRoot, `${key}.${process.pid}.partial`)
    mkdirSync(partial, { recursive: true })
    // Installs of older lock files go: one is kept.
    for (const entry of readdirSync(cacheRoot)) {
      if (/^[0-9a-f]{16}$/.test(entry) && entry !== key)
        rmSync(join(cacheRoot, entry), { recursive: true, force: true })
    }
    const save = await runCommand(
      'cp',
      ['-al', join(buildDir, 'node_modules'), join(partial, 'node_modules')],
      {
        cwd: buildDir,
      }
    )
    try {
      if (save.code === 0) renameSync(partial, join(cacheRoot, key))
    } catch {
      // Another run saved the same key first: theirs is kept.
    } finally {
      rmSync(partial, { recursive: true, force: true })
    }
  }
  return { ...result, cached: false }
}
