//! Unit tests over a small hand-made catalog (the evaluation over the real
//! catalog is `tests/eval.rs`).

use crate::rerank::{parse_reply, prompt, Verdict};
use crate::text::{compact, fold, osa_distance, significant_tokens, stem, tokens};
use crate::{find_with_model, Entry, Index, MIN_CONFIDENCE};

fn entry(ticker: &str, name: &str, category: &str) -> Entry {
    Entry {
        ticker: ticker.into(),
        name: name.into(),
        category: category.into(),
        ..Entry::default()
    }
}

/// A catalog with one or two of each kind of asset.
fn catalog() -> Vec<Entry> {
    let mut v = vec![
        Entry {
            website: "apple.com".into(),
            summary: "Apple Inc. (Cupertino, California , US). Products: AirPods iPad iPhone Mac".into(),
            industry: "Computers, Phones & Household Electronics".into(),
            ..entry("AAPL", "Apple Inc.", "US Stocks")
        },
        Entry {
            website: "microsoft.com".into(),
            summary: "Microsoft (Redmond, Washington , U.S.). Products: Software Cloud computing Video games".into(),
            ..entry("MSFT", "Microsoft", "US Stocks")
        },
        Entry {
            website: "tesla.com".into(),
            summary: "Tesla, Inc. (Austin, Texas , US). Products: Cybertruck Megapack Model 3 Model S Model X Model Y Powerwall".into(),
            ..entry("TSLA", "Tesla, Inc.", "US Stocks")
        },
        entry("APLE", "Apple Hospitality REIT, Inc.", "US Stocks"),
        entry("BAC", "Bank of America", "US Stocks"),
        entry("BA", "Boeing", "US Stocks"),
        entry("BA.L", "BAE Systems", "UK Stocks"),
        entry("BRK-B", "Berkshire Hathaway", "US Stocks"),
        entry("KO", "The Coca-Cola Company", "US Stocks"),
        entry("XOM", "ExxonMobil", "US Stocks"),
        entry("7203.T", "Toyota", "Japanese Stocks"),
        entry("SHOP.TO", "Shopify Inc.", "Canadian Stocks"),
        entry("BTC-USD", "Bitcoin", "Crypto"),
        entry("BCH-USD", "Bitcoin Cash", "Crypto"),
        entry("ETH-USD", "Ethereum", "Crypto"),
        entry("EURUSD=X", "EUR/USD - Euro US Dollar", "Forex"),
        entry("EURJPY=X", "EUR/JPY - Euro Japanese Yen", "Forex"),
        entry("JPY=X", "USD/JPY - US Dollar Japanese Yen", "Forex"),
        entry("^N225", "Nikkei 225", "Indices"),
        entry("^GSPC", "S&P 500", "Indices"),
        entry("^GDAXI", "DAX", "Indices"),
        entry("CS2-OPERATION-BRAVO", "Operation Bravo Case", "CS2 Cases"),
        entry("CS2-CHROMA", "Chroma Case", "CS2 Cases"),
        entry("CS2-CHROMA-2", "Chroma 2 Case", "CS2 Cases"),
        entry("CS2-GAMMA", "Gamma Case", "CS2 Cases"),
        entry("CS2-GLOVE", "Glove Case", "CS2 Cases"),
    ];
    for (t, n) in [
        ("GC=F", "Gold Futures"),
        ("SI=F", "Silver Futures"),
        ("CL=F", "Crude Oil WTI Futures"),
        ("BZ=F", "Brent Crude Oil Futures"),
        ("KC=F", "Coffee Futures"),
    ] {
        v.push(entry(t, n, "Commodities"));
    }
    v
}

fn index() -> Index {
    Index::new(catalog())
}

/// The tickers `find` returns for `q`.
fn tickers(ix: &Index, q: &str) -> Vec<String> {
    ix.find(q, 3)
        .iter()
        .map(|&(i, _)| ix.entries()[i as usize].ticker.clone())
        .collect()
}

