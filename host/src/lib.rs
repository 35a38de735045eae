//! Forecast Engine host library.
