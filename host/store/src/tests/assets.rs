//! Assets and prices, cached analyses, settings and counts.

use super::*;

/// Catalog, series (atomic batches, cache and grade invalidation),
/// metadata, analyses, settings and counts.
pub(crate) async fn assets_conformance(db: Arc<dyn Database>) {
    db.ping().await.unwrap();
    catalog(
        &*db,
        &[
            entry(1, "AAA", Category::UsStocks, true),
            entry(2, "BBB", Category::Crypto, true),
            entry(3, "CCC", Category::UsStocks, false),
        ],
    )
    .await;
    // Idempotent: loading twice changes nothing.
    catalog(&*db, &[entry(1, "AAA", Category::UsStocks, true)]).await;
    let all = db.list_active_assets(None).await.unwrap();
    assert_eq!(
        all.iter().map(|a| a.ticker.as_str()).collect::<Vec<_>>(),
        ["AAA", "BBB"]
    );
    let crypto = db.list_active_assets(Some(Category::Crypto)).await.unwrap();
    assert_eq!(crypto.len(), 1);
    let inactive = db.asset_by_ticker("CCC").await.unwrap().unwrap();
    assert!(!inactive.is_active);
    assert!(db.asset_by_ticker("ZZZ").await.unwrap().is_none());

    let series = PriceSeries {
        dates: vec![10, 11, 12],
        closes: vec![1.0, 2.0, 3.0],
    };
    db.put_analysis("k1", 1, "{\"cached\":true}").await.unwrap();
    assert!(db.cached_analysis("k1").await.unwrap().is_some());
    db.store_series(&[(1, &series, DataSource::Ingested)])
        .await
        .unwrap();
    let a = db.asset_by_ticker("AAA").await.unwrap().unwrap();
    assert_eq!(a.data_source, DataSource::Ingested);
    assert_eq!(a.data_version, 1);
    assert_eq!(
        a.last_price_date,
        chrono::NaiveDate::from_ymd_opt(1970, 1, 13),
        "the last stored date comes with the asset"
    );
    assert_eq!(db.load_series(1).await.unwrap(), Some(series.clone()));
    assert!(
        db.cached_analysis("k1").await.unwrap().is_none(),
        "new prices invalidate the asset's cache"
    );

    // One unknown asset in a batch: nothing of the batch is written.
    let other = PriceSeries {
        dates: vec![1],
        closes: vec![9.0],
    };
    let err = db
        .store_series(&[
            (2, &other, DataSource::Ingested),
            (99, &other, DataSource::Ingested),
        ])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::UnknownAsset(99)));
    assert!(db.load_series(2).await.unwrap().is_none());
    let b = db.asset_by_ticker("BBB").await.unwrap().unwrap();
    assert_eq!(b.last_price_date, None, "no prices, no last date");
    assert_eq!(
        db.asset_by_ticker("BBB")
            .await
            .unwrap()
            .unwrap()
            .data_version,
        0
    );

    db.put_metadata(1, "{}", 100).await.unwrap();
    db.put_metadata(1, "{\"a\":1}", 200).await.unwrap();
    let m = db.cached_metadata(1).await.unwrap().unwrap();
    assert_eq!((m.body.as_str(), m.fetched_at), ("{\"a\":1}", 200));

    db.set_setting("x", "1").await.unwrap();
    db.set_setting("x", "2").await.unwrap();
    assert_eq!(db.setting("x").await.unwrap().as_deref(), Some("2"));

    let c = db.counts().await.unwrap();
    assert_eq!(
        (
            c.assets,
            c.active_assets,
            c.assets_with_prices,
            c.price_rows
        ),
        (3, 2, 1, 3)
    );
}
