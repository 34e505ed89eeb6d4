CREATE TABLE "licenses" (
	"id" uuid PRIMARY KEY NOT NULL,
	"voice_id" uuid NOT NULL,
	"platform_name" text NOT NULL,
	"scopes" text[] NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "licenses_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
ALTER TABLE "licenses" ADD CONSTRAINT "licenses_voice_id_voices_id_fk" FOREIGN KEY ("voice_id") REFERENCES "public"."voices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "licenses_voice_idx" ON "licenses" USING btree ("voice_id","created_at");--> statement-breakpoint
CREATE INDEX "licenses_active_expiry_idx" ON "licenses" USING btree ("expires_at") WHERE "licenses"."status" = 'active';