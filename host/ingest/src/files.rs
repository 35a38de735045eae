//! `forecast ingest csv`: loading real daily closes from CSV files (DESIGN §3).
//!
//! # File format
//!
//! A header line naming the columns, then one row per day. `date` and
//! `close` are required; `open`, `high`, `low` and `volume` are optional.
//! Names are matched case-insensitively and in any order; other columns
//! (e.g. Yahoo's `Adj Close`) are ignored, so a provider's download can be
//! ingested unchanged. Dates are `YYYY-MM-DD`; `close` must be a finite
//! number > 0; the optional columns, when present and non-empty, must be
//! finite numbers (they are checked, so a shifted column is caught, but not
//! stored). A date may appear once per file; rows need not be sorted.
//!
//! Every row and the history it makes must also be plausible
//! ([`crate::plausible`]): dates from 1800-01-01 to tomorrow (UTC), closes
//! within 1e-6 ..= 1e9, no close more than 10x or less than 1/10 of the
//! row before it (unless forced with `--allow-jumps`), at most 60,000 rows.
//! A refusal names the line, the date and the rule.
//!
//! # Semantics
//!
//! Every file is handled on its own: its asset is looked up by ticker, the
//! whole file is parsed and validated, its rows are upserted by date into the
//! asset's stored series, and the result is written with one
//! [`Database::store_series`] call, i.e. one transaction per asset. A file
//! with any bad row, or for a ticker that is not in the catalog, is rejected
//! as a whole (nothing of it is written) and the next file is still
//! processed; the outcome of each file is reported in an [`IngestReport`].
//! Only a failure of the store itself stops the run, because a broken
//! database would fail every later file too.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;

use forecast_domain::series::to_days;
use forecast_domain::DataSource;
use forecast_store::{AssetStore, StoreError};

use crate::plausible::Rules;

/// Why a file (or the whole run) failed.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The file or folder could not be read.
    #[error("{file}: {source}")]
    Io {
        /// The path as given.
        file: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A line of the file is invalid; the whole file is rejected.
    #[error("{file} line {line}: {message}")]
    Row {
        /// The file name as given.
        file: String,
        /// 1-based line number; the header is line 1.
        line: usize,
        /// What is wrong with the line.
        message: String,
    },
    /// The file as a whole is unusable (empty, no data rows, bad name).
    #[error("{file}: {message}")]
    File {
        /// The file name as given.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// The ticker is not in the catalog.
    #[error("unknown ticker '{0}': add it to the catalog first")]
    UnknownTicker(String),
    /// The store failed while handling this file. Files before it were
    /// committed; this file was not (its write is one transaction).
    #[error("{file}: store failure for {ticker}: {source}")]
    Store {
        /// The file being ingested.
        file: String,
        /// Its ticker.
        ticker: String,
        /// The store's error.
        #[source]
        source: StoreError,
    },
}

/// What happened to one file of an [`ingest_files`] run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct IngestReport {
    /// The asset's ticker.
    pub ticker: String,
    /// The file as given.
    pub file: String,
    /// Data rows in the file (0 when it was rejected before parsing ended).
    pub rows_in_file: usize,
    /// Rows of the asset's stored series before this file.
    pub rows_before: usize,
    /// Rows of the asset's stored series after this file (equal to
    /// `rows_before` when the file was rejected).
    pub rows_after: usize,
    /// `Ok` when the file was written, else why it was rejected.
    pub outcome: Result<(), String>,
}

impl IngestReport {
    /// True when the file was written.
    pub fn is_ok(&self) -> bool {
        self.outcome.is_ok()
    }
}

/// Parses and validates one CSV file under `rules` (see the module docs
/// for the format). Errors name the file as `path` displays it.
pub fn parse_csv(path: &Path, rules: &Rules) -> Result<Vec<(i32, f64)>, IngestError> {
    Ok(parse_file(path, rules)?
        .into_iter()
        .map(|(d, c, _)| (d, c))
        .collect())
}

fn parse_file(path: &Path, rules: &Rules) -> Result<Vec<(i32, f64, usize)>, IngestError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| IngestError::Io {
        file: name.clone(),
        source,
    })?;
    parse_rows(&name, std::io::BufReader::new(file), rules)
}

