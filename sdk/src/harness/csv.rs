//! The price files the harness reads: the format `forecast ingest` takes
//! (DESIGN §3), parsed by hand so the SDK needs no CSV crate.
//!
//! A header line naming the columns, then one row per day. `date` and
//! `close` are required; `open`, `high`, `low` and `volume` are optional
//! and, when present and non-empty, must be finite numbers. Names match
//! case-insensitively in any order; other columns are ignored. Dates are
//! `YYYY-MM-DD`, each at most once; rows need not be sorted. `close` must
//! be a finite number > 0. Blank lines are skipped; fields may be quoted
//! (without embedded commas).

use super::HarnessError;
use crate::date::parse_date;

/// `(dates, closes)` of a CSV text, sorted by date. `file` names the
/// source in errors; lines are 1-based, the header being line 1.
pub(crate) fn parse(file: &str, text: &str) -> Result<(Vec<i32>, Vec<f64>), HarnessError> {
    let row_error = |line: usize, message: String| HarnessError::Csv {
        file: file.to_string(),
        line,
        message,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((header_line, header)) = lines.next() else {
        return Err(HarnessError::File {
            file: file.to_string(),
            message: "file is empty".to_string(),
        });
    };
    let columns = Columns::of_header(header).map_err(|m| row_error(header_line, m))?;
    let mut rows: Vec<(i32, f64, usize)> = Vec::new();
    for (line, text) in lines {
        let (date, close) = columns.row(text).map_err(|m| row_error(line, m))?;
        rows.push((date, close, line));
    }
    if rows.is_empty() {
        return Err(HarnessError::File {
            file: file.to_string(),
            message: "no data rows after the header".to_string(),
        });
    }
    // Stable: among equal dates the earlier line comes first.
    rows.sort_by_key(|&(d, _, _)| d);
    if let Some(w) = rows.windows(2).find(|w| w[0].0 == w[1].0) {
        let (first, second) = (w[0].2.min(w[1].2), w[0].2.max(w[1].2));
        return Err(row_error(
            second,
            format!(
                "duplicate date {} (first on line {first})",
                crate::date::format_date(w[0].0)
            ),
        ));
    }
    Ok(rows.into_iter().map(|(d, c, _)| (d, c)).unzip())
}

/// Where the header puts the columns the harness reads.
struct Columns {
    /// The header's names, lower-cased: their count is every row's width.
    header: Vec<String>,
    date: usize,
    close: usize,
    /// The optional columns present, each checked to be a number when
    /// non-empty.
    optional: Vec<(&'static str, usize)>,
}

impl Columns {
    /// The columns of a header line; the error message is the header
    /// line's.
    fn of_header(line: &str) -> Result<Self, String> {
        let header: Vec<String> = fields(line.trim_start_matches('\u{feff}'))
            .map(|f| f.to_ascii_lowercase())
            .collect();
        let position = |name: &str| -> Result<Option<usize>, String> {
            let mut found = header.iter().enumerate().filter(|(_, h)| *h == name);
            let first = found.next().map(|(i, _)| i);
            if found.next().is_some() {
                return Err(format!("column '{name}' appears twice"));
            }
            Ok(first)
        };
        let required = |name: &str| -> Result<usize, String> {
            position(name)?.ok_or_else(|| {
                format!(
                    "header has no '{name}' column (found: {}); expected date,close with optional open,high,low,volume",
                    header.join(",")
                )
            })
        };
        let date = required("date")?;
        let close = required("close")?;
        let mut optional = Vec::new();
        for name in ["open", "high", "low", "volume"] {
            if let Some(i) = position(name)? {
                optional.push((name, i));
            }
        }
        Ok(Self {
            header,
            date,
            close,
            optional,
        })
    }

    /// The date and close of a data line; the error message is the line's.
    fn row(&self, text: &str) -> Result<(i32, f64), String> {
        let rec: Vec<String> = fields(text).collect();
        if rec.len() != self.header.len() {
            return Err(format!(
                "expected {} fields as in the header, found {}",
                self.header.len(),
                rec.len()
            ));
        }
        let date_text = &rec[self.date];
        let date = parse_date(date_text).ok_or_else(|| {
            if date_text.is_empty() {
                "date is empty".to_string()
            } else {
                format!("date '{date_text}' is not a valid YYYY-MM-DD date")
            }
        })?;
        let close = number("close", &rec[self.close])?;
        if close <= 0.0 {
            return Err(format!(
                "close '{}' must be greater than 0",
                rec[self.close]
            ));
        }
        for &(name, i) in &self.optional {
            if !rec[i].is_empty() {
                number(name, &rec[i])?;
            }
        }
        Ok((date, close))
    }
}

/// The trimmed fields of a line, surrounding double quotes removed.
fn fields(line: &str) -> impl Iterator<Item = String> + '_ {
    line.split(',').map(|f| {
        let f = f.trim();
        let f = f
            .strip_prefix('"')
            .and_then(|f| f.strip_suffix('"'))
            .unwrap_or(f);
        f.trim().to_string()
    })
}

/// A finite number; the message names the column and the text.
fn number(column: &str, text: &str) -> Result<f64, String> {
    if text.is_empty() {
        return Err(format!("{column} is empty"));
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("{column} '{text}' is not a finite number")),
        Err(_) => Err(format!("{column} '{text}' is not a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse("prices.csv", text).unwrap_err().to_string()
    }

    #[test]
    fn good_files_in_any_column_order() {
        let (d, c) = parse("a.csv", "date,close\n2024-01-02,10\n2024-01-03,11.5\n").unwrap();
        assert_eq!(d, [19_724, 19_725]);
        assert_eq!(c, [10.0, 11.5]);

        let text = "\u{feff}Volume, Close ,HIGH,Date,low,open,Adj Close\n\
                    100,5.5,6,2024-01-03,5,5.2,5.4\n\
                    \n\
                    \"200\",\"5\",,2024-01-02,4.5,,x\r\n";
        let (d, c) = parse("b.csv", text).unwrap();
        assert_eq!(d, [19_724, 19_725], "sorted by date");
        assert_eq!(c, [5.0, 5.5]);
    }

    #[test]
    fn bad_rows_name_file_and_line() {
        assert_eq!(
            err("date,close\n2024-01-02,10\n2024-01-03,abc\n"),
            "prices.csv line 3: close 'abc' is not a number"
        );
        assert_eq!(
            err("date,close\n2024-01-02,10\n2024-02-30,1\n"),
            "prices.csv line 3: date '2024-02-30' is not a valid YYYY-MM-DD date"
        );
        assert_eq!(
            err("date,close\n2024-01-02,0\n"),
            "prices.csv line 2: close '0' must be greater than 0"
        );
        assert_eq!(
            err("date,close\n2024-01-02,1\n2024-01-03\n"),
            "prices.csv line 3: expected 2 fields as in the header, found 1"
        );
        assert_eq!(
            err("date,close,volume\n2024-01-02,1,lots\n"),
            "prices.csv line 2: volume 'lots' is not a number"
        );
        assert_eq!(
            err("date,close\n2024-01-03,1\n2024-01-02,1\n2024-01-03,2\n"),
            "prices.csv line 4: duplicate date 2024-01-03 (first on line 2)"
        );
        assert_eq!(
            err("date,close\n2024-01-02,inf\n"),
            "prices.csv line 2: close 'inf' is not a finite number"
        );
    }

    #[test]
    fn missing_columns_and_empty_files() {
        assert_eq!(
            err("date,open\n2024-01-02,10\n"),
            "prices.csv line 1: header has no 'close' column (found: date,open); \
             expected date,close with optional open,high,low,volume"
        );
        assert_eq!(
            err("date,close,Close\n2024-01-02,1,1\n"),
            "prices.csv line 1: column 'close' appears twice"
        );
        assert_eq!(err(""), "prices.csv: file is empty");
        assert_eq!(
            err("date,close\n\n"),
            "prices.csv: no data rows after the header"
        );
    }
}
