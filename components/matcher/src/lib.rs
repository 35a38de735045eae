//! The default ticker matcher component: `forecast-matcher` (in `crates/`)
//! behind the `matcher` WIT world. The algorithm and its tests live there;
//! this crate is only the WIT glue, which exists on `wasm32` alone.

pub use forecast_matcher::*;

#[cfg(target_arch = "wasm32")]
mod component {
    #[cfg(not(feature = "matching-only"))]
    wit_bindgen::generate!({
        path: "../../wit",
        world: "matcher",
    });

    // The test fixture: `matching` alone, as a matcher built before WIT
    // 1.8.0.
    #[cfg(feature = "matching-only")]
    wit_bindgen::generate!({
        inline: "
            package fixture:matcher;
            world matching-only {
                import forecast:plugins/host-log@1.11.0;
                import forecast:plugins/llm@1.11.0;
                import forecast:plugins/semantic@1.11.0;
                export forecast:plugins/matching@1.11.0;
            }
        ",
        path: "../../wit",
        world: "fixture:matcher/matching-only",
        generate_all,
    });

    use std::cell::RefCell;

    #[cfg(not(feature = "matching-only"))]
    use exports::forecast::plugins::catalog_priors::{Guest as PriorsGuest, Prior};
    use exports::forecast::plugins::matching::{Candidate, CatalogEntry, Guest};
    #[cfg(not(feature = "matching-only"))]
    use exports::forecast::plugins::mentions::{Guest as MentionsGuest, Mention};
    use forecast::plugins::{llm, semantic};

    thread_local! {
        /// The instance's index; `None` until `load-catalog`.
        static INDEX: RefCell<Option<super::Index>> = const { RefCell::new(None) };
    }

    struct Component;

    /// The host's semantic search as the algorithm asks it.
    fn near(texts: &[String], k: u32) -> Vec<Vec<(u32, f32)>> {
        semantic::nearest(texts, k)
            .into_iter()
            .map(|list| list.into_iter().map(|n| (n.entry, n.similarity)).collect())
            .collect()
    }

    #[cfg(not(feature = "matching-only"))]
    impl PriorsGuest for Component {
        fn load_priors(priors: Vec<Prior>) {
            let priors: Vec<super::Prior> = priors
                .into_iter()
                .map(|p| super::Prior {
                    entry: p.entry,
                    prominence: p.prominence,
                    identifiers: p.identifiers,
                })
                .collect();
            INDEX.with(|slot| {
                if let Some(index) = slot.borrow_mut().as_mut() {
                    index.set_priors(&priors);
                }
            });
        }
    }

    #[cfg(not(feature = "matching-only"))]
    impl MentionsGuest for Component {
        fn find_mentions(text: String, limit: u32) -> Vec<Mention> {
            INDEX.with(|slot| {
                let slot = slot.borrow();
                let Some(index) = slot.as_ref() else {
                    return Vec::new();
                };
                super::find_mentions_with_model(index, &text, limit, llm::complete, near)
                    .into_iter()
                    .map(|m| Mention {
                        text: m.text,
                        candidates: m
                            .candidates
                            .into_iter()
                            .map(|(entry, confidence)| Candidate { entry, confidence })
                            .collect(),
                    })
                    .collect()
            })
        }
    }

    impl Guest for Component {
        fn matcher_version() -> String {
            if cfg!(feature = "matching-only") {
                format!("{}-matching-only", env!("CARGO_PKG_VERSION"))
            } else {
                env!("CARGO_PKG_VERSION").to_string()
            }
        }

        fn load_catalog(entries: Vec<CatalogEntry>) {
            let entries = entries
                .into_iter()
                .map(|e| super::Entry {
                    ticker: e.ticker,
                    name: e.name,
                    category: e.category,
                    exchange: e.exchange,
                    country: e.country,
                    sector: e.sector,
                    industry: e.industry,
                    website: e.website,
                    summary: e.summary,
                })
                .collect();
            let index = super::Index::new(entries);
            INDEX.with(|slot| *slot.borrow_mut() = Some(index));
        }

        fn find(text: String, limit: u32) -> Vec<Candidate> {
            INDEX.with(|slot| {
                let slot = slot.borrow();
                let Some(index) = slot.as_ref() else {
                    return Vec::new();
                };
                super::find_with_model(index, &text, limit, llm::complete, near)
                    .into_iter()
                    .map(|(entry, confidence)| Candidate { entry, confidence })
                    .collect()
            })
        }
    }

    export!(Component);
}
