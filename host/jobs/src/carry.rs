//! What one run's grade of an asset leaves for the next (decision 0084):
//! the month-ends it graded, a digest of the prices up to the last of them
//! and of the pooled history before it, and the forecast inputs of every
//! return-metric set at those month-ends (the current bucket's median and
//! its independent episodes, as the engine reported them, at full
//! precision).
//!
//! The engine's state at a month-end and the scorer's forecast there see
//! only the rows up to that month-end and the pooled history before its
//! month (WIT `states-at`, `episodes-at`, `forecasting`). So when both
//! digests still match, the next run of the same engine and scorer asks
//! the engine only for the new month-ends and today, keeps the stored rows
//! of the old month-ends (their realised returns recomputed, as they
//! mature) and gives the scorer the carried inputs: its rows come out
//! byte for byte as a rebuild's.

use forecast_domain::series::PriceSeries;
use sha2::{Digest, Sha256};

use forecast_plugins::segmentation::AnalysisParams;
use forecast_services::forecast::{Pool, PooledTable, SetInputs};

/// Format and meaning of a carry. Raise it whenever the host's grade
/// history (month-ends, rows, forecast points) is computed differently:
/// older carries are then ignored and every history is rebuilt once.
pub const VERSION: u8 = 1;

/// One asset's carry; see the module.
#[derive(Debug, Clone, PartialEq)]
pub struct Carry {
    /// [`params_digest`] of the parameter sets the engine was given (they
    /// depend on the whole series: its periods per year).
    pub params: [u8; 32],
    /// [`prefix_digest`] of the rows up to the last month-end.
    pub prefix: [u8; 32],
    /// [`PooledTable::digest_before`] the last month-end's month.
    pub pooled: [u8; 32],
    /// Row indices of the month-ends graded.
    pub ends: Vec<u32>,
    /// Per return-metric set (in query order), its inputs at `ends`.
    pub sets: Vec<SetInputs>,
}

/// SHA-256 of the dates and closes of rows `0..=through` of `s`.
pub fn prefix_digest(s: &PriceSeries, through: usize) -> [u8; 32] {
    let mut h = Sha256::new();
    for (d, c) in s.dates[..=through].iter().zip(&s.closes[..=through]) {
        h.update(d.to_le_bytes());
        h.update(c.to_bits().to_le_bytes());
    }
    h.finalize().into()
}

/// SHA-256 of the engine parameter sets (their exact values, in order).
pub fn params_digest(params: &[AnalysisParams]) -> [u8; 32] {
    // `Debug` prints every float as the shortest text that reads back to
    // the same bits, so equal text is equal values.
    Sha256::digest(format!("{params:?}")).into()
}

/// What a carry is checked against: the parameter sets, the pooled history
/// and the pool of the asset's prices.
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    /// The parameter sets of today's grade.
    pub params: &'a [AnalysisParams],
    /// Today's pooled history.
    pub table: &'a PooledTable,
    /// The asset's pool.
    pub pool: Pool,
}

impl Carry {
    /// The carry of a grade of `s` at the month-ends `ends` (none: nothing
    /// to carry), with each return set's inputs at those ends.
    pub fn of(
        s: &PriceSeries,
        ends: &[u32],
        on: Inputs<'_>,
        sets: Vec<SetInputs>,
    ) -> Option<Carry> {
        let (table, pool) = (on.table, on.pool);
        let last = *ends.last()?;
        Some(Carry {
            params: params_digest(on.params),
            prefix: prefix_digest(s, last as usize),
            pooled: table.digest_before(pool, s.dates[last as usize]),
            ends: ends.to_vec(),
            sets,
        })
    }

    /// How many leading month-ends of `ends` (today's month-ends of `s`)
    /// this carry stands for: all of its own when the rows up to its last
    /// month-end and the pooled history before it are unchanged, else none.
    pub fn reusable(&self, s: &PriceSeries, ends: &[u32], on: Inputs<'_>) -> usize {
        let (table, pool) = (on.table, on.pool);
        let Some(&last) = self.ends.last() else {
            return 0;
        };
        let same_ends = ends.get(..self.ends.len()) == Some(&self.ends[..]);
        let complete = self.sets.iter().all(|set| {
            set.medians.len() == self.ends.len() && set.episodes.len() == self.ends.len()
        });
        if !same_ends
            || !complete
            || params_digest(on.params) != self.params
            || prefix_digest(s, last as usize) != self.prefix
            || table.digest_before(pool, s.dates[last as usize]) != self.pooled
        {
            return 0;
        }
        self.ends.len()
    }