/// The first ticker and its confidence.
fn first(ix: &Index, q: &str) -> (String, f64) {
    let r = ix.find(q, 3);
    let (i, c) = *r.first().unwrap_or_else(|| panic!("nothing for {q:?}"));
    (ix.entries()[i as usize].ticker.clone(), c)
}

#[test]
fn normalisation() {
    assert_eq!(fold("Deutsche Börse Ærø"), "deutsche borse aero");
    assert_eq!(compact("BRK-B"), "brkb");
    assert_eq!(compact("EUR/USD"), "eurusd");
    assert_eq!(tokens("S&P 500"), ["sp", "500"]);
    assert_eq!(tokens("AT&T Inc."), ["att", "inc"]);
    assert_eq!(tokens("McDonald's"), ["mcdonald"]);
    assert_eq!(tokens("U.S. Steel"), ["us", "steel"]);
    assert_eq!(tokens("Grupo S.A.B. de C.V."), ["grupo", "sab", "de", "cv"]);
    assert_eq!(tokens("Johnson & Johnson"), ["johnson", "johnson"]);
    assert_eq!(tokens("yearn.finance"), ["yearn", "finance"]);
    assert_eq!(stem("futures"), "future");
    assert_eq!(stem("swiss"), "swiss");
    assert_eq!(stem("status"), "status");
    assert_eq!(stem("gas"), "gas");
    assert_eq!(
        significant_tokens("The Coca-Cola Company"),
        ["coca", "cola"]
    );
    assert_eq!(significant_tokens("the iPhone maker"), ["iphone"]);
    // Only stop words: they are kept.
    assert_eq!(significant_tokens("Maker"), ["maker"]);
    assert_eq!(significant_tokens("Model 3"), ["model", "3"]);
}

#[test]
fn edit_distance() {
    let d = |a: &str, b: &str| {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        osa_distance(&a, &b, 3)
    };
    assert_eq!(d("microsfot", "microsoft"), Some(1));
    assert_eq!(d("amazn", "amazon"), Some(1));
    assert_eq!(d("nvidea", "nvidia"), Some(1));
    assert_eq!(d("ferarri", "ferrari"), Some(1));
    assert_eq!(d("kitten", "sitting"), Some(3));
    assert_eq!(d("abcdefgh", "zyxwvuts"), None);
}

#[test]
fn exact_tickers() {
    let ix = index();
    assert_eq!(first(&ix, "AAPL"), ("AAPL".into(), 0.99));
    assert_eq!(first(&ix, "aapl").0, "AAPL");
    assert_eq!(first(&ix, "  msft ").0, "MSFT");
    assert_eq!(first(&ix, "7203.T").0, "7203.T");
    assert_eq!(first(&ix, "^n225").0, "^N225");
    assert_eq!(first(&ix, "brk.b").0, "BRK-B");
    assert_eq!(first(&ix, "EURUSD=X").0, "EURUSD=X");
    // An exact ticker beats the same letters as a suffix-less ticker.
    let r = ix.find("ba", 3);
    assert_eq!(ix.entries()[r[0].0 as usize].ticker, "BA");
    assert_eq!(ix.entries()[r[1].0 as usize].ticker, "BA.L");
    assert!(r[0].1 - r[1].1 >= 0.05);
}

#[test]
fn suffixless_tickers() {
    let ix = index();
    for (q, t) in [
        ("7203", "7203.T"),
        ("shop", "SHOP.TO"),
        ("btc", "BTC-USD"),
        ("eurusd", "EURUSD=X"),
        ("eur/usd", "EURUSD=X"),
        ("usdjpy", "JPY=X"),
        ("n225", "^N225"),
        ("gdaxi", "^GDAXI"),
        ("brk", "BRK-B"),
        ("gc", "GC=F"),
    ] {
        let (got, c) = first(&ix, q);
        assert_eq!(got, t, "{q}");
        assert!((0.9..=0.97).contains(&c), "{q}: {c}");
    }
}

