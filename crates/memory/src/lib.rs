//! elroy's long-term memories: markdown files, SQLite index, offline recall (FTS5 BM25) fused with embeddings.