/// Parses and validates CSV text from `r` under today's
/// [`Rules`] (jumps not forced); `name` is used in error messages.
///
/// Returns `(days since 1970-01-01, close)` rows sorted by date. The first
/// bad line rejects the whole input with an [`IngestError::Row`] naming
/// `name` and the 1-based line number (the header is line 1).
pub fn parse_csv_reader<R: Read>(name: &str, r: R) -> Result<Vec<(i32, f64)>, IngestError> {
    parse_csv_reader_with(name, r, &Rules::default())
}

/// [`parse_csv_reader`] under `rules`.
pub fn parse_csv_reader_with<R: Read>(
    name: &str,
    r: R,
    rules: &Rules,
) -> Result<Vec<(i32, f64)>, IngestError> {
    Ok(parse_rows(name, r, rules)?
        .into_iter()
        .map(|(d, c, _)| (d, c))
        .collect())
}

/// The rows with their line numbers, sorted by date.
fn parse_rows<R: Read>(
    name: &str,
    r: R,
    rules: &Rules,
) -> Result<Vec<(i32, f64, usize)>, IngestError> {
    // The header is read as an ordinary record so that its line number and
    // every data row's are reported the same way.
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(r);
    let mut records = reader.records();
    let header = match records.next() {
        None => return Err(file_error(name, "file is empty")),
        Some(rec) => rec.map_err(|e| csv_error(name, e))?,
    };
    let columns = Columns::from_header(name, &header)?;

    let mut rows: Vec<(i32, f64, usize)> = Vec::new();
    // date -> line of its first occurrence, for the duplicate message.
    let mut seen: HashMap<i32, usize> = HashMap::new();
    for rec in records {
        let rec = rec.map_err(|e| csv_error(name, e))?;
        let line = rec.position().map_or(0, |p| p.line() as usize);
        let row_error = |message: String| IngestError::Row {
            file: name.to_string(),
            line,
            message,
        };
        if rec.len() != header.len() {
            return Err(row_error(format!(
                "expected {} fields as in the header, found {}",
                header.len(),
                rec.len()
            )));
        }
        let date_text = &rec[columns.date];
        let date = parse_date(date_text).ok_or_else(|| {
            if date_text.is_empty() {
                row_error("date is empty".to_string())
            } else {
                row_error(format!("date '{date_text}' is not a valid YYYY-MM-DD date"))
            }
        })?;
        let close = parse_number("close", &rec[columns.close]).map_err(&row_error)?;
        if close <= 0.0 {
            return Err(row_error(format!(
                "close '{}' must be greater than 0",
                &rec[columns.close]
            )));
        }
        for &(col_name, idx) in &columns.optional {
            let text = &rec[idx];
            if !text.is_empty() {
                parse_number(col_name, text).map_err(&row_error)?;
            }
        }
        let day = to_days(date);
        rules.check_row(day, close).map_err(&row_error)?;
        if let Some(first) = seen.insert(day, line) {
            return Err(row_error(format!(
                "duplicate date {date} (first on line {first})"
            )));
        }
        rules
            .check_length(rows.len() + 1)
            .map_err(|m| row_error(format!("{m}: the file has more data rows")))?;
        rows.push((day, close, line));
    }
    if rows.is_empty() {
        return Err(file_error(name, "no data rows after the header"));
    }
    rows.sort_by_key(|&(d, _, _)| d);
    for pair in rows.windows(2) {
        let ((d0, c0, _), (d1, c1, line)) = (pair[0], pair[1]);
        rules
            .check_jump((d0, c0), (d1, c1))
            .map_err(|message| IngestError::Row {
                file: name.to_string(),
                line,
                message,
            })?;
    }
    Ok(rows)
}

