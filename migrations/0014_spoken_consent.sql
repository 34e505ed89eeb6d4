CREATE TABLE "consent_challenges" (
	"id" uuid PRIMARY KEY NOT NULL,
	"owner_id" uuid NOT NULL,
	"statement_version" text NOT NULL,
	"language" text NOT NULL,
	"phrase" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "spoken_consent_recordings" (
	"voice_id" uuid PRIMARY KEY NOT NULL,
	"audio" "bytea" NOT NULL,
	"filename" text NOT NULL,
	"sha256" text NOT NULL,
	"recorded_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "biometric_consents" ADD COLUMN "spoken_evidence" jsonb;--> statement-breakpoint
ALTER TABLE "consent_challenges" ADD CONSTRAINT "consent_challenges_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spoken_consent_recordings" ADD CONSTRAINT "spoken_consent_recordings_voice_id_voices_id_fk" FOREIGN KEY ("voice_id") REFERENCES "public"."voices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "consent_challenges_owner_idx" ON "consent_challenges" USING btree ("owner_id");