//! Long-lived work above the services, started by the server or the CLI
//! rather than by a request: the daily grading run, its scheduler and the
//! month-end histories a run keeps ([`grading`], [`carry`]), and the
//! alerts: their rules, evaluation per state of the data and delivery by
//! webhook and e-mail ([`alerts`]). Like the services, it knows nothing of
//! HTTP and answers with [`forecast_services::error::Error`].

pub mod alerts;
pub mod carry;
pub mod grading;