#[test]
fn names_brands_and_categories() {
    let ix = index();
    for (q, t) in [
        ("apple", "AAPL"),
        ("Apple Inc.", "AAPL"),
        ("coca cola", "KO"),
        ("cocacola", "KO"),
        ("the coca-cola company", "KO"),
        ("exxon", "XOM"),
        ("exxon mobil", "XOM"),
        ("berkshire", "BRK-B"),
        ("bank of america", "BAC"),
        ("toyota", "7203.T"),
        ("the iPhone maker", "AAPL"),
        ("iphone", "AAPL"),
        ("cybertruck", "TSLA"),
        ("model 3", "TSLA"),
        ("apple.com", "AAPL"),
        ("apple stock", "AAPL"),
        ("bitcoin", "BTC-USD"),
        ("ethereum", "ETH-USD"),
        ("ether", "ETH-USD"),
        ("euro dollar", "EURUSD=X"),
        ("yen", "JPY=X"),
        ("gold", "GC=F"),
        ("crude oil", "CL=F"),
        ("oil", "CL=F"),
        ("nikkei", "^N225"),
        ("s&p 500", "^GSPC"),
        ("s&p", "^GSPC"),
        ("dax", "^GDAXI"),
        ("operation bravo case", "CS2-OPERATION-BRAVO"),
        ("chroma case", "CS2-CHROMA"),
        ("chroma 2", "CS2-CHROMA-2"),
        ("windows", "MSFT"),
    ] {
        assert_eq!(first(&ix, q).0, t, "{q}: {:?}", tickers(&ix, q));
    }
}

#[test]
fn misspellings() {
    let ix = index();
    for (q, t) in [
        ("microsfot", "MSFT"),
        ("teslaa", "TSLA"),
        ("berkshire hathway", "BRK-B"),
        ("exon mobil", "XOM"),
        ("bitcon", "BTC-USD"),
        ("etherium", "ETH-USD"),
        ("toyta", "7203.T"),
        ("cybertruk", "TSLA"),
    ] {
        let (got, c) = first(&ix, q);
        assert_eq!(got, t, "{q}");
        assert!((0.4..=0.75).contains(&c), "{q}: {c}");
    }
}

#[test]
fn confidence_ordering() {
    let ix = index();
    let exact_ticker = first(&ix, "TSLA").1;
    let suffixless = first(&ix, "7203").1;
    let exact_name = first(&ix, "tesla").1;
    let name_words = first(&ix, "berkshire").1;
    let product = first(&ix, "cybertruck").1;
    let fuzzy = first(&ix, "teslaa").1;
    assert!(exact_ticker > exact_name, "{exact_ticker} {exact_name}");
    assert!(exact_ticker > suffixless);
    assert!(exact_name > name_words, "{exact_name} {name_words}");
    assert!(name_words > fuzzy, "{name_words} {fuzzy}");
    assert!(product > fuzzy, "{product} {fuzzy}");
    assert!(exact_ticker >= 0.95 && fuzzy <= 0.75);
    // A weaker misspelling scores lower than a close one.
    assert!(first(&ix, "microsfot").1 > first(&ix, "mcrosfot").1);
}

#[test]
fn results_are_sorted_bounded_and_limited() {
    let ix = index();
    for q in [
        "case", "bitcoin", "euro", "futures", "apple", "a", "", "chroma",
    ] {
        for limit in [0, 1, 2, 3, 10] {
            let r = ix.find(q, limit);
            assert!(r.len() <= limit, "{q} {limit}");
            for w in r.windows(2) {
                assert!(
                    w[0].1 > w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0),
                    "{q}: {r:?}"
                );
            }
            for &(i, c) in &r {
                assert!((i as usize) < ix.entries().len());
                assert!((MIN_CONFIDENCE..=1.0).contains(&c), "{q}: {c}");
            }
        }
    }
    assert_eq!(ix.find("case", 3).len(), 3);
    assert_eq!(ix.find("apple", 1).len(), 1);
}

