//! Live verdicts of two scorer versions back to back (issue 39's "the
//! verdict's speed does not worsen by more than 20 %"): verdicts with
//! non-default segment counts, which no grading run stored, so each is
//! computed for its request — the engine's walk, the forecast and the
//! evidence for scorer 2.x, the state, the grade and the evidence for 1.0.0.

use std::time::{Duration, Instant};

/// Tickers asked about: the real histories the bench universe keeps active.
const TICKERS: [&str; 5] = ["AAPL", "%5EGSPC", "%5EIXIC", "%5EVIX", "CL%3DF"];
/// Segment counts other than the graded 20.
const SEGMENTS: [u32; 8] = [11, 13, 17, 19, 23, 29, 31, 38];
/// Rounds over every (ticker, segments) per turn of a version.
const ROUNDS: usize = 3;

/// Times of one version's live verdicts.
pub struct Times {
    /// The version.
    pub version: String,
    /// Every request's time, sorted.
    pub sorted: Vec<Duration>,
}

impl Times {
    /// The mean.
    pub fn mean(&self) -> Duration {
        self.sorted.iter().sum::<Duration>() / self.sorted.len().max(1) as u32
    }

    /// The median.
    pub fn median(&self) -> Duration {
        self.sorted[self.sorted.len() / 2]
    }
}

/// Activates scorer `version` on `db` (forced: the bench compares, it does
/// not promote) and waits until `base` answers with it.
async fn activate(db: &str, base: &str, key: &str, version: &str) {
    super::forecast(
        db,
        &[
            "plugin", "activate", "scorer", "default", version, "--force", "--reason", "bench",
        ],
    );
    let client = reqwest::Client::new();
    for _ in 0..100 {
        let v: serde_json::Value = client
            .get(format!("{base}/api/analysis/AAPL/verdict?num_segments=12"))
            .bearer_auth(key)
            .send()
            .await
            .expect("verdict")
            .json()
            .await
            .expect("json");
        if v["metadata"]["scorer_version"] == version {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server did not switch to scorer {version}");
}

/// One turn: every (ticker, segments) `ROUNDS` times, one request at a
/// time on one keep-alive connection.
async fn turn(base: &str, key: &str) -> Vec<Duration> {
    let client = reqwest::Client::new();
    let mut out = Vec::new();
    for _ in 0..ROUNDS {
        for t in TICKERS {
            for n in SEGMENTS {
                let url = format!("{base}/api/analysis/{t}/verdict?num_segments={n}");
                let started = Instant::now();
                let r = client
                    .get(url)
                    .bearer_auth(key)
                    .send()
                    .await
                    .expect("verdict");
                assert_eq!(r.status(), 200, "{t} at {n} segments");
                let body: serde_json::Value = r.json().await.expect("json");
                out.push(started.elapsed());
                assert_eq!(body["metadata"]["from_cache"], false, "a live verdict");
            }
        }
    }
    out
}

/// Live verdicts under scorer `a` and `b`, alternating a, b, a, b (after
/// one warm-up turn each: the first live verdict of a process builds the
/// pooled table), so drift of a shared machine falls on both.
pub async fn scorer_ab(db: &str, base: &str, key: &str, a: &str, b: &str) -> (Times, Times) {
    let mut times = [Vec::new(), Vec::new()];
    for version in [a, b] {
        activate(db, base, key, version).await;
        turn(base, key).await;
    }
    for _ in 0..2 {
        for (i, version) in [a, b].into_iter().enumerate() {
            activate(db, base, key, version).await;
            times[i].extend(turn(base, key).await);
        }
    }
    let [mut ta, mut tb] = times;
    ta.sort();
    tb.sort();
    (
        Times {
            version: a.into(),
            sorted: ta,
        },
        Times {
            version: b.into(),
            sorted: tb,
        },
    )
}
