-- Issue 32: the watermark id minted at each redemption, registered to it (resolved only here, never in
-- the public chain), and the signed manifest a platform may deposit for the file it marked.
CREATE TABLE "watermark_manifests" (
	"redemption_check_id" uuid PRIMARY KEY NOT NULL,
	"manifest" "bytea" NOT NULL,
	"deposited_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "watermark_marks" (
	"redemption_check_id" uuid PRIMARY KEY NOT NULL,
	"watermark_id" text NOT NULL,
	"voice_id" uuid NOT NULL,
	"platform_name" text NOT NULL,
	"intended_use" text NOT NULL,
	"token_jti" text NOT NULL,
	"redeemed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "watermark_manifests" ADD CONSTRAINT "watermark_manifests_redemption_check_id_watermark_marks_redemption_check_id_fk" FOREIGN KEY ("redemption_check_id") REFERENCES "public"."watermark_marks"("redemption_check_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "watermark_marks_watermark_id_idx" ON "watermark_marks" USING btree ("watermark_id");