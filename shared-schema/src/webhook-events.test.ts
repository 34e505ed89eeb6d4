import { describe, expect, it } from 'vitest';
import {
  ORDERED_WEBHOOK_EVENTS,
  OWNER_WEBHOOK_EVENTS,
  PLATFORM_WEBHOOK_EVENTS,
  WEBHOOK_EVENTS,
  webhookEventFields,
} from './webhook-events.js';

describe('the webhook events', () => {
  it('go to an owner, a platform or both: a platform only ever about its own licences and requests', () => {
    expect([...PLATFORM_WEBHOOK_EVENTS].sort()).toEqual([
      'license.expired',
      'license.granted',
      'license.renewed',
      'license.request_declined',
      'license.revoked',
    ]);
    expect(WEBHOOK_EVENTS.filter((event) => !OWNER_WEBHOOK_EVENTS.includes(event as never))).toEqual([
      'license.granted',
      'license.request_declined',
    ]);
    expect(
      WEBHOOK_EVENTS.filter((event) => !OWNER_WEBHOOK_EVENTS.includes(event as never) && !PLATFORM_WEBHOOK_EVENTS.includes(event as never)),
    ).toEqual([]);
  });

  it('orders the events that change a voice, and no report of something that happened', () => {
    expect(ORDERED_WEBHOOK_EVENTS).toContain('voice.deleted');
    expect(ORDERED_WEBHOOK_EVENTS).toContain('license.granted');
    for (const event of [
      'pre_synthesis.blocked',
      'voice.detected',
      'license.requested',
      'enrollment.failed',
      'provenance.verification_failed',
    ])
      expect(ORDERED_WEBHOOK_EVENTS).not.toContain(event);
  });

  it("keeps each recipient's fields: the platform's copy of a licence change names no owner, the owner's names the platform", () => {
    const owner = webhookEventFields('license.revoked', 'owner');
    const platform = webhookEventFields('license.revoked', 'platform');
    expect(Object.keys(owner.shape).sort()).toEqual(['expires_at', 'license_id', 'platform_name']);
    expect(Object.keys(platform.shape).sort()).toEqual(['expires_at', 'license_id', 'scopes']);
    expect(Object.keys(webhookEventFields('license.granted', 'platform').shape)).toContain('license_token');
    expect(() => webhookEventFields('license.granted', 'owner')).toThrow(/not sent to a owner/);
  });
});