    /// The stored form: the version byte, the three digests, the number of
    /// month-ends (u32) and their row indices (u32), the number of sets
    /// (u8) and per set the medians (f64) then the episodes (u32), all
    /// little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let n = self.ends.len();
        let mut out = Vec::with_capacity(102 + n * 4 + self.sets.len() * n * 12);
        out.push(VERSION);
        out.extend(self.params);
        out.extend(self.prefix);
        out.extend(self.pooled);
        out.extend((n as u32).to_le_bytes());
        for e in &self.ends {
            out.extend(e.to_le_bytes());
        }
        out.push(self.sets.len() as u8);
        for set in &self.sets {
            for m in &set.medians {
                out.extend(m.to_bits().to_le_bytes());
            }
            for e in &set.episodes {
                out.extend(e.to_le_bytes());
            }
        }
        out
    }

    /// The carry of [`Carry::encode`]d bytes; `None` for another version
    /// or bytes that are not a whole carry.
    pub fn decode(bytes: &[u8]) -> Option<Carry> {
        let mut r = Reader(bytes);
        if r.take(1)?[0] != VERSION {
            return None;
        }
        let params = r.take(32)?.try_into().ok()?;
        let prefix = r.take(32)?.try_into().ok()?;
        let pooled = r.take(32)?.try_into().ok()?;
        let n = r.u32()? as usize;
        let ends = (0..n).map(|_| r.u32()).collect::<Option<Vec<_>>>()?;
        let count = r.take(1)?[0];
        let mut sets = Vec::with_capacity(usize::from(count));
        for _ in 0..count {
            let medians = (0..n)
                .map(|_| {
                    Some(f64::from_bits(u64::from_le_bytes(
                        r.take(8)?.try_into().ok()?,
                    )))
                })
                .collect::<Option<Vec<_>>>()?;
            let episodes = (0..n).map(|_| r.u32()).collect::<Option<Vec<_>>>()?;
            sets.push(SetInputs { medians, episodes });
        }
        r.0.is_empty().then_some(Carry {
            params,
            prefix,
            pooled,
            ends,
            sets,
        })
    }
}

/// Reads fixed-size fields off the front of a byte slice.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forecast_domain::series::to_days;

    fn series(n: usize) -> PriceSeries {
        let start = to_days("2003-01-01".parse().unwrap());
        PriceSeries {
            dates: (0..n as i32).map(|i| start + i).collect(),
            closes: (0..n).map(|i| 50.0 + (i as f64 * 0.1).cos()).collect(),
        }
    }

    fn on(table: &PooledTable, pool: Pool) -> Inputs<'_> {
        Inputs {
            params: &[],
            table,
            pool,
        }
    }

    fn carry_of(s: &PriceSeries, table: &PooledTable) -> Carry {
        let ends = forecast_services::track_record::month_ends(s);
        let sets = vec![
            SetInputs {
                medians: ends.iter().map(|&e| f64::from(e) / 7.0).collect(),
                episodes: ends.iter().map(|&e| e % 11).collect(),
            };
            5
        ];
        Carry::of(s, &ends, on(table, Pool::Observed), sets).unwrap()
    }

    #[test]
    fn a_carry_survives_its_encoding_bit_for_bit() {
        let s = series(900);
        let c = carry_of(&s, &PooledTable::default());
        assert_eq!(Carry::decode(&c.encode()), Some(c.clone()));
        let bytes = c.encode();
        assert_eq!(Carry::decode(&bytes[..bytes.len() - 1]), None, "truncated");
        let mut other = bytes.clone();
        other[0] = VERSION + 1;
        assert_eq!(Carry::decode(&other), None, "another version");
        assert_eq!(
            Carry::decode(&[bytes, vec![0]].concat()),
            None,
            "trailing bytes"
        );
    }

    /// New rows after the last month-end keep a carry; a changed price or
    /// date before it, or a changed pooled history, drops it.
    #[test]
    fn a_carry_stands_only_for_unchanged_prices_and_pooled_history() {
        let table = PooledTable::new([(
            Pool::Observed,
            90,
            forecast_services::forecast::contribution(&series(1400), 90),
        )]);
        let s = series(900);
        let c = carry_of(&s, &table);
        let n = c.ends.len();
        assert!(n > 10);
        let longer = series(960);
        let ends = forecast_services::track_record::month_ends(&longer);
        assert!(ends.len() > n);
        assert_eq!(c.reusable(&longer, &ends, on(&table, Pool::Observed)), n);
        // An old price corrected.
        let mut fixed = longer.clone();
        fixed.closes[400] *= 1.001;
        assert_eq!(c.reusable(&fixed, &ends, on(&table, Pool::Observed)), 0);
        // Another pool, another pooled history.
        assert_eq!(c.reusable(&longer, &ends, on(&table, Pool::Synthetic)), 0);
        let mut older = series(1400);
        older.closes[200] *= 1.01;
        let moved = PooledTable::new([(
            Pool::Observed,
            90,
            forecast_services::forecast::contribution(&older, 90),
        )]);
        assert_eq!(c.reusable(&longer, &ends, on(&moved, Pool::Observed)), 0);
        // A row removed before the last month-end moves every month-end.
        let mut gap = longer.clone();
        gap.dates.remove(100);
        gap.closes.remove(100);
        let gap_ends = forecast_services::track_record::month_ends(&gap);
        assert_eq!(c.reusable(&gap, &gap_ends, on(&table, Pool::Observed)), 0);
    }

    /// The engine's parameters depend on the whole series (its periods per
    /// year): other parameters, no carry.
    #[test]
    fn a_carry_stands_only_for_the_same_engine_parameters() {
        let table = PooledTable::default();
        let s = series(900);
        let ends = forecast_services::track_record::month_ends(&s);
        let q = forecast_services::analysis::AnalysisQuery::default();
        let weekdays = [forecast_services::analysis::engine_params(&q, 252)];
        let every_day = [forecast_services::analysis::engine_params(&q, 365)];
        let with = |params| Inputs {
            params,
            table: &table,
            pool: Pool::Observed,
        };
        let c = Carry::of(&s, &ends, with(&weekdays), Vec::new()).unwrap();
        assert_eq!(c.reusable(&s, &ends, with(&weekdays)), ends.len());
        assert_eq!(c.reusable(&s, &ends, with(&every_day)), 0);
    }
}
