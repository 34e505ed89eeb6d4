import { createCheckpointSigner } from './audit/checkpoints.js';
import { createAccessTokens, generateSigningJwk } from './auth/access-tokens.js';
import { ensureAdmin } from './auth/bootstrap.js';
import { scryptHasher } from './auth/passwords.js';
import { loadConfig } from './config.js';
import { openConfiguredDatabase } from './db/open.js';
import { WakeSignal } from './loops/wake-signal.js';
import { systemRuntime } from './runtime.js';
import { buildServer } from './server.js';
import { createVoiceprintEngine } from './voiceprint/index.js';
import { LOCAL_KEY_FILE, localEncryptionKeys, SecretEncryption } from './webhooks/secret-encryption.js';
import { webhookSettings } from './webhooks/service.js';

const config = loadConfig(process.env);
const database = await openConfiguredDatabase(config.database);
await database.migrate();

const signingJwk = config.jwtPrivateJwk ?? (await generateSigningJwk(`ephemeral-${systemRuntime.newId()}`));
const tokens = await createAccessTokens(signingJwk);
const outbox = new WakeSignal();
const voiceprint = await createVoiceprintEngine({
  modelsDir: config.voiceprint.modelsDir,
  model: config.voiceprint.model,
  backend: config.voiceprint.backend,
  threads: config.voiceprint.threads,
  maxQueue: config.voiceprint.maxQueue,
  thresholds: config.voiceprint.thresholds,
  searchTargets: config.voiceprint.searchTargets,
});
const checkpoints = await createCheckpointSigner(
  config.checkpointPrivateJwk ?? (await generateSigningJwk(`ephemeral-checkpoint-${systemRuntime.newId()}`)),
);
const webhooks = webhookSettings({
  allowLoopback: config.webhooks.allowLoopback,
  gateVariant: config.gateVariant,
  timeoutMs: config.webhooks.timeoutMs,
  secretEncryption: new SecretEncryption(config.secretsEncryptionKeys ?? (await localEncryptionKeys(config.dataDir))),
});
const {
  app,
  auth,
  jobs,
  spokenConsent,
  webhooks: webhookService,
} = await buildServer({
  database,
  tokens,
  hasher: scryptHasher(),
  runtime: systemRuntime,
  outbox,
  logger: { level: config.logLevel },
  trustProxy: config.trustProxy,
  instanceId: config.instanceId,
  requestTimeoutMs: config.requestTimeoutMs,
  voiceprint,
  closeVoiceprint: true,
  checkpoints,
  tlogOrigin: config.tlog.origin,
  webhooks,
  protection: config.protection,
  spokenConsent: config.spokenConsent,
  registrationsPerMinute: config.registrationsPerMinute,
  jobs: {
    edge: config.edge,
    licenseExpiryIntervalMs: config.licenseExpiryIntervalMs,
    auditCheckpointIntervalMs: config.auditCheckpointIntervalMs,
    ...(config.auditCollectIntervalMs !== null && { auditCollectIntervalMs: config.auditCollectIntervalMs }),
    tlogCheckpointIntervalMs: config.tlog.checkpointIntervalMs,
    webhookRetryScheduleSeconds: config.webhooks.retryScheduleSeconds,
    webhookConcurrencyPerEndpoint: config.webhooks.concurrencyPerEndpoint,
  },
});
app.log.info({ model: voiceprint.model.name, backend: voiceprint.backend }, 'voiceprint engine ready');
// A dictionary that cannot spell the statement or a phrase word stops the start, not the first enrollment.
await spokenConsent.ready();
if (!config.jwtPrivateJwk) app.log.warn('JWT_PRIVATE_JWK is not set: signing with a key that lives only until this process ends');
if (!config.checkpointPrivateJwk) {
  app.log.warn('CHECKPOINT_PRIVATE_JWK is not set: audit checkpoints are signed with a key that lives only until this process ends');
}
if (!config.secretsEncryptionKeys) {
  app.log.warn(
    `SECRETS_ENCRYPTION_KEYS is not set: webhook secrets are encrypted with the key in DATA_DIR/${LOCAL_KEY_FILE}; production must set it, the same on every replica`,
  );
}
// Before the webhook worker starts: rows from before encryption, or under a key no longer first.
const stored = await webhookService.reencryptStoredSecrets();
if (stored.reencrypted > 0) app.log.info({ count: stored.reencrypted }, 'webhook secrets re-encrypted under the current key');
if (stored.unreadable.length > 0) {
  app.log.error({ webhook_ids: stored.unreadable }, 'webhook secrets that no configured key decrypts: their deliveries are not sent');
}

const admin = await ensureAdmin(auth, database.db, systemRuntime, config.admin);
if (admin.outcome === 'created_with_generated_password') {
  // The one place a secret is ever printed: once, to stdout, when the admin account is first created.
  process.stdout.write(
    `\n===== VIP ADMIN ACCOUNT CREATED: ${config.admin.email} password: ${admin.password} (shown once; store it now) =====\n\n`,
  );
} else {
  app.log.info({ admin: config.admin.email, outcome: admin.outcome }, 'admin account checked');
}

if (!config.edge) app.log.warn('EDGE_URL is not set: edge index updates stay queued in the outbox');

await app.listen({ port: config.port, host: config.host });
jobs?.start();

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'shutting down');
  // Stops the server, then every background loop, the engine and the database (server.ts).
  await app.close();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
