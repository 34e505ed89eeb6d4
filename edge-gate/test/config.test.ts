import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.js';

const settings = () => ({ ...env }) as Record<string, unknown>;

describe('edge config', () => {
  it('parses the deployed settings with their defaults', () => {
    const config = parseConfig(settings());
    expect(config).toMatchObject({
      variant: 'A',
      authorizationTokenTtlSeconds: 300,
      limits: { gatePerMinute: 1000, demoPerHour: 100, publicGatePerHour: 100 },
    });
    expect(config.approvalAlias.sunset.toISOString()).toBe('2026-09-17T23:59:59.000Z');
    expect(config.approvalAlias.keepAfterSunset).toBe(false);
  });

  it('names missing or invalid settings without echoing their values', () => {
    const broken = {
      ...settings(),
      INTERNAL_SECRET: undefined,
      AUTH_TOKEN_PRIVATE_JWK: '{"kty":"RSA","d":"very-secret"}',
      GATE_VARIANT: 'C',
    };
    expect(() => parseConfig(broken)).toThrow(ConfigError);
    try {
      parseConfig(broken);
    } catch (error) {
      expect((error as Error).message).toContain('INTERNAL_SECRET');
      expect((error as Error).message).toContain('AUTH_TOKEN_PRIVATE_JWK');
      expect((error as Error).message).toContain('GATE_VARIANT');
      expect((error as Error).message).not.toContain('very-secret');
    }
  });

  it('takes a longer token lifetime and the alias switch from settings', () => {
    const config = parseConfig({ ...settings(), AUTHORIZATION_TOKEN_TTL_SECONDS: '600', KEEP_APPROVAL_TOKEN_ALIAS: 'true' });
    expect(config.authorizationTokenTtlSeconds).toBe(600);
    expect(config.approvalAlias.keepAfterSunset).toBe(true);
  });
});
