import { createCheckpointSigner } from './audit/checkpoints.js';
import { createAccessTokens, generateSigningJwk } from './auth/access-tokens.js';
import { ensureAdmin } from './auth/bootstrap.js';
import { scryptHasher } from './auth/passwords.js';
import { loadConfig } from './config.js';
import { openConfiguredDatabase } from './db/open.js';
import { OutboxSender } from './edge-sync/sender.js';
import { OutboxSignal } from './edge-sync/signal.js';
import { createAuditAndWebhookJobs } from './jobs/background-jobs.js';
import { LicenseExpiryJob } from './jobs/license-expiry.js';
import { LicenseService } from './licenses/service.js';
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
const outbox = new OutboxSignal();
const voiceprint = await createVoiceprintEngine({
  modelsDir: config.voiceprint.modelsDir,
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
  audit,
  tlog,
  webhooks: webhookService,
} = await buildServer({
  db: database.db,
  tokens,
  hasher: scryptHasher(),
  runtime: systemRuntime,
  outbox,
  logger: { level: config.logLevel },
  trustProxy: config.trustProxy,
  requestTimeoutMs: config.requestTimeoutMs,
  voiceprint,
  checkpoints,
  tlogOrigin: config.tlog.origin,
  webhooks,
  protection: config.protection,
});
app.log.info({ model: voiceprint.model.name, backend: voiceprint.backend }, 'voiceprint engine ready');
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

const sender = config.edge
  ? new OutboxSender({
      db: database.db,
      edge: config.edge,
      signal: outbox,
      clock: systemRuntime.clock,
      log: app.log.child({ component: 'edge-sync' }),
    })
  : null;
if (!sender) app.log.warn('EDGE_URL is not set: edge index updates stay queued in the outbox');

const licenseExpiry = new LicenseExpiryJob({
  licenses: new LicenseService({ db: database.db, runtime: systemRuntime, outbox }),
  intervalMs: config.licenseExpiryIntervalMs,
  log: app.log.child({ component: 'license-expiry' }),
});

const auditAndWebhooks = createAuditAndWebhookJobs({
  db: database.db,
  clock: systemRuntime.clock,
  log: app.log,
  audit,
  tlog,
  edge: config.edge,
  checkpointIntervalMs: config.auditCheckpointIntervalMs,
  tlogCheckpointIntervalMs: config.tlog.checkpointIntervalMs,
  webhookSender: webhooks.sender,
  retryScheduleSeconds: config.webhooks.retryScheduleSeconds,
});

await app.listen({ port: config.port, host: config.host });
sender?.start();
licenseExpiry.start();
auditAndWebhooks.start();

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'shutting down');
  await app.close();
  await voiceprint.close();
  await sender?.stop();
  await licenseExpiry.stop();
  await auditAndWebhooks.stop();
  await database.close();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
