//! [`crate::EmbeddingStore`]: every statement is shared (`crate::embeddings`).

use super::PgStore;

crate::embeddings::impl_embedding_store!(PgStore);