#[test]
fn gibberish_finds_nothing() {
    let ix = index();
    for q in [
        "xqzvkj",
        "asdf qwerty zzz",
        "zxcvbnm",
        "",
        "   ",
        "!!!",
        "qqqqqqqq",
    ] {
        assert!(ix.find(q, 3).is_empty(), "{q}: {:?}", tickers(&ix, q));
    }
    // An empty index finds nothing.
    assert!(Index::new(Vec::new()).find("apple", 3).is_empty());
}

#[test]
fn ambiguous_words_are_not_confident() {
    let ix = index();
    // Five futures share the word: whatever comes first is not sure.
    let r = ix.find("futures", 3);
    assert!(!r.is_empty() && r[0].1 < 0.8, "{r:?}");
}

#[test]
fn reply_parsing() {
    assert_eq!(parse_reply("2", 5), Verdict::Chosen(vec![1]));
    assert_eq!(parse_reply("3, 1", 5), Verdict::Chosen(vec![2, 0]));
    assert_eq!(
        parse_reply("The best match is 2 (AAPL), then 1.", 5),
        Verdict::Chosen(vec![1, 0])
    );
    assert_eq!(parse_reply("2, 2, 9, 1", 3), Verdict::Chosen(vec![1, 0]));
    assert_eq!(parse_reply("0", 5), Verdict::NoneMatches);
    assert_eq!(parse_reply("None match: 0", 5), Verdict::NoneMatches);
    assert_eq!(parse_reply("I am not sure.", 5), Verdict::Unusable);
    assert_eq!(parse_reply("7", 5), Verdict::Unusable);
    // Digits inside words are not choices.
    assert_eq!(parse_reply("CS2 3M", 5), Verdict::Unusable);
}

#[test]
fn rerank_with_a_fake_model() {
    let ix = index();
    // "case" is unsure (five entries share it).
    let lexical = ix.find("case", 5);
    assert!(lexical.len() >= 2 && lexical[0].1 < 0.9, "{lexical:?}");
    let ticker = |i: u32| ix.entries()[i as usize].ticker.as_str();

    // The model prefers the second candidate.
    let mut seen = String::new();
    let r = ix.rerank("case", lexical.clone(), |p| {
        seen = p.to_string();
        Some("2".into())
    });
    assert!(seen.contains("\"case\"") && seen.contains("1. CS2-") && seen.contains("5. CS2-"));
    assert_eq!(r[0].0, lexical[1].0);
    assert_eq!(r[0].1, 0.9f64.max(lexical[1].1));
    assert_eq!(r[1].0, lexical[0].0);
    assert!(r[1].1 <= r[0].1);
    assert_eq!(r.len(), lexical.len());
    for w in r.windows(2) {
        assert!(w[0].1 >= w[1].1);
    }
    assert!(ticker(r[0].0).starts_with("CS2-"));

    // Several choices, in the model's order, then the rest.
    let r = ix.rerank("case", lexical.clone(), |_| Some("Answer: 4, 2".into()));
    let order: Vec<u32> = r.iter().map(|c| c.0).collect();
    assert_eq!(
        order,
        [
            lexical[3].0,
            lexical[1].0,
            lexical[0].0,
            lexical[2].0,
            lexical[4].0
        ]
    );

    // "0": none matches.
    assert!(ix
        .rerank("case", lexical.clone(), |_| Some("0".into()))
        .is_empty());
    // Garbage or no model: the lexical answer stands.
    assert_eq!(
        ix.rerank("case", lexical.clone(), |_| Some("maybe?".into())),
        lexical
    );
    assert_eq!(ix.rerank("case", lexical.clone(), |_| None), lexical);

    // A sure answer is not sent to the model.
    let sure = ix.find("AAPL", 5);
    let r = ix.rerank("AAPL", sure.clone(), |_| panic!("asked"));
    assert_eq!(r, sure);
    // Nor a single candidate.
    let one = vec![lexical[0]];
    assert_eq!(ix.rerank("case", one.clone(), |_| panic!("asked")), one);
}

