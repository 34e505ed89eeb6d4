import { describe, expect, it } from 'vitest';
import { DEFAULT_DATABASE_TIMEOUTS, DEFAULT_REGISTRATIONS_PER_MINUTE, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('fills the defaults: port 8080 on loopback, PGlite under ./.data, no edge', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      database: { kind: 'pglite', dir: './.data/pglite' },
      edge: null,
      jwtPrivateJwk: null,
      admin: { email: 'admin@vip.local', password: null },
      logLevel: 'info',
    });
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ ORIGIN_PORT: '', DATABASE_URL: '', LOG_LEVEL: '' }).port).toBe(8080);
  });

  it('starts the local WebSocket proxy for a loopback Postgres only, unless told otherwise', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/vip' }).database).toEqual({
      kind: 'postgres',
      url: 'postgres://postgres@127.0.0.1:5432/vip',
      localProxy: true,
      timeouts: DEFAULT_DATABASE_TIMEOUTS,
    });
    expect(loadConfig({ DATABASE_URL: 'postgresql://u:p@ep-x.eu-central-1.aws.neon.tech/db' }).database).toMatchObject({
      localProxy: false,
    });
    expect(loadConfig({ DATABASE_URL: 'postgres://db.internal/vip', DATABASE_WS_PROXY: 'on' }).database).toMatchObject({
      localProxy: true,
    });
  });

  it('bounds waiting for the database, on either driver, with the timeouts given', () => {
    expect(loadConfig({}).database.timeouts).toEqual({ statementMs: 5_000, lockMs: 2_000, acquireMs: 4_000 });
    const env = { DATABASE_STATEMENT_TIMEOUT_MS: '1500', DATABASE_LOCK_TIMEOUT_MS: '300', DATABASE_ACQUIRE_TIMEOUT_MS: '800' };
    const timeouts = { statementMs: 1_500, lockMs: 300, acquireMs: 800 };
    expect(loadConfig(env).database).toEqual({ kind: 'pglite', dir: './.data/pglite', timeouts });
    expect(loadConfig({ ...env, DATABASE_URL: 'postgres://db.internal/vip' }).database).toMatchObject({ kind: 'postgres', timeouts });
    expect(() => loadConfig({ DATABASE_LOCK_TIMEOUT_MS: '0' })).toThrow(/DATABASE_LOCK_TIMEOUT_MS/);
    expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '5s' })).toThrow(/DATABASE_STATEMENT_TIMEOUT_MS/);
  });

  it('needs INTERNAL_SECRET when EDGE_URL is set', () => {
    expect(() => loadConfig({ EDGE_URL: 'http://127.0.0.1:8787' })).toThrow(/INTERNAL_SECRET/);
    expect(loadConfig({ EDGE_URL: 'http://127.0.0.1:8787', INTERNAL_SECRET: 'a-long-shared-secret' }).edge).toEqual({
      url: 'http://127.0.0.1:8787',
      internalSecret: 'a-long-shared-secret',
    });
  });

  it('refuses a bad port, a bad log level and a JWK that is not an Ed25519 private key, naming the variable', () => {
    expect(() => loadConfig({ ORIGIN_PORT: 'eighty' })).toThrow(/ORIGIN_PORT/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ JWT_PRIVATE_JWK: '{"kty":"OKP","crv":"Ed25519","x":"abc"}' })).toThrow(/JWT_PRIVATE_JWK/);
  });

  it('never puts a secret value into its error message', () => {
    const secret = 'short';
    expect(() => loadConfig({ EDGE_URL: 'http://127.0.0.1:8787', INTERNAL_SECRET: secret })).toThrow(/^(?![\s\S]*short)/);
  });

  it('reads the audit and webhook settings: the Standard Webhooks schedule unless WEBHOOK_RETRY_SCHEDULE replaces it', () => {
    expect(loadConfig({})).toMatchObject({
      checkpointPrivateJwk: null,
      auditCheckpointIntervalMs: 60_000,
      gateVariant: 'A',
      webhooks: {
        allowLoopback: false,
        retryScheduleSeconds: [0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400],
        timeoutMs: 15_000,
      },
    });
    const config = loadConfig({ GATE_VARIANT: 'B', WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1,1,2' });
    expect(config).toMatchObject({ gateVariant: 'B', webhooks: { allowLoopback: true, retryScheduleSeconds: [0, 1, 1, 2] } });
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0,soon' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(loadConfig({ WEBHOOK_TIMEOUT_SECONDS: '2' }).webhooks.timeoutMs).toBe(2_000);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_SECONDS: '60' })).toThrow(/WEBHOOK_TIMEOUT_SECONDS/);
    expect(() => loadConfig({ CHECKPOINT_PRIVATE_JWK: '{"kty":"OKP"}' })).toThrow(/CHECKPOINT_PRIVATE_JWK/);
  });

  it('reads SECRETS_ENCRYPTION_KEYS in order (the first encrypts) and refuses a malformed list without echoing a key', () => {
    expect(loadConfig({}).secretsEncryptionKeys).toBeNull();
    const current = Buffer.alloc(32, 1).toString('base64url');
    const previous = Buffer.alloc(32, 2).toString('base64url');
    expect(loadConfig({ SECRETS_ENCRYPTION_KEYS: `k2:${current}, k1:${previous}` }).secretsEncryptionKeys).toEqual([
      { id: 'k2', key: Buffer.alloc(32, 1) },
      { id: 'k1', key: Buffer.alloc(32, 2) },
    ]);
    const short = Buffer.alloc(16, 3).toString('base64url');
    for (const bad of [current, `k1:${short}`, `k1:${current},k1:${previous}`, `k.1:${current}`]) {
      expect(() => loadConfig({ SECRETS_ENCRYPTION_KEYS: bad })).toThrow(/SECRETS_ENCRYPTION_KEYS/);
    }
    expect(() => loadConfig({ SECRETS_ENCRYPTION_KEYS: `k1:${short}` })).toThrow(/^(?![\s\S]*AwMDAw)/);
  });

  it('reads the 1:N targets, each a rate strictly between 0 and 1', () => {
    const config = loadConfig({
      DESIGN_REGISTRY_SIZE: '5000',
      SCREENING_FPIR: '0.02',
      CONFLICT_STRICT_FPIR: '0.005',
      CONFLICT_REVIEW_FNIR: '0.1',
    });
    expect(config.voiceprint.searchTargets).toEqual({
      designRegistrySize: 5000,
      screeningFpir: 0.02,
      conflictStrictFpir: 0.005,
      conflictReviewFnir: 0.1,
    });
    expect(() => loadConfig({ CONFLICT_REVIEW_FNIR: '0' })).toThrow(/CONFLICT_REVIEW_FNIR/);
    expect(() => loadConfig({ SCREENING_FPIR: '1' })).toThrow(/SCREENING_FPIR/);
    expect(() => loadConfig({ DESIGN_REGISTRY_SIZE: '0' })).toThrow(/DESIGN_REGISTRY_SIZE/);
  });

  it('lower-cases the admin email', () => {
    expect(loadConfig({ ADMIN_EMAIL: 'Admin@Example.com' }).admin.email).toBe('admin@example.com');
  });

  it('reads the voiceprint engine settings: models under DATA_DIR, queue, threads, backend and threshold overrides', () => {
    expect(loadConfig({ DATA_DIR: '/srv/vip/' }).voiceprint).toEqual({
      modelsDir: '/srv/vip/models',
      model: undefined,
      backend: 'auto',
      threads: undefined,
      maxQueue: 16,
      thresholds: {},
      searchTargets: {
        designRegistrySize: undefined,
        screeningFpir: undefined,
        conflictStrictFpir: undefined,
        conflictReviewFnir: undefined,
      },
    });
    const config = loadConfig({
      MODELS_DIR: '/models',
      VOICEPRINT_MODEL: 'vip-speaker-v1',
      VOICEPRINT_BACKEND: 'node',
      VOICEPRINT_THREADS: '3',
      VOICEPRINT_MAX_QUEUE: '0',
      VOICEPRINT_THRESHOLDS: 'campplus-voxceleb=0.55,vip-speaker-v1=.8',
    });
    expect(config.voiceprint).toEqual({
      modelsDir: '/models',
      model: 'vip-speaker-v1',
      backend: 'node',
      threads: 3,
      maxQueue: 0,
      thresholds: { 'campplus-voxceleb': 0.55, 'vip-speaker-v1': 0.8 },
      searchTargets: {
        designRegistrySize: undefined,
        screeningFpir: undefined,
        conflictStrictFpir: undefined,
        conflictReviewFnir: undefined,
      },
    });
    expect(() => loadConfig({ VOICEPRINT_THRESHOLDS: 'campplus-voxceleb' })).toThrow(/VOICEPRINT_THRESHOLDS/);
    expect(() => loadConfig({ VOICEPRINT_BACKEND: 'gpu' })).toThrow(/VOICEPRINT_BACKEND/);
    expect(() => loadConfig({ VOICEPRINT_MODEL: "v1'; drop table voices" })).toThrow(/VOICEPRINT_MODEL/);
  });

  it('reads REGISTRATIONS_PER_MINUTE, a whole number of at least 1, default DEFAULT_REGISTRATIONS_PER_MINUTE', () => {
    expect(loadConfig({}).registrationsPerMinute).toBe(DEFAULT_REGISTRATIONS_PER_MINUTE);
    expect(loadConfig({ REGISTRATIONS_PER_MINUTE: '20' }).registrationsPerMinute).toBe(20);
    expect(() => loadConfig({ REGISTRATIONS_PER_MINUTE: '0' })).toThrow(/REGISTRATIONS_PER_MINUTE/);
  });
});
