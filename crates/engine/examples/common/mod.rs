//! What the profiling examples share: a price file of `data/prices` as the
//! engine's input.

/// The dates and closes of a price CSV's text (header, then `…,close` in the
/// fifth column). The dates are a weekday calendar stand-in: the engine only
/// needs increasing days.
pub fn series(text: &str) -> (Vec<i32>, Vec<f64>) {
    let (mut dates, mut closes) = (Vec::new(), Vec::new());
    for (i, line) in text.lines().skip(1).enumerate() {
        let cols: Vec<&str> = line.split(',').collect();
        dates.push(i as i32 * 7 / 5);
        closes.push(cols[4].parse::<f64>().unwrap());
    }
    (dates, closes)
}
