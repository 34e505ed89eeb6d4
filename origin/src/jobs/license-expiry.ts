import type { FastifyBaseLogger } from 'fastify';
import type { LicenseService } from '../licenses/service.js';

export interface LicenseExpiryJobOptions {
  licenses: LicenseService;
  intervalMs: number;
  log: FastifyBaseLogger;
}

/**
 * Marks licences past their expiry as expired every `intervalMs`, announcing `license.expired` and
 * publishing the voice index. The edge already stops honouring a licence at its `expires_at`, so
 * this keeps the records and the events right; the gate does not wait for it.
 */
export class LicenseExpiryJob {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;

  constructor(private readonly options: LicenseExpiryJobOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.round ??= this.runOnce().finally(() => {
        this.round = null;
      });
    }, this.options.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.round;
  }

  /** One pass; a failure is logged and the next pass tries again. */
  async runOnce(): Promise<void> {
    try {
      const expired = await this.options.licenses.expireDueLicenses();
      if (expired > 0) this.options.log.info({ expired }, 'licences expired');
    } catch (error) {
      this.options.log.warn({ err: error }, 'licence expiry round failed');
    }
  }
}
