import { DurableObject } from 'cloudflare:workers';
import type { AuthorizationTokenClaims, VoiceIndexRecord } from '@vip/shared-schema';
import type { StoredVoice } from '../edge-index/voices.js';
import type { DecideInput, GateVerdict, Redemption } from '../gate/outcomes.js';
import { HeldVoice } from './held-voice.js';
import { PlatformDesk } from './platform-desk.js';
import { VoiceHome } from './voice-home.js';

/**
 * The Durable Object class of a voice's gate: the authoritative consent and licence state of the
 * voice as the origin pushes it (docs/ARCHITECTURE.md#consistency). Each object plays one of two
 * roles, fixed by the name its client addresses it by: the voice's home (voice-home.ts, through
 * voice-home-client.ts) or the voice's desk for one platform (platform-desk.ts, through
 * platform-desk-client.ts). The methods below only hand each call to its role. Both roles share one
 * class, and so one namespace, because the objects deployed under it must keep their storage
 * (docs/DECISIONS.md#a-voices-home-and-desks-two-roles-of-one-class).
 */
export class VoiceGate extends DurableObject<Env> {
  private readonly home: VoiceHome;
  private readonly desk: PlatformDesk;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const voice = new HeldVoice(ctx.storage);
    this.home = new VoiceHome(ctx, env, voice);
    this.desk = new PlatformDesk(ctx, env, voice);
  }

  /** Home: see VoiceHome.applyIndexUpdate. */
  applyIndexUpdate(voiceId: string, version: number, record: VoiceIndexRecord | null): Promise<'applied' | 'stale'> {
    return this.home.applyIndexUpdate(voiceId, version, record);
  }

  /** Home: see VoiceHome.openDesk. */
  openDesk(platform: string): Promise<StoredVoice> {
    return this.home.openDesk(platform);
  }

  /** Desk: see PlatformDesk.holdRecord. */
  holdRecord(stored: StoredVoice): Promise<void> {
    return this.desk.holdRecord(stored);
  }

  /** Desk: see PlatformDesk.decide. */
  decide(input: DecideInput): Promise<GateVerdict> {
    return this.desk.decide(input);
  }

  /** Desk: see PlatformDesk.redeem. */
  redeem(claims: AuthorizationTokenClaims, nowMs: number): Promise<Redemption> {
    return this.desk.redeem(claims, nowMs);
  }

  /** Only a desk sets an alarm: to purge its redeemed-token blocks. */
  override alarm(): Promise<void> {
    return this.desk.purgeRedeemed();
  }
}
