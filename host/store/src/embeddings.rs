//! The matcher's catalog embeddings (issue 15): one vector per (model,
//! asset) with the hash of the text it was computed from, shared by every
//! replica and kept across restarts.

use async_trait::async_trait;

use crate::StoreResult;

/// One stored vector.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEmbedding {
    /// The asset.
    pub asset_id: i64,
    /// Hash of the text the vector was computed from: a different hash
    /// means the entry changed and needs a new vector.
    pub content_hash: String,
    /// The vector, as the embedding crate encodes it (little-endian f32s).
    pub vector: Vec<u8>,
}

/// Stored catalog embeddings, per model.
#[async_trait]
pub trait EmbeddingStore: Send + Sync {
    /// Every vector stored for `model`.
    async fn embeddings(&self, model: &str) -> StoreResult<Vec<StoredEmbedding>>;

    /// Stores `rows` for `model` in one transaction, replacing an asset's
    /// earlier vector.
    async fn put_embeddings(&self, model: &str, rows: &[StoredEmbedding]) -> StoreResult<()>;
}

pub(crate) const EMBEDDINGS: &str = "SELECT asset_id, content_hash, vector FROM asset_embeddings
     WHERE model = $1 ORDER BY asset_id";

pub(crate) const PUT_EMBEDDING: &str =
    "INSERT INTO asset_embeddings (model, asset_id, content_hash, vector, created_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (model, asset_id) DO UPDATE SET content_hash = excluded.content_hash,
       vector = excluded.vector, created_at = excluded.created_at";

/// [`EmbeddingStore`] for a backend's store type (`$store`, with a `pool`
/// field): both dialects share every statement.
macro_rules! impl_embedding_store {
    ($store:ty) => {
        #[async_trait::async_trait]
        impl $crate::EmbeddingStore for $store {
            async fn embeddings(
                &self,
                model: &str,
            ) -> $crate::StoreResult<Vec<$crate::StoredEmbedding>> {
                use $crate::rows::Cols;
                let rows = sqlx::query($crate::embeddings::EMBEDDINGS)
                    .bind(model)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter()
                    .map(|r| {
                        Ok($crate::StoredEmbedding {
                            asset_id: r.int("asset_id")?,
                            content_hash: r.text("content_hash")?,
                            vector: r.bytes("vector")?,
                        })
                    })
                    .collect()
            }

            async fn put_embeddings(
                &self,
                model: &str,
                rows: &[$crate::StoredEmbedding],
            ) -> $crate::StoreResult<()> {
                let now = forecast_domain::Clock::timestamp(self.clock.as_ref());
                let mut tx = self.pool.begin().await?;
                for r in rows {
                    sqlx::query($crate::embeddings::PUT_EMBEDDING)
                        .bind(model)
                        .bind(r.asset_id)
                        .bind(&r.content_hash)
                        .bind(&r.vector)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(())
            }
        }
    };
}
pub(crate) use impl_embedding_store;
