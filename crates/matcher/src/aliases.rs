//! The built-in aliases: common words for assets that the catalog's own
//! text does not contain.
//!
//! Everything else the matcher knows comes from the catalog (tickers,
//! names, websites, product lists, industries). This table covers three
//! gaps only:
//!
//! - bare currency, index, commodity and coin nicknames, mapped to the
//!   conventional instrument ("yen" → USD/JPY, "oil" → WTI crude,
//!   "ripple" → XRP) — the catalog names every yen pair alike;
//! - famous consumer brands that the catalog's summaries do not list
//!   ("windows", "playstation", "youtube") — the product lists come from
//!   encyclopaedia infoboxes and often say only "Software" or "List of
//!   products";
//! - nothing else: no company names, no tickers.
//!
//! An alias is one or two words; it becomes an extra token of the target
//! entries (two words joined, "big mac" → `bigmac`, so "mac" alone stays
//! Apple's). Targets missing from the loaded catalog are skipped, so the
//! table never invents an asset. An alias match ranks like a strong name
//! match (tier [`crate::index::ALIAS_TIER`]).

/// Alias phrase → tickers it designates.
pub const ALIASES: &[(&str, &[&str])] = &[
    // Currencies: a bare currency word means its usual quote against the
    // US dollar.
    ("euro", &["EURUSD=X"]),
    ("yen", &["JPY=X"]),
    ("pound", &["GBPUSD=X"]),
    ("sterling", &["GBPUSD=X"]),
    ("franc", &["CHF=X"]),
    ("loonie", &["CAD=X"]),
    ("aussie", &["AUDUSD=X"]),
    ("kiwi", &["NZDUSD=X"]),
    ("rupee", &["INR=X"]),
    ("yuan", &["CNY=X"]),
    ("renminbi", &["CNY=X"]),
    ("won", &["KRW=X"]),
    ("peso", &["MXN=X"]),
    ("rand", &["ZAR=X"]),
    ("krona", &["SEK=X"]),
    ("krone", &["NOK=X"]),
    // Index nicknames.
    ("s&p", &["^GSPC"]),
    ("spx", &["^GSPC"]),
    ("footsie", &["^FTSE"]),
    ("bovespa", &["^BVSP"]),
    ("hang seng", &["^HSI"]),
    // Index trackers whose names do not say what they track.
    ("nasdaq 100", &["QQQ", "QQQM"]),
    ("nasdaq100", &["QQQ", "QQQM"]),
    // Commodity nicknames.
    ("oil", &["CL=F"]),
    ("crude", &["CL=F"]),
    ("bullion", &["GC=F"]),
    ("natgas", &["NG=F"]),
    // Coin nicknames.
    ("ripple", &["XRP-USD"]),
    ("ether", &["ETH-USD"]),
    ("xbt", &["BTC-USD"]),
    // Famous brands absent from the catalog's summaries.
    ("google", &["GOOGL", "GOOG"]),
    ("youtube", &["GOOGL", "GOOG"]),
    ("android", &["GOOGL", "GOOG"]),
    ("gmail", &["GOOGL", "GOOG"]),
    ("waymo", &["GOOGL", "GOOG"]),
    ("windows", &["MSFT"]),
    ("xbox", &["MSFT"]),
    ("azure", &["MSFT"]),
    ("linkedin", &["MSFT"]),
    ("bing", &["MSFT"]),
    ("github", &["MSFT"]),
    ("aws", &["AMZN"]),
    ("amex", &["AXP"]),
    ("alexa", &["AMZN"]),
    ("whole foods", &["AMZN"]),
    ("playstation", &["6758.T"]),
    ("walkman", &["6758.T"]),
    ("mario", &["7974.T"]),
    ("pokemon", &["7974.T"]),
    ("zelda", &["7974.T"]),
    ("big mac", &["MCD"]),
    ("happy meal", &["MCD"]),
    ("pepsi", &["PEP"]),
    ("doritos", &["PEP"]),
    ("gatorade", &["PEP"]),
    ("coke", &["KO"]),
    ("sprite", &["KO"]),
    ("fanta", &["KO"]),
    ("gillette", &["PG"]),
    ("pampers", &["PG"]),
    ("marlboro", &["PM", "MO"]),
    ("oreo", &["MDLZ"]),
    ("cadbury", &["MDLZ"]),
    ("geforce", &["NVDA"]),
    ("cuda", &["NVDA"]),
    ("ryzen", &["AMD"]),
    ("radeon", &["AMD"]),
    ("viagra", &["PFE"]),
    ("lipitor", &["PFE"]),
    ("mounjaro", &["LLY"]),
    ("zepbound", &["LLY"]),
    ("keytruda", &["MRK"]),
    ("botox", &["ABBV"]),
    ("chevrolet", &["GM"]),
    ("cadillac", &["GM"]),
    ("marvel", &["DIS"]),
    ("pixar", &["DIS"]),
    ("espn", &["DIS"]),
    ("hbo", &["WBD"]),
    ("cnn", &["WBD"]),
    ("lexus", &["7203.T"]),
    ("prius", &["7203.T"]),
    ("uniqlo", &["9983.T"]),
];
