//! Presentation of results, with no I/O and no knowledge of HTTP: the
//! answer of a route in, a document out. [`tearsheet`] draws a backtest's
//! tear sheet as one offline HTML file.

pub mod tearsheet;
