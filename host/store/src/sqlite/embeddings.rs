//! [`crate::EmbeddingStore`]: every statement is shared (`crate::embeddings`).

use super::SqliteStore;

crate::embeddings::impl_embedding_store!(SqliteStore);
