import { sql } from 'drizzle-orm';
import { customType, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './auth.js';
import { voices } from './voices.js';

/** pgvector's `vector` without a dimension: each model has its own, and one column holds them all. */
export const untypedVector = customType<{ data: string; driverData: string }>({ dataType: () => 'vector' });

/**
 * The models an HNSW index exists for (the manifest's, origin/src/voiceprint/models/manifest.json).
 * An index needs a fixed dimension, so each is a partial expression index over its model's rows;
 * the 1:N search casts to the same `vector(dim)` and names the model as a literal, so the planner
 * can use it. A model added later is searched by a sequential scan until a migration adds its index.
 */
export const INDEXED_EMBEDDING_MODELS = [
  { name: 'vip-speaker-v2', dim: 192, index: 'voice_embeddings_vip_speaker_v2_hnsw' },
  { name: 'vip-speaker-v1', dim: 192, index: 'voice_embeddings_vip_speaker_v1_hnsw' },
  { name: 'campplus-voxceleb', dim: 512, index: 'voice_embeddings_campplus_voxceleb_hnsw' },
] as const;

/**
 * The voiceprint of an enrolled voice (biometric data: never returned, never logged). The owner is
 * kept beside it so that the "enrolled by someone else?" search filters without a join.
 */
export const voiceEmbeddings = pgTable(
  'voice_embeddings',
  {
    voiceId: uuid('voice_id')
      .primaryKey()
      .references(() => voices.id, { onDelete: 'cascade' }),
    ownerId: uuid('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    model: text('model').notNull(),
    embedding: untypedVector('embedding').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().default(sql`now()`),
  },
  (table) =>
    INDEXED_EMBEDDING_MODELS.map((model) =>
      index(model.index)
        .using('hnsw', sql`(${table.embedding}::vector(${sql.raw(String(model.dim))})) vector_cosine_ops`)
        .where(sql`${table.model} = ${sql.raw(`'${model.name}'`)}`),
    ),
);
