-- Issue 16: an endpoint's recent deliveries through the API (GET /api/v1/webhooks/{id}/deliveries).
-- Test deliveries are recorded beside the events' (finished at once, no event), each attempt's time
-- is kept so the history can say when the receiver was last tried, and an index serves "this
-- endpoint's newest rows first" without walking other endpoints' deliveries.
ALTER TABLE "webhook_deliveries" ALTER COLUMN "event_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "last_attempt_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_recent_idx" ON "webhook_deliveries" USING btree ("endpoint_id","id");
