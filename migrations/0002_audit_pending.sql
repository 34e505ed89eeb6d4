CREATE TABLE "audit_pending" (
	"check_id" uuid PRIMARY KEY NOT NULL,
	"record" jsonb NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
