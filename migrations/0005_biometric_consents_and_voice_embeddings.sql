CREATE TABLE "biometric_consents" (
	"id" uuid PRIMARY KEY NOT NULL,
	"owner_id" uuid NOT NULL,
	"type" text NOT NULL,
	"statement_version" text NOT NULL,
	"granted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"voice_id" uuid,
	CONSTRAINT "biometric_consents_voice_id_unique" UNIQUE("voice_id")
);
--> statement-breakpoint
CREATE TABLE "voice_embeddings" (
	"voice_id" uuid PRIMARY KEY NOT NULL,
	"owner_id" uuid NOT NULL,
	"model" text NOT NULL,
	"embedding" vector NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "biometric_consents" ADD CONSTRAINT "biometric_consents_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "biometric_consents" ADD CONSTRAINT "biometric_consents_voice_id_voices_id_fk" FOREIGN KEY ("voice_id") REFERENCES "public"."voices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "voice_embeddings" ADD CONSTRAINT "voice_embeddings_voice_id_voices_id_fk" FOREIGN KEY ("voice_id") REFERENCES "public"."voices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "voice_embeddings" ADD CONSTRAINT "voice_embeddings_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "biometric_consents_owner_idx" ON "biometric_consents" USING btree ("owner_id");--> statement-breakpoint
CREATE INDEX "voice_embeddings_vip_speaker_v1_hnsw" ON "voice_embeddings" USING hnsw (("embedding"::vector(192)) vector_cosine_ops) WHERE "voice_embeddings"."model" = 'vip-speaker-v1';--> statement-breakpoint
CREATE INDEX "voice_embeddings_campplus_voxceleb_hnsw" ON "voice_embeddings" USING hnsw (("embedding"::vector(512)) vector_cosine_ops) WHERE "voice_embeddings"."model" = 'campplus-voxceleb';