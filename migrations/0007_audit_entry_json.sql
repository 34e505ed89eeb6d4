-- The audit chain stores each entry as the canonical JSON it was hashed as (docs/CONTRACT.md#audit-chain):
-- verification then reads one text per entry instead of re-serialising eighteen columns. Existing
-- entries are written out once here, in the canonical form (keys sorted, JSON string escapes as
-- JSON.stringify writes them, recorded_at as toISOString writes it); the filter columns become
-- generated from the JSON, so no statement can set them apart from the entry.
ALTER TABLE "audit_entries" ADD COLUMN "entry_json" text;--> statement-breakpoint
UPDATE "audit_entries" SET "entry_json" = '{"action":' || coalesce(to_json("action")::text, 'null')
  || ',"caller_id":' || coalesce(to_json("caller_id")::text, 'null')
  || ',"caller_type":' || coalesce(to_json("caller_type")::text, 'null')
  || ',"check_id":' || coalesce(to_json("check_id"::text)::text, 'null')
  || ',"consent_status":' || coalesce(to_json("consent_status")::text, 'null')
  || ',"decided_at":' || coalesce(to_json("decided_at")::text, 'null')
  || ',"decision":' || coalesce(to_json("decision")::text, 'null')
  || ',"intended_use":' || coalesce(to_json("intended_use")::text, 'null')
  || ',"kind":' || coalesce(to_json("kind")::text, 'null')
  || ',"license_status":' || coalesce(to_json("license_status")::text, 'null')
  || ',"platform_name":' || coalesce(to_json("platform_name")::text, 'null')
  || ',"prev_hash":' || coalesce(to_json("prev_hash")::text, 'null')
  || ',"reason":' || coalesce(to_json("reason")::text, 'null')
  || ',"recorded_at":' || to_json(to_char("recorded_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
  || ',"seq":' || "seq"::text
  || ',"token_jti":' || coalesce(to_json("token_jti")::text, 'null')
  || ',"voice_id":' || coalesce(to_json("voice_id"::text)::text, 'null')
  || '}';--> statement-breakpoint
ALTER TABLE "audit_entries" ALTER COLUMN "entry_json" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_entries"
  DROP COLUMN "seq",
  DROP COLUMN "check_id",
  DROP COLUMN "kind",
  DROP COLUMN "decided_at",
  DROP COLUMN "recorded_at",
  DROP COLUMN "voice_id",
  DROP COLUMN "platform_name",
  DROP COLUMN "intended_use",
  DROP COLUMN "decision",
  DROP COLUMN "action",
  DROP COLUMN "reason",
  DROP COLUMN "license_status",
  DROP COLUMN "consent_status",
  DROP COLUMN "caller_type",
  DROP COLUMN "caller_id",
  DROP COLUMN "token_jti",
  DROP COLUMN "prev_hash";--> statement-breakpoint
ALTER TABLE "audit_entries"
  ADD COLUMN "seq" bigint PRIMARY KEY GENERATED ALWAYS AS ((entry_json::jsonb ->> 'seq')::bigint) STORED NOT NULL,
  ADD COLUMN "check_id" uuid GENERATED ALWAYS AS ((entry_json::jsonb ->> 'check_id')::uuid) STORED NOT NULL,
  ADD COLUMN "recorded_at" text GENERATED ALWAYS AS ((entry_json::jsonb ->> 'recorded_at')) STORED NOT NULL,
  ADD COLUMN "voice_id" uuid GENERATED ALWAYS AS ((entry_json::jsonb ->> 'voice_id')::uuid) STORED,
  ADD COLUMN "platform_name" text GENERATED ALWAYS AS ((entry_json::jsonb ->> 'platform_name')) STORED,
  ADD COLUMN "decision" text GENERATED ALWAYS AS ((entry_json::jsonb ->> 'decision')) STORED,
  ADD COLUMN "caller_type" text GENERATED ALWAYS AS ((entry_json::jsonb ->> 'caller_type')) STORED NOT NULL,
  ADD COLUMN "caller_id" text GENERATED ALWAYS AS ((entry_json::jsonb ->> 'caller_id')) STORED;--> statement-breakpoint
ALTER TABLE "audit_entries" ADD CONSTRAINT "audit_entries_check_id_unique" UNIQUE("check_id");--> statement-breakpoint
CREATE INDEX "audit_entries_voice_idx" ON "audit_entries" USING btree ("voice_id","seq");--> statement-breakpoint
CREATE INDEX "audit_entries_platform_idx" ON "audit_entries" USING btree ("platform_name","seq");--> statement-breakpoint
CREATE INDEX "audit_entries_recorded_idx" ON "audit_entries" USING btree ("recorded_at");
