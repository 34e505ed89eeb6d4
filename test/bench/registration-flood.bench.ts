import { pathOf } from '@vip/shared-schema';
import { loginRoute, registerRoute } from '@vip/shared-schema/routes/origin/auth';
import { scryptHasher } from '../../origin/src/auth/passwords.js';
import { PASSWORD, startTestOrigin, uniqueEmail } from '../../origin/src/testing/origin.js';
import type { Bench, Figure } from './bench.js';
import { median, round } from './support/stats.js';

/** Registrations (or bare hashes) in flight at once during a flood, as the probe sent them. */
const FLOOD_CONCURRENCY = 20;

const bench: Bench = {
  title: 'A login during a registration flood from many addresses (origin, production scrypt cost)',
  method: [
    'One origin in process (Fastify inject, embedded PGlite) with the production password hasher (scrypt N=2^15, r=8).',
    'A login of an existing account is timed with nothing else running, then while',
    `${FLOOD_CONCURRENCY} bare scrypt hashes run at once without pause (what ${FLOOD_CONCURRENCY} concurrent registrations cost before`,
    "registrations were queued: they share libuv's 4-thread pool with the login's verify), then while",
    `${FLOOD_CONCURRENCY} registrations at once go through \`POST /api/v1/auth/register\`, each from another address so the`,
    'per-address limit lets them all in: only the registration hashing queue (one hash at a time, 16 waiting, 503 beyond)',
    'stands between them and the logins. The figures are medians of the logins in each phase, and their ratios to the quiet',
    'login in the same run. `--quick` times 3 logins per phase and leaves out the unqueued phase.',
  ].join(' '),
  async run({ quick }) {
    const hasher = scryptHasher();
    const origin = await startTestOrigin({ hasher });
    try {
      const email = uniqueEmail('steady');
      await origin.auth.createUser(email, PASSWORD, 'owner');
      const logins = quick ? 3 : 9;
      const timeLogins = async () => {
        const times: number[] = [];
        for (let index = 0; index < logins; index++) {
          const started = performance.now();
          const answer = await origin.app.inject({
            method: 'POST',
            url: pathOf(loginRoute),
            payload: { email, password: PASSWORD },
            remoteAddress: '192.0.2.9',
          });
          if (answer.statusCode !== 200) throw new Error(`login answered ${answer.statusCode}`);
          times.push(performance.now() - started);
        }
        return median(times);
      };
      /** Runs `flood` FLOOD_CONCURRENCY at a time, without pause, while the logins are timed. */
      const during = async (flood: () => Promise<unknown>) => {
        let stopped = false;
        const floods = Array.from({ length: FLOOD_CONCURRENCY }, async () => {
          while (!stopped) await flood();
        });
        await new Promise((settle) => setTimeout(settle, 300));
        try {
          return await timeLogins();
        } finally {
          stopped = true;
          await Promise.all(floods);
        }
      };

      const quiet = await timeLogins();
      // The slow phase (seconds per login): left out of `--quick`, which compares the queued ratio only.
      const unqueued = quick ? null : await during(() => hasher.hash('a flood of registrations'));
      let registrations = 0;
      const statuses = new Map<number, number>();
      const queued = await during(async () => {
        const index = ++registrations;
        const answer = await origin.app.inject({
          method: 'POST',
          url: pathOf(registerRoute),
          payload: { email: uniqueEmail('flood'), password: PASSWORD },
          remoteAddress: `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`,
        });
        statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1);
      });
      const figures: Figure[] = [
        { key: 'registration_flood.login_quiet.p50_ms', label: 'login, nothing else running: p50', value: round(quiet, 0), unit: 'ms' },
        {
          key: 'registration_flood.login_queued.p50_ms',
          label: `login during ${FLOOD_CONCURRENCY} registrations at once from many addresses: p50`,
          value: round(queued, 0),
          unit: 'ms',
        },
        {
          key: 'registration_flood.queued_over_quiet',
          label: 'login p50 during the registration flood / quiet',
          value: round(queued / quiet, 2),
          unit: 'ratio',
          better: 'lower',
        },
        ...(unqueued === null
          ? []
          : [
              {
                key: 'registration_flood.login_unqueued.p50_ms',
                label: `login during ${FLOOD_CONCURRENCY} unqueued scrypt hashes at once: p50`,
                value: round(unqueued, 0),
                unit: 'ms',
              },
              {
                key: 'registration_flood.unqueued_over_quiet',
                label: 'login p50 during unqueued hashes / quiet',
                value: round(unqueued / quiet, 2),
                unit: 'ratio',
              },
            ]),
      ];
      const answered = [...statuses].map(([status, count]) => `${count} × ${status}`).join(', ');
      return { figures, notes: [`${logins} logins per phase; the registrations during the flood answered ${answered}.`] };
    } finally {
      await origin.close();
    }
  },
};

export default bench;