#[test]
fn prompt_is_safe() {
    let ix = index();
    let p = prompt(&ix, "evil\"\nquery", &[(0, 0.5), (1, 0.4)]);
    assert!(p.contains("\"evil  query\""));
    assert!(p.contains("1. AAPL | Apple Inc. | US Stocks"));
    assert!(p.contains("2. MSFT | Microsoft | US Stocks"));
}

#[test]
fn component_find() {
    let ix = index();
    assert!(find_with_model(&ix, "apple", 0, |_| panic!("asked"), no_model).is_empty());
    assert!(find_with_model(&ix, "case", 100, |_| None, no_model).len() <= 10);
    // The model may promote the 4th or 5th lexical candidate into a top 3.
    let lexical = ix.find("case", 5);
    assert_eq!(lexical.len(), 5);
    let r = find_with_model(&ix, "case", 3, |_| Some("5".into()), no_model);
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].0, lexical[4].0);
}

/// The semantic search of a host without the model.
fn no_model(texts: &[String], _k: u32) -> Vec<Vec<(u32, f32)>> {
    vec![Vec::new(); texts.len()]
}

/// A list is read as several assets only when each part names one by
/// itself; otherwise the whole text is one description for the model.
#[test]
fn a_list_is_several_assets_only_when_each_part_names_one() {
    let ix = index();
    let tsla = ix
        .entries()
        .iter()
        .position(|e| e.ticker == "TSLA")
        .unwrap() as u32;
    // A fake model: the whole description means Tesla; its parts mean nothing.
    let mut asked: Vec<Vec<String>> = Vec::new();
    let mut model = |texts: &[String], _k: u32| {
        asked.push(texts.to_vec());
        texts
            .iter()
            .map(|t| {
                if t.contains("electric cars") && t.contains("solar roofs") {
                    vec![(tsla, 0.86f32), (0, 0.55)]
                } else {
                    Vec::new()
                }
            })
            .collect()
    };
    let r = find_with_model(
        &ix,
        "electric cars and solar roofs",
        3,
        |_| None,
        &mut model,
    );
    assert_eq!(r.first().map(|c| c.0), Some(tsla), "{r:?}");
    assert_eq!(asked.len(), 1, "one question for the whole text: {asked:?}");
    assert_eq!(asked[0].len(), 1, "{asked:?}");
    // Every part a name: one answer per mention, the model never asked.
    let r = find_with_model(
        &ix,
        "tesla and bitcoin",
        3,
        |_| None,
        |_: &[String], _| panic!("the model was asked for names"),
    );
    let got: Vec<&str> = r
        .iter()
        .map(|&(i, _)| ix.entries()[i as usize].ticker.as_str())
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.contains(&"TSLA") && got.contains(&"BTC-USD"), "{got:?}");
}

