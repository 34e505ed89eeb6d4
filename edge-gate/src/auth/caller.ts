import type { UserRole } from '@vip/shared-schema';

/** Who is calling: a platform by API key, a user by Bearer token, or nobody (public routes). */
export type Caller =
  | { kind: 'platform'; platform_name: string; platform_id: string; key_id: string; key_hash: string }
  | { kind: 'user'; user_id: string; role: UserRole }
  | { kind: 'anonymous'; ip: string };
