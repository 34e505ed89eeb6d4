import { generateKeyPairSync } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import { ConfigError, parseConfig } from '../../edge-gate/src/config.js';
import { buildWorkerBundle, exportedClasses, WORKER_SIZE_LIMITS, type WorkerBundle, wranglerConfigPath } from '../support/worker-bundle.js';

/**
 * The production section of wrangler.toml (`[env.production]`) as a deploy reads it, and the bundle a
 * deploy would upload, built offline. Bindings, vars, secrets and routes are per environment in
 * wrangler, so the production section is checked against what the Worker exports and needs.
 */
interface WranglerConfig {
  durable_objects: { bindings: Array<{ name: string; class_name: string }> };
  migrations: Array<{
    new_classes?: string[];
    new_sqlite_classes?: string[];
    deleted_classes?: string[];
    renamed_classes?: Array<{ from: string; to: string }>;
  }>;
  kv_namespaces: Array<{ binding: string }>;
  vars: Record<string, string>;
  secrets?: { required?: string[] };
  routes?: unknown[];
  observability?: { enabled?: boolean };
}

/** The configuration of an environment as wrangler resolves it (the part this test reads). */
const readConfig = (env?: string): WranglerConfig => unstable_readConfig({ config: wranglerConfigPath, env }, { hideWarnings: true });
const production = readConfig('production');
const local = readConfig();

const doBindings = (config: WranglerConfig) =>
  config.durable_objects.bindings.map(({ name, class_name }) => `${name}:${class_name}`).sort();
const kvBindings = (config: WranglerConfig) => config.kv_namespaces.map(({ binding }) => binding).sort();

describe('the production Worker (wrangler.toml [env.production])', () => {
  let bundle: WorkerBundle;

  beforeAll(async () => {
    bundle = await buildWorkerBundle('production');
  }, 120_000);
  afterAll(() => rmSync(bundle.outdir, { recursive: true, force: true }));

  it('builds offline with `wrangler deploy --dry-run` and fits the Free plan size limit', () => {
    expect(bundle.output).toMatch(/--dry-run: exiting now/);
    expect(bundle.gzipBytes).toBeLessThan(WORKER_SIZE_LIMITS.freeGzipBytes);
    expect(bundle.bytes).toBeLessThan(WORKER_SIZE_LIMITS.uncompressedBytes);
    // What wrangler prints is what it would upload: the bindings of the production section.
    for (const binding of ['VOICE_GATE', 'RATE_LIMITER', 'CALLER_HOME', 'EDGE_INDEX']) expect(bundle.output).toContain(`env.${binding} `);
  });

  it('binds every Durable Object class the Worker exports, each created by a migration', () => {
    const classes = exportedClasses(bundle.code);
    expect(classes).toEqual(['CallerHome', 'RateLimiter', 'VoiceGate']);
    expect(production.durable_objects.bindings.map(({ class_name }) => class_name).sort()).toEqual(classes);
    // The classes the migrations leave, applied in order as Cloudflare applies them.
    const standing = new Set<string>();
    for (const migration of production.migrations) {
      for (const name of [...(migration.new_sqlite_classes ?? []), ...(migration.new_classes ?? [])]) standing.add(name);
      for (const name of migration.deleted_classes ?? []) standing.delete(name);
      for (const { from, to } of migration.renamed_classes ?? []) {
        expect(standing.delete(from), `renamed class ${from} was created before`).toBe(true);
        standing.add(to);
      }
    }
    expect([...standing].sort()).toEqual(classes);
    // SQLite-backed storage, the only kind the Free plan offers and the one the objects are written for.
    expect(production.migrations.flatMap((migration) => migration.new_classes ?? [])).toEqual([]);
  });

  it('binds the same names as the local configuration the tests and `npm start` run', () => {
    expect(doBindings(production)).toEqual(doBindings(local));
    expect(kvBindings(production)).toEqual(['EDGE_INDEX']);
    expect(kvBindings(production)).toEqual(kvBindings(local));
  });

  it('lists exactly the secrets the Worker needs, and keeps them out of its vars', () => {
    const secrets = production.secrets?.required ?? [];
    expect(secrets.sort()).toEqual(['AUTH_TOKEN_PRIVATE_JWK', 'INTERNAL_SECRET']);
    for (const config of [production, local]) expect(Object.keys(config.vars).filter((name) => secrets.includes(name))).toEqual([]);

    // The vars alone are a whole configuration but for the secrets: the Worker names exactly those as missing.
    const withoutSecrets = () => parseConfig(production.vars);
    expect(withoutSecrets).toThrow(ConfigError);
    expect(withoutSecrets).toThrow(`invalid or missing settings: ${['INTERNAL_SECRET', 'AUTH_TOKEN_PRIVATE_JWK'].join(', ')}`);
    const jwk = JSON.stringify(generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }));
    const config = parseConfig({ ...production.vars, INTERNAL_SECRET: 'a-production-secret-of-32-chars!', AUTH_TOKEN_PRIVATE_JWK: jwk });
    expect(config.variant).toBe('A');
  });

  it('serves on a route of its own and reaches the origin over https', () => {
    expect(production.routes?.length).toBeGreaterThan(0);
    const vars = production.vars;
    expect(new URL(vars.ORIGIN_URL!).protocol).toBe('https:');
    expect(new URL(vars.LICENSING_URL!).protocol).toBe('https:');
    expect(production.observability?.enabled).toBe(true);
  });
});