/// Names after `Also known as:` at the end of a summary (what the host adds
/// from its descriptions) are aliases of that entry: confident, any case,
/// joined when several words; without them the name is unknown.
#[test]
fn names_a_summary_says_the_entry_is_also_known_as() {
    let mut entries = catalog();
    entries.push(Entry {
        summary: "Hsinchu, Taiwan. Products: chips Also known as: TSMC.".into(),
        ..entry(
            "TSM",
            "Taiwan Semiconductor Manufacturing (ADR)",
            "US Stocks",
        )
    });
    entries.push(Entry {
        summary: "Also known as: GEICO, BNSF.".into(),
        ..entry("LMT", "Lockheed Martin", "US Stocks")
    });
    let ix = Index::new(entries);
    for q in ["tsmc", "TSMC"] {
        let (t, c) = first(&ix, q);
        assert_eq!(t, "TSM", "{q}");
        assert!(c >= 0.85, "{q}: {c}");
    }
    // In a sentence, through the hybrid the component runs.
    let found = find_with_model(&ix, "I own TSMC and some bitcoin", 3, |_| None, no_model);
    let mut found: Vec<&str> = found
        .iter()
        .map(|&(i, _)| ix.entries()[i as usize].ticker.as_str())
        .collect();
    found.sort_unstable();
    assert_eq!(found, ["BTC-USD", "TSM"]);
    assert_eq!(first(&ix, "geico").0, "LMT");
    assert_eq!(first(&ix, "bnsf").0, "LMT");
    // The products before the marker stay products.
    assert_eq!(first(&ix, "chips").0, "TSM");
    // Without the marker the word names nothing.
    assert!(tickers(&index(), "tsmc").is_empty());
}

/// The catalog of [`catalog`] plus a namesake of a class ("S-Oil"), the
/// ETFs tracking the S&P 500 and a few utilities, for the class, vehicle
/// and prominence rules.
fn class_catalog() -> Vec<Entry> {
    let mut v = catalog();
    v.push(entry("010950.KS", "S-Oil", "Korean Stocks"));
    v.push(entry("SOL-USD", "Solana", "Crypto"));
    v.push(entry("SPY", "SPDR S&P 500", "ETFs"));
    v.push(entry("IVV", "ishares S&P 500", "ETFs"));
    v.push(entry("GLD", "SPDR Gold Shares", "ETFs"));
    v.push(entry("USO", "United States Oil", "ETFs"));
    for (t, n) in [
        ("RWE.DE", "RWE Electric Utility"),
        ("NEE", "NextEra Electric Utility"),
        ("AEE", "Ameren Electric Utility"),
    ] {
        v.push(entry(t, n, "US Stocks"));
    }
    v
}

fn position(ix: &Index, ticker: &str) -> u32 {
    ix.entries()
        .iter()
        .position(|e| e.ticker == ticker)
        .unwrap() as u32
}

fn hybrid_tickers(ix: &Index, q: &str) -> Vec<String> {
    let (found, _) = crate::hybrid::find(ix, q, 3, 10, &mut no_model);
    found
        .iter()
        .map(|&(i, _)| ix.entries()[i as usize].ticker.clone())
        .collect()
}

/// "oil" is crude oil, not a company called S-Oil; "gold" the future and
/// then its ETF; an asked-for vehicle comes first.
#[test]
fn classes_answer_their_instrument_and_vehicles_before_namesakes() {
    let ix = Index::new(class_catalog());
    assert_eq!(tickers(&ix, "oil"), ["CL=F", "BZ=F", "USO"]);
    let soil = ix.find("oil", 10);
    let namesake = soil
        .iter()
        .find(|c| ix.entries()[c.0 as usize].ticker == "010950.KS");
    assert!(namesake.is_none_or(|c| c.1 < 0.9), "{soil:?}");
    assert_eq!(tickers(&ix, "gold")[..2], ["GC=F", "GLD"]);
    // The company is still found by its own name.
    assert_eq!(first(&ix, "s-oil").0, "010950.KS");
    // Vehicles: an ETF asked for comes before the index it tracks.
    let etf = hybrid_tickers(&ix, "S&P 500 ETF");
    assert!(
        etf[..2].contains(&"SPY".to_string()) && etf[..2].contains(&"IVV".to_string()),
        "{etf:?}"
    );
    assert_eq!(hybrid_tickers(&ix, "S&P 500")[0], "^GSPC");
    assert_eq!(hybrid_tickers(&ix, "gold etf")[0], "GLD");
    // In a sentence the ETF is kept, not dropped as filler.
    let (found, several) =
        crate::hybrid::find(&ix, "some tesla and an S&P 500 ETF", 3, 10, &mut no_model);
    assert!(several);
    let got: Vec<&str> = found
        .iter()
        .map(|&(i, _)| ix.entries()[i as usize].ticker.as_str())
        .collect();
    assert!(
        got.contains(&"TSLA") && (got.contains(&"SPY") || got.contains(&"IVV")),
        "{got:?}"
    );
}

