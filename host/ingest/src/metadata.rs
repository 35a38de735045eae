//! Asset metadata from the catalog shipped with the project: name,
//! exchange, currency, sector, industry, website and summary columns, with
//! a logo address derived from the website. It implements
//! [`MetadataProvider`]; the services cache what it answers for 7 days.

use async_trait::async_trait;

use forecast_domain::metadata::{AssetMetadata, MetadataProvider, ProviderError};
use forecast_domain::Asset;

/// Answers from the catalog shipped with the project.
pub struct CatalogProvider;

#[async_trait]
impl MetadataProvider for CatalogProvider {
    fn name(&self) -> &'static str {
        "catalog"
    }

    async fn fetch(&self, asset: &Asset) -> Result<AssetMetadata, ProviderError> {
        let domain = asset
            .website
            .trim()
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .trim_end_matches('/');
        Ok(AssetMetadata {
            long_name: asset.name.clone(),
            sector: asset.sector.clone(),
            industry: asset.industry.clone(),
            summary: asset.summary.clone(),
            logo_url: if domain.is_empty() {
                String::new()
            } else {
                format!("https://{domain}/favicon.ico")
            },
            market_cap: 0,
            exchange: asset.exchange.clone(),
            currency: asset.currency.clone(),
            website: asset.website.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forecast_domain::Category;
    use forecast_store::CatalogEntry;

    fn entry(id: i64, ticker: &str, category: Category, active: bool) -> CatalogEntry {
        CatalogEntry::minimal(id, ticker, category, active)
    }

    #[tokio::test]
    async fn catalog_provider_derives_the_logo_from_the_website() {
        let mut e = entry(1, "AAA", Category::UsStocks, true);
        e.website = "https://www.example.com/".into();
        let asset = Asset {
            id: 1,
            ticker: e.ticker,
            name: e.name,
            category: e.category,
            exchange: e.exchange,
            currency: e.currency,
            country: e.country,
            sector: e.sector,
            industry: e.industry,
            website: e.website,
            summary: e.summary,
            isin: e.isin,
            is_active: true,
            is_premium: false,
            data_source: forecast_domain::DataSource::Synthetic,
            data_version: 0,
            last_price_date: None,
        };
        let m = CatalogProvider.fetch(&asset).await.unwrap();
        assert_eq!(m.logo_url, "https://www.example.com/favicon.ico");
    }
}
