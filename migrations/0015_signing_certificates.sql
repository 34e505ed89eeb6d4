CREATE TABLE "signing_certificates" (
	"id" uuid PRIMARY KEY NOT NULL,
	"platform_id" uuid NOT NULL,
	"pem" text NOT NULL,
	"fingerprint" text NOT NULL,
	"subject" text NOT NULL,
	"issuer" text NOT NULL,
	"is_ca" boolean NOT NULL,
	"not_before" timestamp with time zone NOT NULL,
	"not_after" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "signing_certificates_platform_fingerprint" UNIQUE("platform_id","fingerprint")
);
--> statement-breakpoint
ALTER TABLE "signing_certificates" ADD CONSTRAINT "signing_certificates_platform_id_platforms_id_fk" FOREIGN KEY ("platform_id") REFERENCES "public"."platforms"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "signing_certificates_platform_idx" ON "signing_certificates" USING btree ("platform_id");