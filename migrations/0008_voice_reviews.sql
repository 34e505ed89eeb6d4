-- Identity-conflict review band (issue 12): an enrollment between the review and the strict point is
-- stored with voices.status 'pending_review' (a text column, so no change there) and one row here
-- naming the other owner's voice it resembles, until an administrator clears or rejects it.
CREATE TABLE "voice_reviews" (
	"voice_id" uuid PRIMARY KEY NOT NULL,
	"matched_voice_id" uuid,
	"similarity" real NOT NULL,
	"held_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "voice_reviews" ADD CONSTRAINT "voice_reviews_voice_id_voices_id_fk" FOREIGN KEY ("voice_id") REFERENCES "public"."voices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "voice_reviews" ADD CONSTRAINT "voice_reviews_matched_voice_id_voices_id_fk" FOREIGN KEY ("matched_voice_id") REFERENCES "public"."voices"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "voice_reviews_held_idx" ON "voice_reviews" USING btree ("held_at","voice_id");