/// Space-separated names are a list when every group names a different
/// asset surely; a name of several words stays one asset.
#[test]
fn lists_without_separators_are_read_when_every_part_names_an_asset() {
    let ix = Index::new(class_catalog());
    let m = crate::hybrid::mentions(&ix, "bitcoin ethereum solana");
    assert_eq!(m, ["bitcoin", "ethereum", "solana"]);
    assert_eq!(
        crate::hybrid::mentions(&ix, "AAPL MSFT TSLA"),
        ["AAPL", "MSFT", "TSLA"]
    );
    assert_eq!(
        crate::hybrid::mentions(&ix, "bank of america tesla"),
        ["bank of america", "tesla"]
    );
    // A pasted column.
    assert_eq!(
        crate::hybrid::mentions(&ix, "AAPL\nMSFT\nBTC-USD\n"),
        ["AAPL", "MSFT", "BTC-USD"]
    );
    // One asset of several words, or a part that names nothing: one query.
    assert_eq!(
        crate::hybrid::mentions(&ix, "bank of america"),
        ["bank of america"]
    );
    assert_eq!(crate::hybrid::mentions(&ix, "apple zxcvq"), ["apple zxcvq"]);
    assert_eq!(crate::hybrid::mentions(&ix, "tesla tesla"), ["tesla tesla"]);
    let mentions =
        crate::hybrid::find_mentions(&ix, "bitcoin ethereum solana", 3, 10, &mut no_model);
    let firsts: Vec<&str> = mentions
        .iter()
        .map(|m| ix.entries()[m.candidates[0].0 as usize].ticker.as_str())
        .collect();
    assert_eq!(firsts, ["BTC-USD", "ETH-USD", "SOL-USD"]);
}

/// Priors: an ISIN names its entry; among near-equal candidates the
/// better-known comes first; priors outside the catalog are ignored.
#[test]
fn priors_add_identifiers_and_prefer_the_better_known() {
    let mut ix = Index::new(class_catalog());
    let before = hybrid_tickers(&ix, "electric utility");
    assert_eq!(before.len(), 3, "{before:?}");
    let nee = position(&ix, "NEE");
    let aapl = position(&ix, "AAPL");
    ix.set_priors(&[
        crate::Prior {
            entry: nee,
            prominence: 0.9,
            identifiers: vec![],
        },
        crate::Prior {
            entry: aapl,
            prominence: 1.0,
            identifiers: vec!["US0378331005".into()],
        },
        crate::Prior {
            entry: 10_000,
            prominence: 1.0,
            identifiers: vec!["XX0000000000".into()],
        },
    ]);
    assert_eq!(hybrid_tickers(&ix, "electric utility")[0], "NEE");
    assert_eq!(first(&ix, "US0378331005"), ("AAPL".into(), 0.99));
    assert_eq!(first(&ix, "us0378331005").0, "AAPL");
    assert!(ix.find("XX0000000000", 3).is_empty());
    // An exact ticker is not overtaken by a better-known entry.
    assert_eq!(hybrid_tickers(&ix, "AEE")[0], "AEE");
}

/// Calibration keeps each list sorted and within [0, 1].
#[test]
fn calibrated_lists_stay_sorted() {
    let out = crate::calibrated(vec![(1, 0.99), (2, 0.97), (3, 0.5), (4, 0.49)]);
    assert_eq!(out.iter().map(|c| c.0).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert!(out.windows(2).all(|w| w[0].1 >= w[1].1), "{out:?}");
    assert!(out.iter().all(|c| (0.0..=1.0).contains(&c.1)), "{out:?}");
}
