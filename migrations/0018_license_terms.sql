-- Issue 33: licences and licence requests carry terms (shared-schema/src/license-terms.ts): a
-- description of the intended uses, who represented the owner, and the compensation. Rows made before
-- have no description: one is written from their scopes and marked `from_scopes`, so nobody reads it
-- as words the owner or the platform stated. Their representation was never recorded: `none`.
ALTER TABLE "license_requests" ADD COLUMN "description" text;--> statement-breakpoint
ALTER TABLE "license_requests" ADD COLUMN "description_source" text DEFAULT 'stated' NOT NULL;--> statement-breakpoint
ALTER TABLE "license_requests" ADD COLUMN "represented_by" text DEFAULT 'none' NOT NULL;--> statement-breakpoint
ALTER TABLE "license_requests" ADD COLUMN "compensation" text;--> statement-breakpoint
ALTER TABLE "licenses" ADD COLUMN "description" text;--> statement-breakpoint
ALTER TABLE "licenses" ADD COLUMN "description_source" text DEFAULT 'stated' NOT NULL;--> statement-breakpoint
ALTER TABLE "licenses" ADD COLUMN "represented_by" text DEFAULT 'none' NOT NULL;--> statement-breakpoint
ALTER TABLE "licenses" ADD COLUMN "compensation" text;--> statement-breakpoint
UPDATE "license_requests" SET "description" = 'Uses named by scope only: ' || array_to_string("scopes", ', ') || '.', "description_source" = 'from_scopes';--> statement-breakpoint
UPDATE "licenses" SET "description" = 'Uses named by scope only: ' || array_to_string("scopes", ', ') || '.', "description_source" = 'from_scopes';--> statement-breakpoint
ALTER TABLE "license_requests" ALTER COLUMN "description" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "licenses" ALTER COLUMN "description" SET NOT NULL;
