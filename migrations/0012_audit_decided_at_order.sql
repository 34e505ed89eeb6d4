-- The audit log can be read in `decided_at` order (issue 14): the time a plane made the decision,
-- which the edge's records can precede their chaining (`seq`, `recorded_at`) by the collector's
-- delay. Derived from the entry like the other filter columns; ISO text in one fixed form (UTC,
-- milliseconds, as the schema requires), so it sorts in time order. Ties are broken by seq.
ALTER TABLE "audit_entries"
  ADD COLUMN "decided_at" text GENERATED ALWAYS AS ((entry_json::jsonb ->> 'decided_at')) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "audit_entries_decided_idx" ON "audit_entries" USING btree ("decided_at","seq");
