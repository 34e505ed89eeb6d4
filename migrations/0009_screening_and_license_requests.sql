-- Issue 13: licence requests, platform webhooks, per-credential rate windows.
-- A platform's request for a licence. voice_id has no foreign key: a deleted voice closes its
-- requests, and the requesting platform can still read what became of them.
CREATE TABLE "license_requests" (
	"id" uuid PRIMARY KEY NOT NULL,
	"voice_id" uuid NOT NULL,
	"platform_name" text NOT NULL,
	"scopes" text[] NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"message" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"answered_at" timestamp with time zone,
	"license_id" uuid,
	"decline_reason" text,
	"closed_reason" text
);--> statement-breakpoint
CREATE UNIQUE INDEX "license_requests_one_pending_idx" ON "license_requests" USING btree ("voice_id","platform_name") WHERE "license_requests"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "license_requests_voice_idx" ON "license_requests" USING btree ("voice_id","created_at","id");--> statement-breakpoint
-- Webhook endpoints belong to an account or to a platform (whose key registered them), never both.
ALTER TABLE "webhook_endpoints" ALTER COLUMN "owner_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "platform_name" text;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_platform_name_platforms_name_fk" FOREIGN KEY ("platform_name") REFERENCES "public"."platforms"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_one_subscriber" CHECK (("owner_id" IS NULL) <> ("platform_name" IS NULL));--> statement-breakpoint
CREATE INDEX "webhook_endpoints_platform_idx" ON "webhook_endpoints" USING btree ("platform_name","created_at");--> statement-breakpoint
-- An event addressed to one platform goes to that platform's endpoints only (not even an admin's).
ALTER TABLE "domain_events" ADD COLUMN "platform_name" text;--> statement-breakpoint
-- Calls per credential per fixed window, shared by every origin process.
CREATE TABLE "rate_limit_windows" (
	"subject" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"calls" integer NOT NULL,
	CONSTRAINT "rate_limit_windows_pk" PRIMARY KEY("subject","window_start")
);
