import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post } from '../support/service.js';
import { type Actor, expectProblem, type Receiver, Security, startReceiver } from './support.js';

/**
 * Threat: server-side request forgery (OWASP API7) through webhook URLs. With loopback receivers
 * not allowed (the production default), every URL that reaches the service's own host, a private
 * network, cloud metadata or a non-HTTP scheme is refused at registration; deliveries do not follow
 * redirects.
 */

const SSRF_URLS: string[] = [
  // loopback
  'http://127.0.0.1/hook',
  'http://127.0.0.1:8080/api/v1/platforms',
  'http://127.1.2.3/hook',
  'http://[::1]/hook',
  'http://localhost/hook',
  'http://LOCALHOST:8787/hook',
  'http://localhost./hook',
  'http://0.0.0.0/hook',
  'http://0/hook',
  'http://[::]/hook',
  // private ranges
  'http://10.0.0.1/hook',
  'http://10.255.255.254/hook',
  'http://172.16.0.1/hook',
  'http://172.31.255.254/hook',
  'http://192.168.0.1/hook',
  'http://192.168.255.254/hook',
  'http://100.64.0.1/hook',
  'http://[fc00::1]/hook',
  'http://[fd12:3456::1]/hook',
  // link-local and cloud metadata
  'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
  'http://169.254.169.254/computeMetadata/v1/',
  'http://[fe80::1]/hook',
  'http://[fd00:ec2::254]/latest/meta-data/',
  // IPv4-mapped IPv6
  'http://[::ffff:127.0.0.1]/hook',
  'http://[::ffff:7f00:1]/hook',
  'http://[::ffff:169.254.169.254]/hook',
  'http://[0:0:0:0:0:ffff:10.0.0.1]/hook',
  'http://[::ffff:192.168.1.1]/hook',
  // other spellings of 127.0.0.1 and 169.254.169.254
  'http://2130706433/hook',
  'http://0x7f000001/hook',
  'http://0x7f.0.0.1/hook',
  'http://0177.0.0.1/hook',
  'http://127.1/hook',
  'http://2852039166/latest/meta-data/',
  'http://0xA9FEA9FE/latest/meta-data/',
  'http://%31%32%37.0.0.1/hook',
  // multicast, broadcast, reserved
  'http://224.0.0.1/hook',
  'http://255.255.255.255/hook',
  'http://240.0.0.1/hook',
  // names that resolve to loopback
  'http://localhost.localdomain/hook',
  'http://ip6-localhost/hook',
  // credentials in the URL
  'https://user:pass@93.184.215.14/hook',
  'https://user@93.184.215.14/hook',
  'https://93.184.215.14@127.0.0.1/hook',
  // other schemes
  'file:///etc/passwd',
  'ftp://93.184.215.14/hook',
  'gopher://127.0.0.1:6379/_INFO',
  'dict://127.0.0.1:11211/stat',
  'ws://93.184.215.14/hook',
  'data:text/plain,hello',
  'javascript:alert(1)',
  'ldap://127.0.0.1/',
  // not URLs at all
  '//127.0.0.1/hook',
  '/api/v1/platforms',
  'http:///hook',
  'http://',
];

describe('SSRF: webhook URLs are refused at registration', () => {
  let s: Security;
  let owner: Actor;

  beforeAll(async () => {
    s = await Security.start('ssrf', { WEBHOOK_ALLOW_LOOPBACK: 'false' });
    owner = await s.owner('ssrf-owner');
  }, 180_000);

  afterAll(async () => {
    await s?.stop();
  });

  const register = (url: string) => post(`${s.origin}/api/v1/webhooks/register`, { url, events: ['voice.deleted'] }, owner.auth);

  it('registers a public address (the control: refusals below are about the address)', async () => {
    const response = await register('https://93.184.215.14/hooks/vip');
    expect(response.status).toBe(201);
  });

  it('refuses every loopback, private, link-local, mapped, odd-spelled, credentialed or non-http URL with 422 on body.url', async () => {
    const accepted: string[] = [];
    for (const url of SSRF_URLS) {
      const response = await register(url);
      if (response.status === 201) {
        accepted.push(url);
        continue;
      }
      const problem = await expectProblem(response, 422, 'validation_failed');
      expect(problem.errors, url).toEqual([expect.objectContaining({ field: 'body.url' })]);
    }
    expect(accepted).toEqual([]);
    // Nothing was stored but the control.
    const list = await json(await fetch(`${s.origin}/api/v1/webhooks`, { headers: owner.auth }));
    expect((list.webhooks as { url: string }[]).map((w) => w.url)).toEqual(['https://93.184.215.14/hooks/vip']);
  });

  it('refuses an admin too: the ban is not a matter of role', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://127.0.0.1:8080/']) {
      await expectProblem(
        await post(`${s.origin}/api/v1/webhooks/register`, { url, events: ['voice.deleted'] }, s.admin.auth),
        422,
        'validation_failed',
      );
    }
  });
});

describe('SSRF: deliveries do not follow redirects (loopback receivers allowed here)', () => {
  let s: Security;
  let owner: Actor;
  let inside: Receiver;
  let outside: Receiver;

  beforeAll(async () => {
    s = await Security.start('ssrf-redirect', { WEBHOOK_ALLOW_LOOPBACK: 'true' });
    owner = await s.owner('ssrf-redirect-owner');
    // "inside" stands for a service the webhook must never reach; "outside" redirects to it.
    inside = await startReceiver();
    outside = await startReceiver(() => ({ status: 302, headers: { location: `${inside.url}/internal-admin` } }));
  }, 180_000);

  afterAll(async () => {
    await inside?.close();
    await outside?.close();
    await s?.stop();
  });

  it('reports a 3xx as a failed attempt and never requests the Location', async () => {
    const hook = await post(`${s.origin}/api/v1/webhooks/register`, { url: `${outside.url}/hook`, events: ['voice.deleted'] }, owner.auth);
    expect(hook.status).toBe(201);
    const id = (await json(hook)).webhook_id as string;
    const result = await json(await post(`${s.origin}/api/v1/webhooks/${id}/test`, {}, owner.auth));
    expect(result).toMatchObject({ delivered: false, status_code: 302 });
    expect(outside.requests.length).toBe(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(inside.requests).toEqual([]);
  });

  it('still refuses private, metadata and mapped addresses when loopback is allowed', async () => {
    for (const url of [
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:192.168.1.1]/hook',
      'http://0.0.0.0/hook',
    ]) {
      const response = await post(`${s.origin}/api/v1/webhooks/register`, { url, events: ['voice.deleted'] }, owner.auth);
      await expectProblem(response, 422, 'validation_failed');
    }
  });
});
