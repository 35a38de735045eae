//! The time of day as the host reads it: one [`Clock`] handed to every
//! service, job and store caller that decides something by the date or
//! the time (leases, windows, expiries, retries, schedules). A server runs
//! on the [`SystemClock`]; a test gives it a [`ManualClock`] and moves it
//! instead of sleeping. Elapsed time measured for metrics and logs stays on
//! `std::time::Instant`.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};

/// Where the host reads the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant, UTC.
    fn now(&self) -> DateTime<Utc>;

    /// The current instant in Unix seconds (the stores' time columns).
    fn timestamp(&self) -> i64 {
        self.now().timestamp()
    }

    /// The current instant in Unix milliseconds.
    fn timestamp_millis(&self) -> i64 {
        self.now().timestamp_millis()
    }

    /// Today's date, UTC.
    fn today(&self) -> NaiveDate {
        self.now().date_naive()
    }
}

/// A clock shared by the objects built over it.
pub type SharedClock = Arc<dyn Clock>;

/// The operating system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl SystemClock {
    /// The system clock as a [`SharedClock`].
    pub fn shared() -> SharedClock {
        Arc::new(SystemClock)
    }
}

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that stands still until it is set or advanced: tests move it
/// to let a lease, a window or a retry delay pass at once. Shared between
/// threads (an atomic count of microseconds since the epoch).
#[derive(Debug)]
pub struct ManualClock {
    micros: AtomicI64,
}

impl ManualClock {
    /// A clock standing at `at`.
    pub fn at(at: DateTime<Utc>) -> Arc<ManualClock> {
        Arc::new(ManualClock {
            micros: AtomicI64::new(at.timestamp_micros()),
        })
    }

    /// A clock standing at the system's current instant.
    pub fn starting_now() -> Arc<ManualClock> {
        ManualClock::at(Utc::now())
    }

    /// Moves the clock to `at` (backwards too).
    pub fn set(&self, at: DateTime<Utc>) {
        self.micros.store(at.timestamp_micros(), Ordering::SeqCst);
    }

    /// Moves the clock forward by `by` (backwards when negative).
    pub fn advance(&self, by: chrono::Duration) {
        let micros = by.num_microseconds().unwrap_or(i64::MAX);
        self.micros.fetch_add(micros, Ordering::SeqCst);
    }

    /// Moves the clock forward by `seconds`.
    pub fn advance_secs(&self, seconds: i64) {
        self.advance(chrono::Duration::seconds(seconds));
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_micros(self.micros.load(Ordering::SeqCst))
            .expect("a manual clock within chrono's range")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instant(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    #[test]
    fn a_manual_clock_moves_only_when_told() {
        let clock = ManualClock::at(instant("2026-03-01T23:59:59.500Z"));
        let first = clock.now();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(clock.now(), first, "it stands still");
        clock.advance(chrono::Duration::milliseconds(600));
        assert_eq!(clock.now(), instant("2026-03-02T00:00:00.100Z"));
        assert_eq!(clock.today().to_string(), "2026-03-02");
        assert_eq!(clock.timestamp(), 1_772_409_600);
        assert_eq!(clock.timestamp_millis(), 1_772_409_600_100);
        clock.advance_secs(-3_600);
        assert_eq!(clock.now(), instant("2026-03-01T23:00:00.100Z"));
        clock.set(instant("2030-01-01T00:00:00Z"));
        assert_eq!(clock.timestamp(), 1_893_456_000);
    }

    #[test]
    fn a_shared_manual_clock_is_one_clock_across_threads() {
        let clock = ManualClock::at(instant("2026-01-01T00:00:00Z"));
        let shared: SharedClock = clock.clone();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let clock = clock.clone();
                std::thread::spawn(move || {
                    for _ in 0..1_000 {
                        clock.advance_secs(1);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(shared.now(), instant("2026-01-01T01:06:40Z"));
    }

    #[test]
    fn the_system_clock_reads_the_wall_clock() {
        let (before, read, after) = (Utc::now(), SystemClock.now(), Utc::now());
        assert!(before <= read && read <= after);
        assert_eq!(SystemClock::shared().today(), Utc::now().date_naive());
    }
}