/// Ingests each `(file, ticker)` pair independently, in order.
///
/// Per file: look the asset up by ticker (active or not), parse the whole
/// file, upsert its rows by date into the stored series (a date already
/// stored gets the file's close), check the result under `rules` (length,
/// and jumps where the file's rows meet stored ones), and store it with
/// [`DataSource::Ingested`] in one transaction. A bad file or an unknown
/// ticker rejects that file only (its report carries the message) and the
/// run goes on. The run returns `Err` only when the store fails; files
/// before the failing one stay committed.
///
/// The read-merge-write of one asset is not one transaction, so two
/// ingests of the same asset running at the same time could lose one's
/// rows; the CLI runs one ingest at a time.
pub async fn ingest_files(
    db: &dyn AssetStore,
    files: &[(PathBuf, String)],
    rules: &Rules,
) -> Result<Vec<IngestReport>, IngestError> {
    let mut reports = Vec::with_capacity(files.len());
    for (path, ticker) in files {
        let file = path.display().to_string();
        let store_error = |source: StoreError| IngestError::Store {
            file: file.clone(),
            ticker: ticker.clone(),
            source,
        };
        let mut report = IngestReport {
            ticker: ticker.clone(),
            file: file.clone(),
            rows_in_file: 0,
            rows_before: 0,
            rows_after: 0,
            outcome: Ok(()),
        };
        let Some(asset) = db.asset_by_ticker(ticker).await.map_err(store_error)? else {
            report.outcome = Err(IngestError::UnknownTicker(ticker.clone()).to_string());
            tracing::warn!(file = %file, ticker = %ticker, "ingest: unknown ticker");
            reports.push(report);
            continue;
        };
        let mut series = db
            .load_series(asset.id)
            .await
            .map_err(store_error)?
            .unwrap_or_default();
        report.rows_before = series.len();
        report.rows_after = series.len();
        let checked = parse_file(path, rules).and_then(|rows| {
            let pairs: Vec<(i32, f64)> = rows.iter().map(|&(d, c, _)| (d, c)).collect();
            let mut merged = series.clone();
            merged.merge(&pairs);
            let days: Vec<i32> = pairs.iter().map(|&(d, _)| d).collect();
            match rules.check_history(&merged, &days) {
                Ok(()) => Ok((pairs.len(), merged)),
                Err(refusal) => Err(match refusal.day {
                    Some(day) => IngestError::Row {
                        file: file.clone(),
                        line: rows[days.binary_search(&day).expect("a new row")].2,
                        message: format!("{} (the neighbouring row is stored)", refusal.message),
                    },
                    None => IngestError::File {
                        file: file.clone(),
                        message: format!(
                            "{} ({} stored, {} in the file)",
                            refusal.message,
                            series.len(),
                            rows.len()
                        ),
                    },
                }),
            }
        });
        let (rows_in_file, merged) = match checked {
            Ok(ok) => ok,
            Err(e) => {
                tracing::warn!(file = %file, ticker = %ticker, error = %e, "ingest: file rejected");
                report.outcome = Err(e.to_string());
                reports.push(report);
                continue;
            }
        };
        report.rows_in_file = rows_in_file;
        series = merged;
        db.store_series(&[(asset.id, &series, DataSource::Ingested)])
            .await
            .map_err(store_error)?;
        report.rows_after = series.len();
        tracing::info!(
            file = %file,
            ticker = %ticker,
            rows_in_file = report.rows_in_file,
            rows_after = report.rows_after,
            "ingest: stored"
        );
        reports.push(report);
    }
    Ok(reports)
}

