//! Answers kept in memory as the bytes they are served as: the JSON body,
//! and the same compressed with brotli once, when a client that offers
//! `br` first asks for it. Compressing a large kept answer per request
//! costs milliseconds of CPU each time (the 561 KB catalog took 3.4 ms).

use std::sync::OnceLock;

use bytes::Bytes;

use crate::error::Error;

/// The brotli quality of a kept body (the compression layer uses 4 per
/// request; once per answer affords more).
const BROTLI_QUALITY: i32 = 9;

/// A JSON body, and its brotli compression once asked for.
pub struct Body {
    plain: Bytes,
    brotli: OnceLock<Bytes>,
}

impl Body {
    /// `plain`, not compressed yet.
    pub fn new(plain: Bytes) -> Self {
        Body {
            plain,
            brotli: OnceLock::new(),
        }
    }

    /// The JSON body.
    pub fn plain(&self) -> Bytes {
        self.plain.clone()
    }

    /// The JSON body compressed with brotli.
    pub fn brotli(&self) -> Bytes {
        self.brotli
            .get_or_init(|| {
                let mut out = Vec::with_capacity(self.plain.len() / 8);
                let params = brotli::enc::BrotliEncoderParams {
                    quality: BROTLI_QUALITY,
                    ..Default::default()
                };
                brotli::BrotliCompress(&mut &self.plain[..], &mut out, &params)
                    .expect("compressing into memory cannot fail");
                Bytes::from(out)
            })
            .clone()
    }
}

/// An answer kept in memory, with its body made once, when first served.
pub struct Served<T> {
    value: T,
    body: OnceLock<Body>,
}

impl<T: serde::Serialize> Served<T> {
    /// `value`, not serialised yet.
    pub fn new(value: T) -> Self {
        Served {
            value,
            body: OnceLock::new(),
        }
    }

    /// The value itself (e.g. to write it in another format).
    pub fn value(&self) -> &T {
        &self.value
    }

    /// The body of the value.
    pub fn body(&self) -> Result<&Body, Error> {
        if let Some(b) = self.body.get() {
            return Ok(b);
        }
        let json = serde_json::to_vec(&self.value)
            .map_err(|e| Error::Internal(format!("the answer does not serialise: {e}")))?;
        Ok(self.body.get_or_init(|| Body::new(Bytes::from(json))))
    }
}

impl<T> std::ops::Deref for Served<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn the_compressed_body_decodes_to_the_plain_one() {
        let served = Served::new(serde_json::json!({ "rows": vec!["a row"; 1_000] }));
        let body = served.body().unwrap();
        let (plain, br) = (body.plain(), body.brotli());
        assert!(
            br.len() * 10 < plain.len(),
            "{} of {}",
            br.len(),
            plain.len()
        );
        let mut out = Vec::new();
        brotli::Decompressor::new(&br[..], 4096)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, plain);
        assert!(std::ptr::eq(served.body().unwrap(), body), "made once");
    }
}
