//! Catalog embeddings (issue 15).

use super::*;
use crate::StoredEmbedding;

fn row(asset_id: i64, hash: &str, byte: u8) -> StoredEmbedding {
    StoredEmbedding {
        asset_id,
        content_hash: hash.into(),
        vector: vec![byte; 16],
    }
}

/// Vectors are kept per model, replaced per asset, written atomically and
/// bound to existing assets.
pub(crate) async fn embeddings_conformance(db: Arc<dyn Database>) {
    catalog(
        &*db,
        &[
            entry(1, "AAA", Category::UsStocks, true),
            entry(2, "BBB", Category::Crypto, true),
        ],
    )
    .await;
    assert!(db.embeddings("m1").await.unwrap().is_empty());
    db.put_embeddings("m1", &[row(2, "h2", 2), row(1, "h1", 1)])
        .await
        .unwrap();
    db.put_embeddings("m2", &[row(1, "other", 9)])
        .await
        .unwrap();
    assert_eq!(
        db.embeddings("m1").await.unwrap(),
        [row(1, "h1", 1), row(2, "h2", 2)],
        "ordered by asset, other models apart"
    );
    // A changed entry replaces its vector; the rest stay.
    db.put_embeddings("m1", &[row(1, "h1b", 7)]).await.unwrap();
    assert_eq!(
        db.embeddings("m1").await.unwrap(),
        [row(1, "h1b", 7), row(2, "h2", 2)]
    );
    assert_eq!(db.embeddings("m2").await.unwrap(), [row(1, "other", 9)]);
    // An unknown asset fails the whole batch: nothing of it is written.
    assert!(db
        .put_embeddings("m1", &[row(2, "h2c", 3), row(99, "x", 0)])
        .await
        .is_err());
    assert_eq!(
        db.embeddings("m1").await.unwrap(),
        [row(1, "h1b", 7), row(2, "h2", 2)]
    );
    // An empty batch is fine.
    db.put_embeddings("m1", &[]).await.unwrap();
}
