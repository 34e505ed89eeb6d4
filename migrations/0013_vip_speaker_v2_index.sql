-- The HNSW index of the second bundled speaker model (issue 12): a partial expression index over
-- its rows, as migration 0005 made for the first two models (origin/src/db/schema/embeddings.ts).
CREATE INDEX "voice_embeddings_vip_speaker_v2_hnsw" ON "voice_embeddings" USING hnsw (("embedding"::vector(192)) vector_cosine_ops) WHERE "voice_embeddings"."model" = 'vip-speaker-v2';
