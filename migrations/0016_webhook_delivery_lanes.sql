-- Issue 31: several deliveries in flight per endpoint. A delivery's order key (the voice of an event
-- that changes a voice's state) keeps one voice's such events in order; everything else goes out in
-- parallel, up to WEBHOOK_CONCURRENCY leased at once per endpoint (leased_until marks those in flight).
-- The partial indexes serve the claim; the one on domain_events finds the owner an erased voice had.
ALTER TABLE "webhook_deliveries" ADD COLUMN "order_key" text;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "leased_until" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "domain_events_voice_deleted_idx" ON "domain_events" USING btree ("voice_id") WHERE "domain_events"."event_type" = 'voice.deleted';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_due_idx" ON "webhook_deliveries" USING btree ("endpoint_id","next_attempt_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_order_idx" ON "webhook_deliveries" USING btree ("endpoint_id","order_key","occurred_at","event_id") WHERE "webhook_deliveries"."status" = 'pending' and "webhook_deliveries"."order_key" is not null;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_in_flight_idx" ON "webhook_deliveries" USING btree ("endpoint_id","leased_until") WHERE "webhook_deliveries"."status" = 'pending' and "webhook_deliveries"."leased_until" is not null;--> statement-breakpoint
-- Deliveries still pending from before keep their order: the same key the fan-out now gives them.
UPDATE "webhook_deliveries" SET "order_key" = "domain_events"."voice_id"::text FROM "domain_events"
WHERE "webhook_deliveries"."event_id" = "domain_events"."id" AND "webhook_deliveries"."status" = 'pending'
  AND "domain_events"."voice_id" IS NOT NULL
  AND "webhook_deliveries"."event_type" IN ('enrollment.complete', 'voice.review_pending', 'voice.review_cleared',
    'voice.review_rejected', 'license.granted', 'license.renewed', 'license.revoked', 'license.expired',
    'license.request_declined', 'voice.deleted');
