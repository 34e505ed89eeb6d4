-- Issue 35: a voice dispute (origin/src/db/schema/voice-disputes.ts): the person whose voice another account
-- enrolled claims it with their recordings and a spoken consent; the voice is held until an
-- administrator clears it, erases it or transfers it to them.
CREATE TABLE "voice_disputes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"claimant_id" uuid NOT NULL,
	"voice_id" uuid,
	"status" text NOT NULL,
	"name" text NOT NULL,
	"consent_id" uuid NOT NULL,
	"similarity" real NOT NULL,
	"model" text NOT NULL,
	"embedding" vector,
	"speech_seconds" real NOT NULL,
	"quality" jsonb NOT NULL,
	"spoken_evidence" jsonb NOT NULL,
	"recording" "bytea",
	"recording_filename" text,
	"check_id" uuid NOT NULL,
	"transferred_voice_id" uuid,
	"opened_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "voice_disputes" ADD CONSTRAINT "voice_disputes_claimant_id_users_id_fk" FOREIGN KEY ("claimant_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "voice_disputes" ADD CONSTRAINT "voice_disputes_voice_id_voices_id_fk" FOREIGN KEY ("voice_id") REFERENCES "public"."voices"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "voice_disputes" ADD CONSTRAINT "voice_disputes_transferred_voice_id_voices_id_fk" FOREIGN KEY ("transferred_voice_id") REFERENCES "public"."voices"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "voice_disputes_claimant_idx" ON "voice_disputes" USING btree ("claimant_id","opened_at");--> statement-breakpoint
CREATE UNIQUE INDEX "voice_disputes_open_voice_idx" ON "voice_disputes" USING btree ("voice_id") WHERE "voice_disputes"."status" = 'open';