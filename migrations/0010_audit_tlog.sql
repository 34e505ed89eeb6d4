-- The audit log as a transparency log (issue 15): the RFC 6962 Merkle tree over the chain's entries,
-- stored as tlog-tiles (each row one tile: the hashes of one tree level, 32 bytes each, up to 256),
-- and one state row the appender keeps in step with the chain (size and root, in the transaction
-- that appends) and the checkpointer signs from (the newest signed C2SP checkpoint).
CREATE TABLE "audit_tlog_tiles" (
	"level" smallint NOT NULL,
	"index" bigint NOT NULL,
	"hashes" bytea NOT NULL,
	CONSTRAINT "audit_tlog_tiles_level_index_pk" PRIMARY KEY("level","index")
);--> statement-breakpoint
CREATE TABLE "audit_tlog_state" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"tree_size" bigint NOT NULL,
	"root_hash" bytea NOT NULL,
	"signed_size" bigint DEFAULT 0 NOT NULL,
	"signed_root" bytea,
	"signed_note" text,
	"signed_at" timestamp (3) with time zone,
	CONSTRAINT "audit_tlog_state_single_row" CHECK ("id")
);--> statement-breakpoint
-- The empty tree: its root is SHA-256 of no bytes (RFC 6962 2.1). Entries already chained are
-- added to the tree by the appender before it appends new ones.
INSERT INTO "audit_tlog_state" ("tree_size", "root_hash") VALUES (0, decode('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'hex'));
