CREATE TABLE "audit_checkpoints" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tree_size" bigint NOT NULL,
	"head_hash" text NOT NULL,
	"signed_at" timestamp (3) with time zone NOT NULL,
	"key_id" text NOT NULL,
	"signature" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "audit_checkpoints_tree_size_unique" UNIQUE("tree_size")
);
--> statement-breakpoint
CREATE TABLE "audit_entries" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"check_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"decided_at" text NOT NULL,
	"recorded_at" timestamp (3) with time zone NOT NULL,
	"voice_id" uuid,
	"platform_name" text,
	"intended_use" text,
	"decision" text,
	"action" text,
	"reason" text,
	"license_status" text,
	"consent_status" text,
	"caller_type" text NOT NULL,
	"caller_id" text,
	"token_jti" text,
	"prev_hash" text NOT NULL,
	"entry_hash" text NOT NULL,
	CONSTRAINT "audit_entries_check_id_unique" UNIQUE("check_id")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"message_id" text NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"event_id" bigint NOT NULL,
	"event_type" text NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"body" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"last_status_code" integer,
	"last_error" text,
	"finished_at" timestamp with time zone,
	CONSTRAINT "webhook_deliveries_message_id_unique" UNIQUE("message_id")
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" uuid PRIMARY KEY NOT NULL,
	"owner_id" uuid NOT NULL,
	"url" text NOT NULL,
	"events" jsonb NOT NULL,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_until" timestamp with time zone,
	"disabled_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_fanned_out" (
	"event_id" bigint PRIMARY KEY NOT NULL
);
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_fanned_out" ADD CONSTRAINT "webhook_fanned_out_event_id_domain_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."domain_events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_entries_voice_idx" ON "audit_entries" USING btree ("voice_id","seq");--> statement-breakpoint
CREATE INDEX "audit_entries_platform_idx" ON "audit_entries" USING btree ("platform_name","seq");--> statement-breakpoint
CREATE INDEX "audit_entries_recorded_idx" ON "audit_entries" USING btree ("recorded_at");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_endpoint_event_idx" ON "webhook_deliveries" USING btree ("endpoint_id","event_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries" USING btree ("endpoint_id","occurred_at","event_id") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_endpoints_owner_idx" ON "webhook_endpoints" USING btree ("owner_id","created_at");