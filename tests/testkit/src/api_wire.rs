//! The wire itself: an answer read as raw JSON and as its `forecast-api`
//! type, for the tests whose subject is the wire format (every field of
//! the spec present, with its type, and nothing else).

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::{Api, Refusal};

/// `raw` as `T`, asserting that `T` holds all of it: written back, it is
/// `raw` again. So every field on the wire is one of `T`'s, of its type
/// (a number, a string, `null` for an absent option, …), and every field
/// of `T` is on the wire (an option as `null`, unless `T` skips it when
/// absent); the first difference is named by its path.
pub fn exactly<T: Serialize + DeserializeOwned>(raw: &Value) -> T {
    let typed: T = serde_json::from_value(raw.clone())
        .unwrap_or_else(|e| panic!("not the documented type: {e}: {raw:.300}"));
    let again = serde_json::to_value(&typed).expect("serialize the typed answer");
    if let Some(at) = first_difference(raw, &again, "") {
        panic!("the wire and its type differ at {at}");
    }
    typed
}

/// The path of the first place `wire` and `typed` differ, with both
/// values; `None` when they are equal.
fn first_difference(wire: &Value, typed: &Value, path: &str) -> Option<String> {
    match (wire, typed) {
        (Value::Object(w), Value::Object(t)) => {
            for key in w.keys().chain(t.keys()) {
                let here = format!("{path}.{key}");
                match (w.get(key), t.get(key)) {
                    (Some(a), Some(b)) => {
                        if let Some(at) = first_difference(a, b, &here) {
                            return Some(at);
                        }
                    }
                    (Some(_), None) => {
                        return Some(format!("{here}: on the wire, not in the type"))
                    }
                    (None, _) => return Some(format!("{here}: in the type, not on the wire")),
                }
            }
            None
        }
        (Value::Array(w), Value::Array(t)) if w.len() == t.len() => w
            .iter()
            .zip(t)
            .enumerate()
            .find_map(|(i, (a, b))| first_difference(a, b, &format!("{path}[{i}]"))),
        _ if wire == typed => None,
        _ => Some(format!(
            "{path}: {wire:.100} on the wire, {typed:.100} typed"
        )),
    }
}

impl Api {
    /// `GET path` as `T`, asserting the answer is exactly `T` (see
    /// [`exactly`]); also the raw answer.
    pub async fn get_exactly<T: Serialize + DeserializeOwned>(
        &self,
        path: &str,
    ) -> Result<(T, Value), Refusal> {
        let raw: Value = self.get(path).await?;
        Ok((exactly(&raw), raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Serialize, Deserialize)]
    struct T {
        a: u32,
        b: Option<f64>,
    }

    #[test]
    fn the_wire_must_be_the_type_exactly() {
        let t: T = exactly(&serde_json::json!({"a": 1, "b": null}));
        assert_eq!((t.a, t.b), (1, None));
        for (raw, at) in [
            (serde_json::json!({"a": 1}), ".b: in the type"),
            (
                serde_json::json!({"a": 1, "b": 2.5, "c": 0}),
                ".c: on the wire",
            ),
        ] {
            let panicked = std::panic::catch_unwind(|| exactly::<T>(&raw)).unwrap_err();
            let message = panicked.downcast_ref::<String>().unwrap();
            assert!(message.contains(at), "{message}");
        }
    }
}
