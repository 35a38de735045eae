//! The default scorer (DESIGN.md §5): a grade letter and a score in
//! [0, 100] from an analysis state.
//!
//! `z = median_return / max(best_error, 1e-6)`; `win` = the current
//! segment's win rate (0.5 when it has none);
//! `score = 100 · (0.6 · (0.5 + 0.5 · tanh z) + 0.4 · win)`, capped at 50
//! with insufficient data. Letters: A >= 80, B >= 65, C >= 50, D >= 35, F.
//!
//! The formula is plain Rust (`grade`) so it is unit-tested natively.

#[cfg(target_arch = "wasm32")]
mod component {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "scorer",
    });

    use exports::forecast::plugins::scoring::{Grade, Guest, ScoreInput};

    struct Component;

    impl Guest for Component {
        fn scorer_version() -> String {
            env!("CARGO_PKG_VERSION").to_string()
        }

        fn score(inputs: Vec<ScoreInput>) -> Vec<Grade> {
            inputs
                .into_iter()
                .map(|i| {
                    let (letter, score) = super::grade(
                        i.median_return,
                        i.best_error,
                        i.win_rate,
                        i.insufficient_data,
                    );
                    Grade {
                        letter: letter.to_string(),
                        score,
                    }
                })
                .collect()
        }
    }

    export!(Component);
}

/// The letter and score of one state.
pub fn grade(
    median_return: f64,
    best_error: f64,
    win_rate: Option<f64>,
    insufficient_data: bool,
) -> (&'static str, f64) {
    let z = median_return / best_error.max(1e-6);
    let win = win_rate.unwrap_or(0.5);
    let mut score = 100.0 * (0.6 * (0.5 + 0.5 * z.tanh()) + 0.4 * win);
    if !score.is_finite() {
        score = 0.0;
    }
    if insufficient_data {
        score = score.min(50.0);
    }
    let letter = match score {
        s if s >= 80.0 => "A",
        s if s >= 65.0 => "B",
        s if s >= 50.0 => "C",
        s if s >= 35.0 => "D",
        _ => "F",
    };
    (letter, score)
}

#[cfg(test)]
mod tests {
    use super::grade;

    #[test]
    fn formula_and_letters() {
        // z = 0, win 0.5: 100 · (0.6 · 0.5 + 0.4 · 0.5) = 50 → C.
        assert_eq!(grade(0.0, 0.1, None, false), ("C", 50.0));
        // Strong signal and high win rate.
        let (l, s) = grade(0.2, 0.05, Some(0.9), false);
        assert!((s - 100.0 * (0.6 * (0.5 + 0.5 * 4f64.tanh()) + 0.4 * 0.9)).abs() < 1e-12);
        assert_eq!(l, "A");
        // The same, capped by insufficient data.
        assert_eq!(grade(0.2, 0.05, Some(0.9), true), ("C", 50.0));
        // Strongly negative: F.
        assert_eq!(grade(-0.3, 0.05, Some(0.1), false).0, "F");
        // A zero error does not divide by zero.
        assert!(grade(0.01, 0.0, Some(0.6), false).1.is_finite());
        // Boundaries.
        assert_eq!(grade(0.0, 1.0, Some(0.75), false).0, "C"); // 30 + 30 = 60
        assert_eq!(grade(0.0, 1.0, Some(0.875), false).0, "B"); // 30 + 35 = 65
        assert_eq!(grade(0.0, 1.0, Some(0.125), false).0, "D"); // 30 + 5 = 35
    }
}
