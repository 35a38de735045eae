//! A refusal expected: `api.ranking("limit=0").await.refused().assert(400,
//! &["limit"])`, naming what was answered instead when it was not refused
//! (not the whole answer, as `unwrap_err` would).

use crate::Refusal;

/// The refusal of an answer that must be one.
pub trait Refused {
    /// The refusal; panics when the request was answered.
    fn refused(self) -> Refusal;
}

impl<T> Refused for Result<T, Refusal> {
    #[track_caller]
    fn refused(self) -> Refusal {
        match self {
            Ok(_) => panic!(
                "answered with a {}, not refused",
                std::any::type_name::<T>()
            ),
            Err(refusal) => refusal,
        }
    }
}