/// Every `*.csv` file directly in `dir` (extension case-insensitive, hidden
/// files skipped), sorted by path, each paired with its ticker = the file
/// name without the `.csv` extension: `BTC-USD.csv` → `BTC-USD`,
/// `7203.T.csv` → `7203.T`. Yahoo symbols such as `^GSPC` and `EURUSD=X`
/// are valid file names on Linux, macOS and Windows, so `^GSPC.csv` and
/// `EURUSD=X.csv` name those tickers directly.
pub fn files_in_dir(dir: &Path) -> Result<Vec<(PathBuf, String)>, IngestError> {
    let io_error = |source| IngestError::Io {
        file: dir.display().to_string(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        let is_csv = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        if !is_csv || !path.is_file() {
            continue;
        }
        let Some(stem) = path.file_stem() else {
            continue;
        };
        let Some(ticker) = stem.to_str() else {
            return Err(file_error(
                &path.display().to_string(),
                "file name is not valid UTF-8, so it cannot name a ticker",
            ));
        };
        if ticker.is_empty() || ticker.starts_with('.') {
            continue;
        }
        let ticker = ticker.to_string();
        out.push((path, ticker));
    }
    out.sort();
    Ok(out)
}

/// Positions of the recognised columns in a header.
struct Columns {
    date: usize,
    close: usize,
    /// Optional numeric columns that are present: (name, position).
    optional: Vec<(&'static str, usize)>,
}

impl Columns {
    fn from_header(name: &str, header: &csv::StringRecord) -> Result<Self, IngestError> {
        const KNOWN: [&str; 6] = ["date", "open", "high", "low", "close", "volume"];
        let line = header.position().map_or(1, |p| p.line() as usize);
        let header_error = |message: String| IngestError::Row {
            file: name.to_string(),
            line,
            message,
        };
        let mut found: [Option<usize>; 6] = [None; 6];
        for (idx, raw) in header.iter().enumerate() {
            // Spreadsheet exports often start with a byte-order mark.
            let field = raw
                .trim_start_matches('\u{feff}')
                .trim()
                .to_ascii_lowercase();
            if let Some(k) = KNOWN.iter().position(|&n| n == field) {
                if found[k].is_some() {
                    return Err(header_error(format!("column '{}' appears twice", KNOWN[k])));
                }
                found[k] = Some(idx);
            }
        }
        let required = |k: usize| {
            found[k].ok_or_else(|| {
                let names: Vec<&str> = header.iter().collect();
                header_error(format!(
                    "header has no '{}' column (found: {}); expected date,close with optional open,high,low,volume",
                    KNOWN[k],
                    names.join(",")
                ))
            })
        };
        let date = required(0)?;
        let close = required(4)?;
        let optional = [1, 2, 3, 5]
            .into_iter()
            .filter_map(|k| found[k].map(|idx| (KNOWN[k], idx)))
            .collect();
        Ok(Columns {
            date,
            close,
            optional,
        })
    }
}

/// A strict `YYYY-MM-DD` date (chrono alone would also take `2024-1-5`).
fn parse_date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    let shape_ok = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    if !shape_ok {
        return None;
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()
}

/// A finite number; the message names the column and the text.
fn parse_number(column: &str, text: &str) -> Result<f64, String> {
    if text.is_empty() {
        return Err(format!("{column} is empty"));
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("{column} '{text}' is not a finite number")),
        Err(_) => Err(format!("{column} '{text}' is not a number")),
    }
}

fn file_error(name: &str, message: &str) -> IngestError {
    IngestError::File {
        file: name.to_string(),
        message: message.to_string(),
    }
}

/// A reader-level failure (I/O, invalid UTF-8), with its line when known.
fn csv_error(name: &str, e: csv::Error) -> IngestError {
    match e.position() {
        Some(p) => IngestError::Row {
            file: name.to_string(),
            line: p.line() as usize,
            message: e.to_string(),
        },
        None => IngestError::File {
            file: name.to_string(),
            message: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use forecast_domain::Category;
    use forecast_store::{CatalogEntry, Database};

    fn day(s: &str) -> i32 {
        to_days(NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap())
    }

    fn entry(id: i64, ticker: &str) -> CatalogEntry {
        CatalogEntry {
            id,
            ticker: ticker.into(),
            name: format!("{ticker} test"),
            category: Category::UsStocks,
            exchange: String::new(),
            currency: "USD".into(),
            country: String::new(),
            sector: String::new(),
            industry: String::new(),
            website: String::new(),
            summary: String::new(),
            isin: String::new(),
            is_active: true,
            is_premium: false,
        }
    }

    async fn store(dir: &Path) -> Arc<dyn Database> {
        let url = format!("sqlite://{}", dir.join("ingest.db").display());
        let db = forecast_store::connect(&url).await.unwrap();
        db.upsert_catalog(&[entry(1, "AAA"), entry(2, "^GSPC")])
            .await
            .unwrap();
        db
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn parse(text: &str) -> Result<Vec<(i32, f64)>, IngestError> {
        parse_csv_reader("t.csv", text.as_bytes())
    }

    fn row_error(text: &str) -> (usize, String) {
        match parse(text) {
            Err(IngestError::Row { line, message, .. }) => (line, message),
            other => panic!("expected a row error, got {other:?}"),
        }
    }

    #[test]
    fn parses_any_column_order_case_and_optional_columns() {
        let rows = parse(
            "Volume,Close,Adj Close,DATE,open\n\
             100,10.5,10.4,2024-01-03,10\n\
             ,11,11,2024-01-02,\n",
        )
        .unwrap();
        assert_eq!(
            rows,
            vec![(day("2024-01-02"), 11.0), (day("2024-01-03"), 10.5)]
        );
        // CRLF line endings, quoted fields and a byte-order mark.
        let rows = parse("\u{feff}date,close\r\n\"2024-01-02\",\"1.5\"\r\n").unwrap();
        assert_eq!(rows, vec![(day("2024-01-02"), 1.5)]);
    }

    #[test]
    fn bad_rows_name_the_line_and_problem() {
        let (line, msg) = row_error("date,close\n2024-01-02,1\n2024-01-03,abc\n");
        assert_eq!((line, msg.as_str()), (3, "close 'abc' is not a number"));
        let e = parse("date,close\n2024-01-02,1\n2024-01-03,abc\n").unwrap_err();
        assert_eq!(e.to_string(), "t.csv line 3: close 'abc' is not a number");

        assert_eq!(row_error("date,close\n2024-01-02,0\n").0, 2);
        assert!(row_error("date,close\n2024-01-02,-3\n")
            .1
            .contains("greater than 0"));
        assert!(row_error("date,close\n2024-01-02,NaN\n")
            .1
            .contains("not a finite"));
        assert!(row_error("date,close\n2024-01-02,inf\n")
            .1
            .contains("not a finite"));
        assert_eq!(row_error("date,close\n2024-01-02,\n").1, "close is empty");
        assert!(row_error("date,close\n2024-1-2,5\n")
            .1
            .contains("YYYY-MM-DD"));
        assert!(row_error("date,close\n2024-02-30,5\n")
            .1
            .contains("not a valid"));
        assert!(row_error("date,close\n2024-02-03,5,7\n")
            .1
            .contains("fields"));
        let (line, msg) = row_error("date,open,close\n2024-02-03,x,5\n");
        assert_eq!((line, msg.as_str()), (2, "open 'x' is not a number"));
        let (line, msg) = row_error("date,close,volume\n\n2024-02-03,5,1e3\n2024-02-04,5,lots\n");
        assert_eq!((line, msg.as_str()), (4, "volume 'lots' is not a number"));
    }

    #[test]
    fn duplicate_dates_and_bad_headers_are_rejected() {
        let (line, msg) = row_error("date,close\n2024-01-02,1\n2024-01-03,2\n2024-01-02,3\n");
        assert_eq!(line, 4);
        assert_eq!(msg, "duplicate date 2024-01-02 (first on line 2)");
        let (line, msg) = row_error("date,price\n2024-01-02,1\n");
        assert_eq!(line, 1);
        assert!(msg.contains("no 'close' column"), "{msg}");
        assert!(row_error("close,Close,date\n").1.contains("appears twice"));
        assert!(matches!(parse(""), Err(IngestError::File { .. })));
        let e = parse("date,close\n").unwrap_err();
        assert_eq!(e.to_string(), "t.csv: no data rows after the header");
    }

    #[tokio::test]
    async fn ingest_merges_and_upserts_by_date() {
        let dir = tempfile::tempdir().unwrap();
        let db = store(dir.path()).await;
        let f1 = write(
            dir.path(),
            "AAA.csv",
            "date,close\n2024-01-02,10\n2024-01-03,11\n",
        );
        let reports = ingest_files(db.as_ref(), &[(f1, "AAA".into())], &Rules::default())
            .await
            .unwrap();
        assert_eq!(reports.len(), 1);
        assert!(reports[0].is_ok(), "{:?}", reports[0]);
        assert_eq!((reports[0].rows_in_file, reports[0].rows_after), (2, 2));

        // A second file overwrites 2024-01-03 and adds 2024-01-04.
        let f2 = write(
            dir.path(),
            "AAA2.csv",
            "date,close\n2024-01-04,12\n2024-01-03,11.5\n",
        );
        let reports = ingest_files(db.as_ref(), &[(f2, "AAA".into())], &Rules::default())
            .await
            .unwrap();
        assert_eq!(
            (reports[0].rows_before, reports[0].rows_after),
            (2, 3),
            "{:?}",
            reports[0]
        );
        let s = db.load_series(1).await.unwrap().unwrap();
        assert_eq!(
            s.dates,
            vec![day("2024-01-02"), day("2024-01-03"), day("2024-01-04")]
        );
        assert_eq!(s.closes, vec![10.0, 11.5, 12.0]);
        let a = db.asset_by_ticker("AAA").await.unwrap().unwrap();
        assert_eq!(a.data_source, DataSource::Ingested);
        assert_eq!(a.data_version, 2);
    }

    #[tokio::test]
    async fn bad_file_leaves_the_store_unchanged_and_others_proceed() {
        let dir = tempfile::tempdir().unwrap();
        let db = store(dir.path()).await;
        let good = write(dir.path(), "AAA.csv", "date,close\n2024-01-02,10\n");
        ingest_files(db.as_ref(), &[(good, "AAA".into())], &Rules::default())
            .await
            .unwrap();
        let before = db.asset_by_ticker("AAA").await.unwrap().unwrap();
        let series_before = db.load_series(1).await.unwrap();

        let bad = write(
            dir.path(),
            "bad.csv",
            "date,close\n2024-01-05,20\n2024-01-06,21\n2024-01-07,oops\n",
        );
        let other = write(dir.path(), "other.csv", "date,close\n2024-01-02,5\n");
        let reports = ingest_files(
            db.as_ref(),
            &[(bad.clone(), "AAA".into()), (other, "^GSPC".into())],
            &Rules::default(),
        )
        .await
        .unwrap();
        let msg = reports[0].outcome.clone().unwrap_err();
        assert_eq!(
            msg,
            format!("{} line 4: close 'oops' is not a number", bad.display())
        );
        assert_eq!((reports[0].rows_before, reports[0].rows_after), (1, 1));
        assert!(reports[1].is_ok(), "a bad file does not stop the others");

        let after = db.asset_by_ticker("AAA").await.unwrap().unwrap();
        assert_eq!(after.data_version, before.data_version, "no write happened");
        assert_eq!(db.load_series(1).await.unwrap(), series_before);
    }

    #[tokio::test]
    async fn unknown_ticker_is_reported_per_file() {
        let dir = tempfile::tempdir().unwrap();
        let db = store(dir.path()).await;
        let f = write(dir.path(), "NOPE.csv", "date,close\n2024-01-02,10\n");
        let reports = ingest_files(db.as_ref(), &[(f, "NOPE".into())], &Rules::default())
            .await
            .unwrap();
        let msg = reports[0].outcome.clone().unwrap_err();
        assert!(
            msg.contains("'NOPE'") && msg.contains("add it to the catalog first"),
            "{msg}"
        );
        assert_eq!(db.counts().await.unwrap().price_rows, 0);
    }

    fn rules(allow_jumps: bool) -> Rules {
        Rules::new(NaiveDate::from_ymd_opt(2026, 11, 26).unwrap(), allow_jumps)
    }

    fn refused(text: &str) -> String {
        match parse_csv_reader_with("t.csv", text.as_bytes(), &rules(false)) {
            Err(e) => e.to_string(),
            Ok(rows) => panic!("accepted {rows:?}"),
        }
    }

    #[test]
    fn implausible_rows_name_line_date_and_rule() {
        let e = refused("date,close\n2024-01-02,1\n9999-12-31,1\n");
        assert!(
            e.starts_with("t.csv line 3: date range rule: 9999-12-31"),
            "{e}"
        );
        let e = refused("date,close\n0001-01-01,1\n");
        assert!(
            e.starts_with("t.csv line 2: date range rule: 0001-01-01"),
            "{e}"
        );
        let e = refused("date,close\n2026-11-28,1\n");
        assert!(e.contains("line 2: date range rule: 2026-11-28"), "{e}");
        let e = refused("date,close\n2024-01-02,1\n2024-01-03,1e308\n");
        assert!(
            e.starts_with("t.csv line 3: price range rule: close 1e308 on 2024-01-03"),
            "{e}"
        );
        let e = refused("date,close\n2024-01-03,1e-320\n");
        assert!(e.contains("line 2: price range rule:"), "{e}");
        // Jumps between consecutive dates, whatever the order of the lines:
        // the later date's line is named.
        let e = refused("date,close\n2024-01-04,250\n2024-01-02,20\n2024-01-03,21\n");
        assert!(
            e.starts_with("t.csv line 2: jump rule: close 250 on 2024-01-04"),
            "{e}"
        );
        assert!(e.contains("21 on 2024-01-03"), "{e}");
        let ok = parse_csv_reader_with(
            "t.csv",
            "date,close\n2024-01-02,20\n2024-01-03,250\n".as_bytes(),
            &rules(true),
        );
        assert_eq!(ok.unwrap().len(), 2, "a forced jump is accepted");
    }

    #[test]
    fn files_over_the_length_are_refused_at_the_first_extra_row() {
        let mut text = String::from("date,close\n");
        let first = day("1850-01-01");
        for i in 0..=crate::plausible::MAX_ROWS as i32 {
            text.push_str(&format!(
                "{},1\n",
                forecast_domain::series::from_days(first + i)
            ));
        }
        let e = refused(&text);
        let line = crate::plausible::MAX_ROWS + 2;
        assert!(
            e.starts_with(&format!("t.csv line {line}: length rule: ")),
            "{e}"
        );
    }

    #[tokio::test]
    async fn a_jump_against_stored_rows_refuses_the_file_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let db = store(dir.path()).await;
        let good = write(dir.path(), "AAA.csv", "date,close\n2024-01-02,10\n");
        let r = ingest_files(db.as_ref(), &[(good, "AAA".into())], &rules(false))
            .await
            .unwrap();
        assert!(r[0].is_ok());
        let before = db.asset_by_ticker("AAA").await.unwrap().unwrap();
        let jump = write(
            dir.path(),
            "jump.csv",
            "date,close\n2024-01-04,120\n2024-01-03,101\n",
        );
        let files = [(jump.clone(), "AAA".to_string())];
        let r = ingest_files(db.as_ref(), &files, &rules(false))
            .await
            .unwrap();
        let msg = r[0].outcome.clone().unwrap_err();
        assert!(
            msg.starts_with(&format!(
                "{} line 3: jump rule: close 101 on 2024-01-03 is 10.1x the close 10 on 2024-01-02",
                jump.display()
            )),
            "{msg}"
        );
        let after = db.asset_by_ticker("AAA").await.unwrap().unwrap();
        assert_eq!(after.data_version, before.data_version, "nothing written");
        assert_eq!(db.load_series(1).await.unwrap().unwrap().len(), 1);

        let r = ingest_files(db.as_ref(), &files, &rules(true))
            .await
            .unwrap();
        assert!(r[0].is_ok(), "{:?}", r[0]);
        let s = db.load_series(1).await.unwrap().unwrap();
        assert_eq!(s.closes, vec![10.0, 101.0, 120.0]);
    }

    #[test]
    fn files_in_dir_takes_tickers_from_file_names() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "^GSPC.csv",
            "BTC-USD.CSV",
            "7203.T.csv",
            "notes.txt",
            ".hidden.csv",
        ] {
            write(dir.path(), name, "date,close\n");
        }
        std::fs::create_dir(dir.path().join("sub.csv")).unwrap();
        let files = files_in_dir(dir.path()).unwrap();
        let tickers: Vec<&str> = files.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(tickers, ["7203.T", "BTC-USD", "^GSPC"]);
        assert!(files_in_dir(&dir.path().join("missing")).is_err());
    }
}
